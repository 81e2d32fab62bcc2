package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// componentizer is what wraps the core module into a component: a capstan
// binary (`capstan plugin componentize`), else wasm-tools with the WASI
// preview1 reactor adapter.
type componentizer struct {
	capstan, wasmTools, adapter string
}

// findComponentizer finds CAPSTAN, else capstan on PATH, else (without a
// capstan) WASM_TOOLS or wasm-tools on PATH with the WASI adapter. The
// error names capstan, what the build really needs, and how to build it.
func findComponentizer(pkg policyPackage) (componentizer, error) {
	how := buildCapstanHint(pkg.sdkDir)
	if path := os.Getenv("CAPSTAN"); path != "" {
		if err := canComponentize(path); err != nil {
			return componentizer{}, fmt.Errorf("capstan: CAPSTAN=%s cannot `plugin componentize` (%v). %s", path, err, how)
		}
		return componentizer{capstan: path}, nil
	}
	var capstanErr string
	if path, err := exec.LookPath("capstan"); err != nil {
		capstanErr = "capstan (its `plugin componentize` wraps the core module into a component) is missing: not on PATH and CAPSTAN is not set."
	} else if err := canComponentize(path); err != nil {
		capstanErr = fmt.Sprintf("capstan: the capstan on PATH (%s) cannot `plugin componentize` (%v: older than this SDK?).", path, err)
	} else {
		return componentizer{capstan: path}, nil
	}
	// Without capstan: wasm-tools and the adapter do the same, when both are here.
	wasmTools := os.Getenv("WASM_TOOLS")
	if wasmTools == "" {
		wasmTools, _ = exec.LookPath("wasm-tools")
	}
	if wasmTools != "" {
		adapter, err := wasiAdapter()
		if err == nil {
			return componentizer{wasmTools: wasmTools, adapter: adapter}, nil
		}
		return componentizer{}, fmt.Errorf("%s %s\n  (wasm-tools, %s, would do without capstan, but there is %v.)", capstanErr, how, wasmTools, err)
	}
	return componentizer{}, fmt.Errorf("%s %s", capstanErr, how)
}

// buildCapstanHint says how to build capstan from the repository the SDK is in.
func buildCapstanHint(sdkDir string) string {
	repo := filepath.Clean(filepath.Join(sdkDir, "..", ".."))
	if !exists(filepath.Join(repo, "host", "Cargo.toml")) {
		return "Build it with `cargo build --release --bin capstan` in the Capstan repository and set CAPSTAN to target/release/capstan there (or put it on PATH)."
	}
	return fmt.Sprintf("Build it from this repository with\n    cargo build --release --bin capstan --manifest-path %s\n  and set CAPSTAN=%s (or put it on PATH).",
		shellQuote(filepath.Join(repo, "Cargo.toml")), shellQuote(filepath.Join(repo, "target", "release", "capstan")))
}

// canComponentize runs `capstan plugin componentize --help`.
func canComponentize(path string) error {
	out, err := exec.Command(path, "plugin", "componentize", "--help").CombinedOutput()
	if err != nil {
		if text := strings.TrimSpace(string(out)); text != "" {
			lines := strings.SplitN(text, "\n", 2)
			return fmt.Errorf("%v: %s", err, lines[0])
		}
		return err
	}
	return nil
}

// componentize wraps the core module into a component of world.
func (c componentizer) run(core, wit, world, out, dir string) error {
	if c.capstan != "" {
		return run("", nil, c.capstan, "plugin", "componentize", "--world", world, "--module", core, "-o", out)
	}
	embedded := filepath.Join(dir, "embedded.wasm")
	if err := run("", nil, c.wasmTools, "component", "embed", "--world", world, wit, core, "-o", embedded); err != nil {
		return err
	}
	return run("", nil, c.wasmTools, "component", "new", embedded, "--adapt", "wasi_snapshot_preview1="+c.adapter, "-o", out)
}
