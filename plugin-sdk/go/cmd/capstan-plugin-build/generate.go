package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// generate writes the build module into dir: the bindings of world from the
// WIT, the export file, and a go.mod that finds the SDK, the policy and the
// runtime package of the generated code locally.
func generate(dir, wit, worldName string, w world, pkg policyPackage, tools tools) error {
	if err := run("", nil, tools.bindgen.path, "go", "--world", worldName, "--out-dir", dir, wit); err != nil {
		return err
	}
	exportDir := filepath.Join(dir, "export_wit_world")
	if err := os.MkdirAll(exportDir, 0o755); err != nil {
		return err
	}
	var text strings.Builder
	err := template.Must(template.New("export").Parse(exportTemplate)).Execute(&text, map[string]string{
		"Policy": pkg.importPath, "Export": w.export, "Param": w.param, "Call": w.call,
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(exportDir, "capstan.go"), []byte(text.String()), 0o644); err != nil {
		return err
	}
	return appendGoMod(filepath.Join(dir, "go.mod"), pkg, tools.witPkg)
}

func appendGoMod(path string, pkg policyPackage, witPkg string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nrequire capstan.dev/capstan v0.0.0\n")
	fmt.Fprintf(&b, "replace capstan.dev/capstan => %s\n", quote(pkg.sdkDir))
	fmt.Fprintf(&b, "replace go.bytecodealliance.org/pkg => %s\n", quote(witPkg))
	if pkg.module != "capstan.dev/capstan" {
		fmt.Fprintf(&b, "require %s v0.0.0\n", pkg.module)
		fmt.Fprintf(&b, "replace %s => %s\n", pkg.module, quote(pkg.moduleDir))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(b.String())
	return err
}

// quote writes a go.mod path (quoted when it has spaces or quotes).
func quote(path string) string {
	if strings.ContainsAny(path, " \t\"'`") {
		return fmt.Sprintf("%q", path)
	}
	return path
}
