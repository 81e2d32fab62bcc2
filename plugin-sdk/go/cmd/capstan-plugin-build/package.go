package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
)

// policyPackage is the policy's Go package and the modules the build module needs.
type policyPackage struct {
	importPath, dir string
	// module and moduleDir: the policy's module; sdkDir: capstan.dev/capstan's directory.
	module, moduleDir, sdkDir string
}

// loadPackage asks the go command about the package in dir.
func loadPackage(dir string) (policyPackage, error) {
	var listed struct {
		ImportPath, Dir, Name string
		Module                *struct{ Path, Dir string }
	}
	if err := goJSON(dir, &listed, "list", "-json", "."); err != nil {
		return policyPackage{}, err
	}
	if listed.Module == nil {
		return policyPackage{}, fmt.Errorf("%s is not in a Go module (run go mod init)", dir)
	}
	if listed.Name == "main" {
		return policyPackage{}, fmt.Errorf("%s is package main: a policy is a library package that exports the world's function", listed.ImportPath)
	}
	var sdk struct{ Dir string }
	if err := goJSON(dir, &sdk, "list", "-m", "-json", "capstan.dev/capstan"); err != nil {
		return policyPackage{}, fmt.Errorf("the policy's module must require capstan.dev/capstan: %w", err)
	}
	if sdk.Dir == "" {
		return policyPackage{}, fmt.Errorf("capstan.dev/capstan has no local directory: replace it with the SDK's path (plugin-sdk/go) in go.mod")
	}
	return policyPackage{
		importPath: listed.ImportPath, dir: listed.Dir,
		module: listed.Module.Path, moduleDir: listed.Module.Dir, sdkDir: sdk.Dir,
	}, nil
}

func goJSON(dir string, v any, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOOS=", "GOARCH=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go %v: %v\n%s", args, err, stderr.String())
	}
	return json.Unmarshal(out, v)
}
