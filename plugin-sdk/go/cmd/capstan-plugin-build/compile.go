package main

import (
	"os"
)

// compile builds the build module in dir into a core WebAssembly module
// (wasip1 reactor: -buildmode=c-shared exports _initialize and the
// //go:wasmexport functions). -checklinkname=0: the generated code's
// runtime package links runtime.sbrk for cabi_realloc calls made before the
// Go runtime is up. -s -w: no symbol table or DWARF (smaller component).
func compile(dir, out string) error {
	env := []string{"GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0"}
	if os.Getenv("GOPROXY") == "" {
		// Everything is local (replace directives): never ask a proxy.
		env = append(env, "GOPROXY=off")
	}
	return run(dir, env, "go", "build", "-trimpath", "-buildmode=c-shared",
		"-ldflags=-s -w -checklinkname=0", "-o", out, ".")
}
