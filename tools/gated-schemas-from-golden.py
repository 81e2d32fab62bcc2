#!/usr/bin/env python3
"""Writes host/src/catalogue/kube-schemas-gated.json: the component schemas
of the built-in APIs kube-apiserver serves only behind a feature gate and
--runtime-config (MutatingAdmissionPolicy and its binding), from the
document recorded in tests/golden/gated/ (kube-apiserver 1.32 with the gate
on, serving admissionregistration.k8s.io/v1alpha1). kube 1.34 serves the
same types at v1beta1: each admissionregistration v1alpha1 schema is
written once more under the v1beta1 name, its references and
group-version-kinds renamed. Schemas of other groups (meta/v1) are the
built-in ones already."""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
RECORDED = ROOT / "tests/golden/gated/v3-apis-admissionregistration.k8s.io-v1alpha1.json"
OUT = ROOT / "host/src/catalogue/kube-schemas-gated.json"
PREFIX = "io.k8s.api.admissionregistration."


def main():
    schemas = json.loads(RECORDED.read_text())["body"]["components"]["schemas"]
    out = {}
    for name, schema in sorted(schemas.items()):
        if not name.startswith(PREFIX + "v1alpha1."):
            continue
        out[name] = schema
        text = json.dumps(schema)
        text = text.replace(PREFIX + "v1alpha1.", PREFIX + "v1beta1.")
        text = text.replace('"version": "v1alpha1"', '"version": "v1beta1"')
        out[name.replace(".v1alpha1.", ".v1beta1.")] = json.loads(text)
    with OUT.open("w") as f:
        f.write("{\n")
        f.write(",\n".join(f"{json.dumps(k)}:{json.dumps(v, separators=(',', ':'))}"
                           for k, v in sorted(out.items())))
        f.write("\n}\n")


if __name__ == "__main__":
    main()
