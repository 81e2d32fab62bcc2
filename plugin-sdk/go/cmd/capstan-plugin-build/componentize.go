package main

import (
	"os"
	"os/exec"
	"path/filepath"
)

// componentize wraps the core module into a component of world.
func componentize(core, wit, world, out, dir string) error {
	if capstan := capstanBinary(); capstan != "" {
		return run("", nil, capstan, "plugin", "componentize", "--world", world, "--module", core, "-o", out)
	}
	wasmTools, err := tool("WASM_TOOLS", "wasm-tools")
	if err != nil {
		return err
	}
	adapter, err := wasiAdapter()
	if err != nil {
		return err
	}
	embedded := filepath.Join(dir, "embedded.wasm")
	if err := run("", nil, wasmTools, "component", "embed", "--world", world, wit, core, "-o", embedded); err != nil {
		return err
	}
	return run("", nil, wasmTools, "component", "new", embedded, "--adapt", "wasi_snapshot_preview1="+adapter, "-o", out)
}

// capstanBinary is a capstan binary whose `plugin componentize` works, or "".
func capstanBinary() string {
	path := os.Getenv("CAPSTAN")
	if path == "" {
		found, err := exec.LookPath("capstan")
		if err != nil {
			return ""
		}
		path = found
	}
	if exec.Command(path, "plugin", "componentize", "--help").Run() != nil {
		return ""
	}
	return path
}
