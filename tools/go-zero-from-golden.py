#!/usr/bin/env python3
"""Writes host/src/api/managed_fields/go_zero.txt from kube's recorded OpenAPI v3
documents (tests/golden/answers/openapi): per type, the fields its Go zero
value has. kube's OpenAPI marks a non-pointer struct field `default: {}`
and a field without omitempty `required` (a non-pointer one with its zero
as default). One line per type: `<type> <field>=<zero> ...`, the zero being
`null`, `""`, `0`, `false`, `{}` or the struct type whose zero it is."""
import glob
import json
import os

ROOT = os.path.join(os.path.dirname(__file__), "..")
REF = "#/components/schemas/"


def zero(prop):
    default = prop["default"]
    if default == {}:
        refs = [a.get("$ref") for a in prop.get("allOf", [])] + [prop.get("$ref")]
        refs = [r for r in refs if r]
        return refs[0][len(REF):] if refs else "{}"
    if isinstance(default, bool):
        return "false"
    if isinstance(default, (int, float)):
        return "0"
    if isinstance(default, str):
        return '""'
    return "null"


def main():
    types = {}
    pattern = os.path.join(ROOT, "tests/golden/answers/openapi/v3-*.json")
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            types.update(json.load(f)["body"]["components"]["schemas"])
    out = []
    for name, schema in sorted(types.items()):
        required = set(schema.get("required", []))
        fields = []
        for field, prop in sorted(schema.get("properties", {}).items()):
            if "default" in prop:
                fields.append(f"{field}={zero(prop)}")
            elif field in required:
                fields.append(f"{field}=null")
        if fields:
            out.append(" ".join([name] + fields))
    target = os.path.join(ROOT, "host/src/api/managed_fields/go_zero.txt")
    with open(target, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
