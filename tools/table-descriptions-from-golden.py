#!/usr/bin/env python3
"""Writes plugins/builtin/strategy/src/table/descriptions.txt from the Tables
recorded from the real kube-apiserver (tests/golden/answers/tables/list-*):
the description kube's printers give each column (the API field's own
documentation), one line per column: `<group>/<plural>\t<column>\t<JSON string>`."""
import glob
import json
import os

ROOT = os.path.join(os.path.dirname(__file__), "..")
OUT = os.path.join(ROOT, "plugins/builtin/strategy/src/table/descriptions.txt")


def resource_of(path):
    """`/apis/apps/v1/namespaces/default/deployments` → `apps/deployments`."""
    parts = path.split("?")[0].strip("/").split("/")
    group = "" if parts[0] == "api" else parts[1]
    return f"{group}/{parts[-1]}"


def main():
    lines = set()
    for f in glob.glob(os.path.join(ROOT, "tests/golden/answers/tables/list-*.json")):
        recorded = json.load(open(f))
        for column in recorded["body"].get("columnDefinitions", []):
            key = resource_of(recorded["request"]["path"])
            lines.add(f"{key}\t{column['name']}\t{json.dumps(column['description'])}")
    with open(OUT, "w") as out:
        out.write("\n".join(sorted(lines)) + "\n")
    print(f"{len(lines)} column descriptions → {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
