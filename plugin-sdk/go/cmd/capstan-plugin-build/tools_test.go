package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeWitBindgen writes an executable wit-bindgen into dir that says it is version.
func fakeWitBindgen(t *testing.T, dir, version string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts as fake tools")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "wit-bindgen")
	script := "#!/bin/sh\necho wit-bindgen-cli " + version + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func wants(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", parts)
	}
	for _, part := range parts {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q\nlacks %q", err, part)
		}
	}
}

// The SDK's wit-bindgen is its version's folder of the user cache, never
// PATH's (where the C SDK's 0.61.1 may be): the two cannot collide.
func TestWitBindgenIsTheOneOfItsVersionsCacheFolder(t *testing.T) {
	cache := t.TempDir()
	onPath := t.TempDir()
	fakeWitBindgen(t, onPath, "0.63.0")
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("PATH", onPath+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("WIT_BINDGEN", "")

	root := filepath.Join(cache, "capstan", "wit-bindgen-0.63.0")
	_, err := witBindgen()
	wants(t, err, "wit-bindgen 0.63.x (its Go generator writes the bindings) is missing: no "+filepath.Join(root, "bin", "wit-bindgen"),
		"cargo install wit-bindgen-cli --locked --version 0.63.0 --no-default-features --features go --root "+root,
		"or set WIT_BINDGEN")

	installed := fakeWitBindgen(t, filepath.Join(root, "bin"), "0.63.0")
	found, err := witBindgen()
	if err != nil {
		t.Fatal(err)
	}
	if found.path != installed || found.version != "0.63.0" {
		t.Fatalf("found %+v, want %s 0.63.0", found, installed)
	}
}

func TestWitBindgenOfAnotherVersionIsRefusedWithTheInstallCommand(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	other := fakeWitBindgen(t, t.TempDir(), "0.61.1")
	t.Setenv("WIT_BINDGEN", other)
	_, err := witBindgen()
	wants(t, err, other+" is wit-bindgen-cli 0.61.1; this SDK needs 0.63.x",
		"--root "+filepath.Join(cache, "capstan", "wit-bindgen-0.63.0"))
}

// Without capstan the build names capstan (not wasm-tools, its fallback)
// and the command that builds it.
func TestMissingCapstanIsNamedWithHowToBuildIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CAPSTAN", "")
	t.Setenv("WASM_TOOLS", "")
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "host"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "host", "Cargo.toml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := findComponentizer(policyPackage{sdkDir: filepath.Join(repo, "plugin-sdk", "go")})
	wants(t, err, "capstan (its `plugin componentize` wraps the core module into a component) is missing: not on PATH and CAPSTAN is not set",
		"cargo build --release --bin capstan --manifest-path "+filepath.Join(repo, "Cargo.toml"),
		"set CAPSTAN="+filepath.Join(repo, "target", "release", "capstan"))
	if strings.Contains(err.Error(), "wasm-tools not found") {
		t.Errorf("names wasm-tools: %v", err)
	}

	t.Setenv("CAPSTAN", filepath.Join(repo, "no-capstan"))
	_, err = findComponentizer(policyPackage{sdkDir: filepath.Join(repo, "plugin-sdk", "go")})
	wants(t, err, "CAPSTAN="+filepath.Join(repo, "no-capstan")+" cannot `plugin componentize`")
}

func TestGoVersionsCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"1.24.1", "1.27.1", true},
		{"1.27", "1.27.1", true},
		{"1.27.1", "1.27.1", false},
		{"1.27.3", "1.27.1", false},
		{"1.28rc1", "1.27.1", false},
	} {
		a, ok := parseVersion(c.a)
		b, ok2 := parseVersion(c.b)
		if !ok || !ok2 || lessVersion(a, b) != c.less {
			t.Errorf("%s < %s: got %v (parsed %v %v), want %v", c.a, c.b, lessVersion(a, b), ok, ok2, c.less)
		}
	}
}
