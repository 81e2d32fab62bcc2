// Command capstan-plugin-build builds a Go policy package into a Capstan
// plugin component. Run it from the policy's module:
//
//	go run capstan.dev/capstan/cmd/capstan-plugin-build -o policy.wasm .
//
// The package exports the world's function (admission: `func
// Review(*capstan.AdmissionRequest) (*capstan.AdmissionResponse, error)`;
// see -world). The build:
//
//  1. generates the canonical-ABI bindings of the world from
//     plugin-sdk/wit/capstan.wit with `wit-bindgen go` (wit-bindgen-cli
//     0.63, its Go generator for Go ≥ 1.24's //go:wasmexport), in a
//     temporary module;
//  2. adds the export that hands the JSON text to the SDK (capstan.RunAdmission
//     or capstan.RunJSON) and a capstan.Host over the generated imports;
//  3. compiles a core module with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared;
//  4. wraps it into a component with `capstan plugin componentize` (when a
//     capstan binary offers it) or with `wasm-tools component embed` and
//     `component new` and the WASI preview1 reactor adapter.
//
// Every tool is looked for before the build starts, and all that are
// missing are named at once, each with the command that gets it:
//
//   - wit-bindgen 0.63.x: WIT_BINDGEN, else the one installed into its own
//     folder of the user cache,
//     ${XDG_CACHE_HOME:-$HOME/.cache}/capstan/wit-bindgen-0.63.0/bin/wit-bindgen
//     (never PATH's, never ~/.cargo/bin: the C SDK pins another version);
//   - the go.bytecodealliance.org/pkg sources the generated code imports:
//     CAPSTAN_GO_WIT_PKG, else wit-bindgen-0.63.0/go-pkg beside it, copied
//     there on first use from the wit-bindgen-go crate that installing
//     wit-bindgen left in cargo's registry;
//   - capstan: CAPSTAN, else capstan on PATH; without one, WASM_TOOLS (or
//     wasm-tools on PATH) with CAPSTAN_WASI_ADAPTER
//     (wasi_snapshot_preview1.reactor.wasm; by default the one of the
//     wasi-preview1-component-adapter-provider crate in cargo's registry);
//   - the go on PATH at the version the generated code's runtime package
//     declares (1.27.1).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	opts := options{}
	flag.StringVar(&opts.world, "world", "admission", "the world of plugin-sdk/wit/capstan.wit: admission, authenticator, authorizer, strategy or converter")
	flag.StringVar(&opts.out, "o", "", "the component to write (default: <package directory name>.wasm)")
	flag.StringVar(&opts.wit, "wit", "", "the WIT directory (default: the SDK's ../wit)")
	flag.BoolVar(&opts.keep, "keep", false, "keep the generated build module and print where it is")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: capstan-plugin-build [-world W] [-o OUT.wasm] [PACKAGE_DIR]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	opts.pkgDir = "."
	if flag.NArg() > 1 {
		flag.Usage()
		os.Exit(2)
	}
	if flag.NArg() == 1 {
		opts.pkgDir = flag.Arg(0)
	}
	if err := build(opts); err != nil {
		fmt.Fprintf(os.Stderr, "capstan-plugin-build: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	world, out, wit, pkgDir string
	keep                    bool
}

func build(opts options) error {
	w, ok := worlds[opts.world]
	if !ok {
		return fmt.Errorf("unknown world %q (admission, authenticator, authorizer, strategy, converter)", opts.world)
	}
	pkg, err := loadPackage(opts.pkgDir)
	if err != nil {
		return err
	}
	if opts.wit == "" {
		opts.wit = filepath.Join(pkg.sdkDir, "..", "wit")
	}
	if opts.out == "" {
		opts.out = filepath.Base(pkg.dir) + ".wasm"
	}
	tools, err := findTools(pkg)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "capstan-go-build-")
	if err != nil {
		return err
	}
	if opts.keep {
		fmt.Fprintf(os.Stderr, "build module: %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if err := generate(dir, opts.wit, opts.world, w, pkg, tools); err != nil {
		return err
	}
	core := filepath.Join(dir, "core.wasm")
	if err := compile(dir, core); err != nil {
		return err
	}
	if err := tools.componentize.run(core, opts.wit, opts.world, opts.out, dir); err != nil {
		return err
	}
	info, err := os.Stat(opts.out)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %s component, %.1f MiB\n", opts.out, opts.world, float64(info.Size())/(1<<20))
	return nil
}
