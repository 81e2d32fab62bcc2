#!/usr/bin/env python3
"""Generates types.txt, the Go type table of crate::catalogue::go_encoding.

Reads the Go API types of Kubernetes v1.32 from the local mirror (`git show`
of the staging packages: k8s.io/api, apimachinery's meta/v1,
apiextensions/v1, apiregistration/v1) and writes one block per Go struct,
named as the OpenAPI components name it, with its JSON fields in Go's
declaration order (embedded structs inlined where they are declared):

    type io.k8s.api.core.v1.ConfigMap
      kind? string
      apiVersion? string
      metadata? @io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta
      immutable? *bool
      data? {}string
      binaryData? {}bytes

Field lines are indented by two spaces. A `?` after the JSON name marks `omitempty`. Types: `*T` pointer, `[]T`
slice, `{}T` map (JSON keys are strings), `@Name` struct, and the scalars
string, int, bool, float, bytes ([]byte), and the types with their own JSON
encoding: quantity (resource.Quantity), resourcelist (core/v1
ResourceList, a map of quantities kube's defaulting rounds to milli-units),
intstr (intstr.IntOrString), time (metav1.Time), microtime
(metav1.MicroTime), raw (kept as written: RawExtension, FieldsV1,
apiextensions' JSON and JSONSchemaPropsOr*, Duration, anything unresolved).

Usage: python3 generate.py [GIT_DIR [COMMIT]] > types.txt
(defaults: /work/.mirror/ali-a-a+ste-kubernetes/repo and cd13ec4a).
"""

import re
import subprocess
import sys

GIT_DIR = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/ali-a-a+ste-kubernetes/repo"
COMMIT = sys.argv[2] if len(sys.argv) > 2 else "cd13ec4a"
STAGING = "staging/src/k8s.io/"

# Go import path prefix -> OpenAPI component prefix.
PACKAGE_ROOTS = [
    ("k8s.io/api/", "io.k8s.api."),
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "io.k8s.apimachinery.pkg.apis.meta.v1"),
    (
        "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
    ),
    (
        "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1",
        "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
    ),
]

# Types with their own MarshalJSON (or from packages not read), by import
# path and name.
SPECIAL = {
    ("k8s.io/apimachinery/pkg/api/resource", "Quantity"): "quantity",
    ("k8s.io/apimachinery/pkg/util/intstr", "IntOrString"): "intstr",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "Time"): "time",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "MicroTime"): "microtime",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "Duration"): "raw",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "FieldsV1"): "raw",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "GroupVersion"): "raw",
    ("k8s.io/apimachinery/pkg/runtime", "RawExtension"): "raw",
    ("k8s.io/apimachinery/pkg/runtime", "Object"): "raw",
    ("k8s.io/apimachinery/pkg/types", "UID"): "string",
    ("k8s.io/apimachinery/pkg/types", "NodeName"): "string",
    ("k8s.io/api/core/v1", "ResourceList"): "resourcelist",
}
APIEXT = "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
for name in ["JSON", "JSONSchemaPropsOrArray", "JSONSchemaPropsOrBool", "JSONSchemaPropsOrStringArray"]:
    SPECIAL[(APIEXT, name)] = "raw"

SCALARS = {
    "string": "string",
    "bool": "bool",
    "byte": "int",
    "int": "int",
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "int",
    "uint": "int",
    "uint8": "int",
    "uint16": "int",
    "uint32": "int",
    "uint64": "int",
    "float32": "float",
    "float64": "float",
}


def git(*args):
    return subprocess.run(
        ["git", "--git-dir", GIT_DIR, *args], check=True, capture_output=True, text=True
    ).stdout


def component_prefix(import_path):
    for go, openapi in PACKAGE_ROOTS:
        if import_path.startswith(go):
            rest = import_path[len(go):].replace("/", ".")
            return openapi + rest
    return None


def package_dirs():
    """(import path, directory in the mirror) of every package read."""
    dirs = []
    for line in git("ls-tree", "-r", "-d", "--name-only", COMMIT, STAGING + "api/").splitlines():
        if re.fullmatch(re.escape(STAGING) + r"api/[a-z0-9]+/v[0-9a-z]+", line):
            dirs.append(line)
    dirs += [
        STAGING + "apimachinery/pkg/apis/meta/v1",
        STAGING + "apiextensions-apiserver/pkg/apis/apiextensions/v1",
        STAGING + "kube-aggregator/pkg/apis/apiregistration/v1",
    ]
    return [(d[len("staging/src/"):], d) for d in dirs]


def source_files(directory):
    skip = re.compile(r"(_test\.go|^zz_generated.*|generated\.pb\.go|_generated\.go)$")
    names = git("ls-tree", "--name-only", COMMIT, directory + "/").splitlines()
    return [n for n in names if n.endswith(".go") and not skip.search(n.rsplit("/", 1)[-1])]


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def imports(text):
    """alias -> import path of one file."""
    found = {}
    block = re.search(r"^import\s*\((.*?)^\)", text, flags=re.S | re.M)
    lines = block.group(1).splitlines() if block else []
    lines += re.findall(r"^import\s+(.*)$", text, flags=re.M)
    for line in lines:
        m = re.match(r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s+)?"([^"]+)"', line)
        if m:
            path = m.group(2)
            found[m.group(1) or path.rsplit("/", 1)[-1]] = path
    return found


class Package:
    def __init__(self, import_path):
        self.path = import_path
        self.structs = {}  # name -> [(field line parts)], with the file's imports
        self.named = {}  # name -> (type expression, imports)


def read_package(import_path, directory):
    pkg = Package(import_path)
    for name in source_files(directory):
        text = strip_comments(git("show", f"{COMMIT}:{name}"))
        imps = imports(text)
        struct = r"^type\s+(\w+)\s+struct\s*\{(\s*\}|.*?^\})"
        for m in re.finditer(struct, text, flags=re.S | re.M):
            pkg.structs[m.group(1)] = (m.group(2).rstrip("}"), imps)
        for m in re.finditer(r"^type\s+(\w+)\s+([^\s{][^\n]*)$", text, flags=re.M):
            if not m.group(2).startswith("struct") and not m.group(2).startswith("interface"):
                pkg.named[m.group(1)] = (m.group(2).strip(), imps)
        for block in re.finditer(r"^type\s*\((.*?)^\)", text, flags=re.S | re.M):
            for m in re.finditer(r"^\s*(\w+)\s+([^\s{][^\n]*)$", block.group(1), flags=re.M):
                pkg.named[m.group(1)] = (m.group(2).strip(), imps)
    return pkg


class Resolver:
    def __init__(self, packages):
        self.packages = packages  # import path -> Package

    def qualified(self, pkg, imps, expr):
        """(import path, name) of a possibly package-qualified type name."""
        if "." in expr:
            alias, name = expr.split(".", 1)
            return imps.get(alias, alias), name
        return pkg.path, expr

    def type_of(self, pkg, imps, expr, depth=0):
        expr = expr.strip()
        if depth > 20:
            return "raw"
        if expr.startswith("*"):
            return "*" + self.type_of(pkg, imps, expr[1:], depth + 1)
        if expr == "[]byte":
            return "bytes"
        if expr.startswith("[]"):
            return "[]" + self.type_of(pkg, imps, expr[2:], depth + 1)
        if expr.startswith("map["):
            close = expr.index("]")
            return "{}" + self.type_of(pkg, imps, expr[close + 1:], depth + 1)
        if expr in SCALARS:
            return SCALARS[expr]
        path, name = self.qualified(pkg, imps, expr)
        if (path, name) in SPECIAL:
            return SPECIAL[(path, name)]
        target = self.packages.get(path)
        if target is None:
            return "raw"
        if name in target.structs:
            return "@" + component_prefix(path) + "." + name
        if name in target.named:
            underlying, their_imps = target.named[name]
            # A type alias (`type T = v1.T`) is the type it names.
            underlying = underlying.removeprefix("=").strip()
            return self.type_of(target, their_imps, underlying, depth + 1)
        return "raw"

    def struct_of(self, pkg, imps, expr, depth=0):
        """(package, name) of the struct a type name denotes, through aliases."""
        path, name = self.qualified(pkg, imps, expr)
        target = self.packages.get(path)
        if (path, name) in SPECIAL or target is None or depth > 10:
            return None
        if name in target.structs:
            return target, name
        if name in target.named:
            underlying, their_imps = target.named[name]
            if underlying.startswith("="):
                return self.struct_of(target, their_imps, underlying[1:].strip(), depth + 1)
        return None

    def fields(self, pkg, name, depth=0):
        """[(json name, omitempty, type)] of a struct, embedded ones inlined."""
        body, imps = pkg.structs[name]
        out = []
        for line in body.splitlines():
            code, _, tag = line.strip().partition("`")
            tokens = code.split()
            if not tokens:
                continue
            json_tag = re.search(r'json:"([^"]*)"', tag)
            parts = (json_tag.group(1) if json_tag else "").split(",")
            if parts[0] == "-":
                continue
            if len(tokens) == 1:
                # An embedded field: its fields are inlined unless it is named.
                expr = tokens[0]
                found = self.struct_of(pkg, imps, expr.lstrip("*"))
                if parts[0] == "" and found and depth < 10:
                    out += self.fields(found[0], found[1], depth + 1)
                    continue
                field = expr.split(".")[-1]
            else:
                field, expr = tokens[0], " ".join(tokens[1:])
            if not field[0].isupper():
                continue
            json_name = parts[0] or field
            out.append((json_name, "omitempty" in parts[1:], self.type_of(pkg, imps, expr)))
        seen = set()
        unique = []
        for f in out:
            if f[0] not in seen:
                seen.add(f[0])
                unique.append(f)
        return unique


def main():
    packages = {}
    for import_path, directory in package_dirs():
        packages[import_path] = read_package(import_path, directory)
    resolver = Resolver(packages)
    print(f"# Generated by generate.py from Kubernetes {COMMIT} (v1.32). Do not edit.")
    for import_path in sorted(packages):
        pkg = packages[import_path]
        prefix = component_prefix(import_path)
        for name in sorted(pkg.structs):
            if (import_path, name) in SPECIAL or not name[0].isupper():
                continue
            print(f"type {prefix}.{name}")
            for json_name, omitempty, ty in resolver.fields(pkg, name):
                print(f"  {json_name}{'?' if omitempty else ''} {ty}")


if __name__ == "__main__":
    main()
