package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// The wit-bindgen this build is written for (its Go generator and the
// go.bytecodealliance.org/pkg version its code imports).
const witBindgenVersion = "0.63."

const installHint = "cargo install wit-bindgen-cli --locked --version 0.63.0 --no-default-features --features go"

type bindgenTool struct{ path, version string }

// witBindgen finds wit-bindgen 0.63.x (WIT_BINDGEN, else PATH).
func witBindgen() (bindgenTool, error) {
	path, err := tool("WIT_BINDGEN", "wit-bindgen")
	if err != nil {
		return bindgenTool{}, fmt.Errorf("%w (install it with `%s`)", err, installHint)
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return bindgenTool{}, fmt.Errorf("%s --version: %w", path, err)
	}
	fields := strings.Fields(string(out))
	version := fields[len(fields)-1]
	if !strings.HasPrefix(version, witBindgenVersion) {
		return bindgenTool{}, fmt.Errorf("%s is wit-bindgen %s; this SDK needs %sx (`%s`)", path, version, witBindgenVersion, installHint)
	}
	return bindgenTool{path, version}, nil
}

// witRuntimePkg is the directory of the go.bytecodealliance.org/pkg module
// the generated code imports: CAPSTAN_GO_WIT_PKG, else the copy shipped
// inside the wit-bindgen-go crate of the same version in cargo's registry
// (the Go module proxy is not needed).
func witRuntimePkg(version string) (string, error) {
	if dir := os.Getenv("CAPSTAN_GO_WIT_PKG"); dir != "" {
		return dir, nil
	}
	pattern := filepath.Join(cargoHome(), "registry", "src", "*", "wit-bindgen-go-"+version, "src", "pkg")
	found, _ := filepath.Glob(pattern)
	for _, dir := range found {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no go.bytecodealliance.org/pkg sources at %s: `%s` fetches them, or set CAPSTAN_GO_WIT_PKG", pattern, installHint)
}

// wasiAdapter is the WASI preview1 reactor adapter: CAPSTAN_WASI_ADAPTER,
// else the newest wasi-preview1-component-adapter-provider in cargo's registry.
func wasiAdapter() (string, error) {
	if path := os.Getenv("CAPSTAN_WASI_ADAPTER"); path != "" {
		return path, nil
	}
	pattern := filepath.Join(cargoHome(), "registry", "src", "*", "wasi-preview1-component-adapter-provider-*", "artefacts", "wasi_snapshot_preview1.reactor.wasm")
	found, _ := filepath.Glob(pattern)
	if len(found) == 0 {
		return "", fmt.Errorf("no WASI adapter at %s: set CAPSTAN_WASI_ADAPTER, or use a capstan binary with `plugin componentize` (CAPSTAN)", pattern)
	}
	sort.Strings(found)
	return found[len(found)-1], nil
}

func cargoHome() string {
	if home := os.Getenv("CARGO_HOME"); home != "" {
		return home
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cargo")
}

// tool is $env, else name on PATH.
func tool(env, name string) (string, error) {
	if path := os.Getenv(env); path != "" {
		return path, nil
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found on PATH (or set %s)", name, env)
	}
	return path, nil
}

// run runs a command (in dir, with env added), its output shown on failure.
func run(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
	}
	return nil
}
