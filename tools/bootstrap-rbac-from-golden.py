#!/usr/bin/env python3
"""Writes host/src/controllers/rbac/bootstrap-policy.json from the bootstrap
RBAC objects recorded from the real kube-apiserver (tests/golden/answers/
bootstrap/*.json): every object labelled kubernetes.io/bootstrapping=
rbac-defaults, as kube-apiserver creates it at first start (aggregated
ClusterRoles with no rules: the aggregation controller fills them)."""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
ANSWERS = ROOT / "tests/golden/answers/bootstrap"
OUT = ROOT / "host/src/controllers/rbac/bootstrap-policy.json"
KINDS = [("clusterroles", "ClusterRole"), ("clusterrolebindings", "ClusterRoleBinding"),
         ("roles", "Role"), ("rolebindings", "RoleBinding")]
KEEP_META = ("name", "namespace", "labels", "annotations")


def bootstrap_objects(file, kind):
    body = json.loads((ANSWERS / f"{file}.json").read_text())["body"]
    for item in body["items"]:
        meta = item["metadata"]
        if meta.get("labels", {}).get("kubernetes.io/bootstrapping") != "rbac-defaults":
            continue
        obj = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
               "metadata": {k: meta[k] for k in KEEP_META if k in meta}}
        for field in ("aggregationRule", "rules", "roleRef", "subjects"):
            if field in item:
                obj[field] = item[field]
        if "aggregationRule" in obj:
            obj["rules"] = []
        yield obj


def main():
    objects = [o for file, kind in KINDS for o in bootstrap_objects(file, kind)]
    OUT.write_text(json.dumps(objects, indent=2) + "\n")
    print(f"{len(objects)} objects → {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
