#!/usr/bin/env python3
"""Writes kube-apiserver 1.32's OpenAPI data from its recorded documents
(tests/golden/answers/openapi/): the served documents, not the repository's
api/openapi-spec, are the source (they differ: enums, CBOR content types).

host/src/catalogue/kube-schemas.json: every component schema of every
built-in group-version (v3-*.json), once by name (the documents agree on
each), one a line. These are the built-in schemas Capstan serves and reads
(patch strategies, list and map types, managedFields, field validation).

host/src/catalogue/kube-paths.json: the OpenAPI v2 document's shared
`parameters`, the `definitions` only it has (discovery's and /version's), its path items (v2.json; each v3 document's paths are these,
converted), and `options`: the query parameters kube's builder gives each
action of a custom resource (its GetOptions, ListOptions, ... and `pretty`,
`namespace`), taken from the Pod operations that have them."""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
ANSWERS = ROOT / "tests/golden/answers/openapi"
OUT = ROOT / "host/src/catalogue"
POD = "/api/v1/namespaces/{namespace}/pods"
# action → (path, method) of the Pod operation whose query parameters kube's
# custom resource builder also gives that action.
OPTIONS = {"list": (POD, "get"), "post": (POD, "post"), "put": (POD + "/{name}", "put"),
           "patch": (POD + "/{name}", "patch"), "delete": (POD + "/{name}", "delete")}


def body(name):
    return json.loads((ANSWERS / name).read_text())["body"]


def schemas():
    found = {}
    for doc in sorted(ANSWERS.glob("v3-*.json")):
        for name, schema in body(doc.name)["components"]["schemas"].items():
            if found.setdefault(name, schema) != schema:
                raise SystemExit(f"{doc.name}: {name} differs from another document's")
    return found


def options(v2):
    shared = v2["parameters"]
    deref = lambda p: shared[p["$ref"].rsplit("/", 1)[1]] if "$ref" in p else p
    out = {}
    for action, (path, method) in OPTIONS.items():
        params = [deref(p) for p in v2["paths"][path][method].get("parameters", [])]
        out[action] = [p for p in params if p["in"] == "query"]
    out["get"] = [p for p in out["list"] if p["name"] == "resourceVersion"]
    common = [deref(p) for p in v2["paths"][POD]["parameters"]]
    for name in ("pretty", "namespace"):
        out[name] = [p for p in common if p["name"] == name]
    return out


def one_per_line(mapping):
    lines = [json.dumps(k) + ":" + json.dumps(mapping[k], separators=(",", ":"), ensure_ascii=False)
             for k in sorted(mapping)]
    return "{\n" + ",\n".join(lines) + "\n}"


def main():
    found = schemas()
    (OUT / "kube-schemas.json").write_text(one_per_line(found) + "\n")
    v2 = body("v2.json")
    only_v2 = {n: d for n, d in v2["definitions"].items() if n not in found}
    data = {"options": options(v2), "parameters": v2["parameters"], "definitions": only_v2,
            "paths": v2["paths"]}
    text = "{\n" + ",\n".join(json.dumps(k) + ":" + (one_per_line(v) if k == "paths" else json.dumps(v, separators=(",", ":"), ensure_ascii=False))
                              for k, v in data.items()) + "\n}\n"
    (OUT / "kube-paths.json").write_text(text)
    print(f"{len(found)} schemas, {len(v2['paths'])} paths → {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
