#!/usr/bin/env python3
"""The host's import graph, by top-level module of host/src (or by file).

Reads every host/src/**/*.rs, collects the `crate::<module>` paths it names
(in `use` lines and in code), and prints: each module's imports, the import
circles (strongly connected components of more than one module, with the
files they take in), and the edges that run against a layer order when one
is given.

    tools/import-graph.py                 # modules, circles
    tools/import-graph.py --files         # the circle of files
    tools/import-graph.py --dot > g.dot   # Graphviz
    tools/import-graph.py --layers cli,server,api,admission,registry,storage
        # edges from a later layer to an earlier one are listed as upward
    tools/import-graph.py --check         # CI: the layers of ARCHITECTURE.md
        # fails on a circle across folders, an import up the layers, or a
        # folder missing from LAYERS
"""
import argparse
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host", "src")
# host/src's folders, top layer first (ARCHITECTURE.md's code map): a folder
# may import only the folders after it.
LAYERS = [
    "cli", "config", "server", "controllers", "api", "policy", "admission", "auth",
    "audit", "crd", "registry", "patch", "catalogue", "wasm", "cosign", "transport",
    "storage", "certificates", "kube_client", "telemetry", "apimachinery", "cpu",
]
ROOTS = {"lib", "main", "bin"}  # the crate roots and the bench binary

CRATE_PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)((?:::[a-z_][a-z0-9_]*)*)")
USE_GROUP = re.compile(r"\buse\s+crate::\{([^;]*)\}", re.S)


def all_rust_files():
    for base, _, names in os.walk(ROOT):
        for name in names:
            if name.endswith(".rs"):
                yield os.path.relpath(os.path.join(base, name), ROOT)


TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;")


def test_files():
    """Files of modules declared under `#[cfg(test)]` (and their children):
    tests may import anything."""
    found = set()
    for path in all_rust_files():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        stem = os.path.splitext(path)[0]
        base = os.path.dirname(path) if os.path.basename(stem) in ("mod", "lib", "main") else stem
        for name in TEST_MOD.findall(text):
            for candidate in (os.path.join(base, name + ".rs"), os.path.join(base, name)):
                found.add(os.path.normpath(candidate))
    return found


def rust_files():
    tests = test_files()
    for path in all_rust_files():
        if not any(path == t or path.startswith(t + os.sep) for t in tests):
            yield path


def module_of(path):
    first = path.split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


def strip_tests(text):
    """Code before a `#[cfg(test)]` module (tests may import anything),
    without comments (a doc link is not an import)."""
    cut = text.find("#[cfg(test)]\nmod tests")
    text = text if cut < 0 else text[:cut]
    return re.sub(r"//[^\n]*", "", text)


def named_modules(text):
    text = strip_tests(text)
    names = {m.group(1) for m in CRATE_PATH.finditer(text)}
    for group in USE_GROUP.finditer(text):
        for item in re.split(r"[,\s]+", group.group(1)):
            head = item.split("::")[0].strip("{} ")
            if re.fullmatch(r"[a-z_][a-z0-9_]*", head or ""):
                names.add(head)
    return names


def imports_of(a, b):
    """Which files of module `a` name which `crate::b::...` paths."""
    found = defaultdict(set)
    pattern = re.compile(r"\bcrate::" + b + r"\b((?:::[A-Za-z_][A-Za-z0-9_]*)*)")
    for path in rust_files():
        if module_of(path) != a:
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = strip_tests(f.read())
        for m in pattern.finditer(text):
            found[path].add(b + m.group(1))
        for group in USE_GROUP.finditer(text):
            for item in re.split(r",\s*(?![^{]*})", group.group(1)):
                item = re.sub(r"\s+", "", item)
                if item.split("::")[0] == b:
                    found[path].add(item)
    return found


def graph(by_file):
    edges = defaultdict(set)
    known = {module_of(p) for p in rust_files()}
    for path in rust_files():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        source = path if by_file else module_of(path)
        for name in named_modules(text):
            if name in known and name != module_of(path):
                edges[source].add(name)
        edges.setdefault(source, set())
    return edges


def circles(edges):
    """Tarjan's strongly connected components with more than one member."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return sorted(out, key=len, reverse=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", action="store_true", help="nodes are files, edges to modules' files")
    parser.add_argument("--dot", action="store_true", help="print Graphviz")
    parser.add_argument("--layers", help="comma-separated layer order, top first")
    parser.add_argument("--check", action="store_true", help="fail unless LAYERS hold")
    args = parser.parse_args()
    if args.check:
        args.layers = ",".join(LAYERS)
    modules = graph(False)
    if args.dot:
        print("digraph host {")
        for a, bs in sorted(modules.items()):
            for b in sorted(bs):
                print(f'  "{a}" -> "{b}";')
        print("}")
        return
    print(f"{len(modules)} modules, {sum(len(b) for b in modules.values())} imports between them")
    found = circles(modules)
    print(f"{len(found)} import circle(s) across modules")
    for c in found:
        files = [p for p in rust_files() if module_of(p) in c]
        print(f"- {len(c)} modules, {len(files)} files: {', '.join(c)}")
        if args.files:
            for p in sorted(files):
                print(f"    {p}")
    if args.layers:
        order = {name: i for i, name in enumerate(args.layers.split(","))}
        upward = [(a, b) for a, bs in modules.items() for b in bs
                  if a in order and b in order and order[b] < order[a]]
        print(f"{len(upward)} import(s) up the layers")
        unplaced = sorted(m for m in modules if m not in order and m not in ROOTS)
        if unplaced:
            print(f"not in the layer order: {', '.join(unplaced)}")
        for a, b in sorted(upward):
            print(f"- {a} -> {b}")
            if args.files or args.check:
                for path, names in sorted(imports_of(a, b).items()):
                    print(f"    {path}: {', '.join(sorted(names))}")
        if args.check and (found or upward or unplaced):
            print("host/src's layers are broken: see ARCHITECTURE.md's code map")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
