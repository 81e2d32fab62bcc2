#!/usr/bin/env python3
"""Generates fields.txt, the protobuf field table of crate::protobuf.

Walks the prost-generated sources of the k8s-pb crate (field tags and wire
types) and the k8s-openapi sources (Go type names, JSON field names and which
fields are required), for the stable API versions only, and writes one block
per message:

    message io.k8s.api.apps.v1.Deployment
    1 metadata message io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta
    2 spec message io.k8s.api.apps.v1.DeploymentSpec
    ...

Field lines are `tag rust_name kind [repeated] [type | key,value] [json=NAME]
[req]`: kind is string/int32/int64/bool/double/bytes/message/map; `json=`
appears only when the JSON name is not the plain lowerCamelCase of the rust
name; `req` marks fields JSON always carries (no omitempty). After the
messages come `kind <apiVersion> <Kind> <message>` lines.

Usage: python3 generate_fields.py [K8S_PB_SRC K8S_OPENAPI_SRC] > fields.txt
(defaults: the crates in ~/.cargo/registry/src).
"""

import glob
import os
import re
import sys

STABLE_DIRS = re.compile(
    r"^(api/[a-z]+/v1|api/autoscaling/v2|apimachinery/pkg/apis/meta/v1|"
    r"apimachinery/pkg/runtime|apimachinery/pkg/util/intstr|"
    r"apimachinery/pkg/api/resource|"
    r"apiextensions_apiserver/pkg/apis/apiextensions/v1|"
    r"kube_aggregator/pkg/apis/apiregistration/v1)$"
)

# Kinds that have no `impl crate::Resource` in k8s-pb but are POSTed.
EXTRA_KINDS = [
    ("authentication.k8s.io/v1", "TokenRequest", "io.k8s.api.authentication.v1.TokenRequest"),
    ("authentication.k8s.io/v1", "TokenReview", "io.k8s.api.authentication.v1.TokenReview"),
    ("authentication.k8s.io/v1", "SelfSubjectReview", "io.k8s.api.authentication.v1.SelfSubjectReview"),
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview", "io.k8s.api.authorization.v1.SelfSubjectAccessReview"),
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview", "io.k8s.api.authorization.v1.SelfSubjectRulesReview"),
    ("authorization.k8s.io/v1", "SubjectAccessReview", "io.k8s.api.authorization.v1.SubjectAccessReview"),
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview", "io.k8s.api.authorization.v1.LocalSubjectAccessReview"),
    ("v1", "DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"),
    ("meta.k8s.io/v1", "DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"),
    ("autoscaling/v1", "Scale", "io.k8s.api.autoscaling.v1.Scale"),
    ("policy/v1", "Eviction", "io.k8s.api.policy.v1.Eviction"),
]

SCALARS = {"string", "int32", "int64", "bool", "double", "bytes"}


def registry_dir(crate):
    hits = sorted(glob.glob(os.path.expanduser(f"~/.cargo/registry/src/*/{crate}/src")))
    if not hits:
        sys.exit(f"cannot find {crate} in the cargo registry")
    return hits[-1]


def openapi_prefix(module):
    """['api','apps','v1'] -> 'io.k8s.api.apps.v1'."""
    dotted = ".".join(module)
    dotted = dotted.replace("apiextensions_apiserver", "apiextensions-apiserver")
    dotted = dotted.replace("kube_aggregator", "kube-aggregator")
    return "io.k8s." + dotted


def lower_camel(rust_name):
    parts = rust_name.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def squash(name):
    return name.replace("_", "").lower()


class OpenApiInfo:
    """Go type names, JSON names and required fields from k8s-openapi."""

    def __init__(self, root):
        self.root = root
        self.cache = {}

    def module(self, module):
        key = "/".join(module)
        if key not in self.cache:
            self.cache[key] = self._load(os.path.join(self.root, key))
        return self.cache[key]

    def _load(self, folder):
        structs = {}
        for path in glob.glob(os.path.join(folder, "*.rs")):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for m in re.finditer(r"^pub struct (\w+) \{\n(.*?)^\}", text, re.S | re.M):
                required = set()
                for fm in re.finditer(r"^    pub (?:r#)?(\w+): (.+),$", m.group(2), re.M):
                    if not fm.group(2).startswith("Option<"):
                        required.add(squash(fm.group(1)))
                json = {}
                for jm in re.finditer(r'"([A-Za-z0-9$_-]+)" => Field::Key_(\w+),', text):
                    json[squash(jm.group(2))] = jm.group(1)
                structs[m.group(1).lower()] = (m.group(1), json, required)
        return structs

    def struct(self, module, prost_name):
        return self.module(module).get(prost_name.lower())


def resolve(type_path, module):
    """Resolves a prost type path relative to `module` to (module, name)."""
    parts = type_path.split("::")
    base = list(module)
    while parts and parts[0] == "super":
        parts.pop(0)
        base.pop()
    return base + parts[:-1], parts[-1]


def strip_wrappers(ty):
    ty = re.sub(r"\s+", "", ty)
    for w in ("::core::option::Option<", "::prost::alloc::vec::Vec<",
              "::prost::alloc::boxed::Box<"):
        ty = ty.replace(w, "")
    ty = ty.replace("::prost::alloc::collections::BTreeMap<::prost::alloc::string::String,", "")
    return ty.replace(">", "").strip(",")


def parse_field(attr, decl, module):
    """One prost field -> (tag, rust_name, kind, repeated, type_module, type_name)."""
    tag = re.search(r'tag = "(\d+)"', attr).group(1)
    m = re.match(r"pub (?:r#)?(\w+):\s*(.*),$", decl)
    name, ty = m.group(1), m.group(2)
    head = attr.removeprefix("#[prost(").split(",")[0].strip()
    repeated = "repeated" in attr
    if head.startswith("btree_map"):
        value = re.search(r'btree_map = "string, (\w+)"', attr).group(1)
        if value == "message":
            tmod, tname = resolve(strip_wrappers(ty), module)
            return tag, name, "map", False, tmod, tname
        return tag, name, "map", False, None, value
    if head.startswith("bytes"):
        return tag, name, "bytes", repeated, None, None
    if head in SCALARS:
        return tag, name, head, repeated, None, None
    if head == "message":
        tmod, tname = resolve(strip_wrappers(ty), module)
        return tag, name, "message", repeated, tmod, tname
    raise ValueError(f"unsupported prost attribute {attr}")


def parse_module(path, module):
    """Messages (name -> [fields]) and Resource impls of one k8s-pb file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    messages, resources, current, i = {}, [], None, 0
    while i < len(lines):
        line = lines[i]
        sm = re.match(r"^pub struct (\w+) \{", line)
        if sm:
            current = sm.group(1)
            messages[current] = []
        elif line == "}":
            current = None
        elif current and line.strip().startswith("#[prost("):
            attr, decl = line.strip(), ""
            i += 1
            while not (decl.startswith("pub ") and decl.endswith(",")
                       and decl.count("<") == decl.count(">")):
                decl = (decl + " " + lines[i].strip()).strip()
                i += 1
            messages[current].append(parse_field(attr, decl, module))
            continue
        rm = re.match(r"^impl crate::Resource for (\w+) \{", line)
        if rm:
            api = re.search(r'API_VERSION: &\'static str = "([^"]+)"', lines[i + 1]).group(1)
            kind = re.search(r'KIND: &\'static str = "([^"]+)"', lines[i + 4]).group(1)
            resources.append((api, kind, rm.group(1)))
        i += 1
    return messages, resources


def go_name(openapi, module, prost_name):
    info = openapi.struct(module, prost_name)
    return info[0] if info else prost_name


def full_name(openapi, module, prost_name):
    return openapi_prefix(module) + "." + go_name(openapi, module, prost_name)


def field_line(openapi, owner_info, field):
    tag, name, kind, repeated, tmod, tname = field
    out = [tag, name, kind]
    if repeated:
        out.append("repeated")
    if kind == "message":
        out.append(full_name(openapi, tmod, tname))
    elif kind == "map":
        value = full_name(openapi, tmod, tname) if tmod is not None else tname
        out.append("string," + value)
    if owner_info:
        json = owner_info[1].get(squash(name))
        if json and json != lower_camel(name):
            out.append("json=" + json)
        if squash(name) in owner_info[2]:
            out.append("req")
    return " ".join(out)


def check(blocks):
    """Every referenced message must be a generated one; stops on a parse slip."""
    names = {b.split("\n")[0].split(" ")[1] for b in blocks}
    for block in blocks:
        for line in block.split("\n")[1:]:
            words = [w for w in line.split(" ")[3:] if w not in ("repeated", "req") and not w.startswith("json=")]
            for word in words:
                ref = word.split(",")[-1]
                if ref not in names and ref not in SCALARS:
                    sys.exit(f"unresolved type {ref!r} in: {line}")


def main():
    pb_root = sys.argv[1] if len(sys.argv) > 2 else registry_dir("k8s-pb-0.9.0")
    oa_root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(registry_dir("k8s-openapi-0.25.0"), "v1_33")
    openapi = OpenApiInfo(oa_root)
    blocks, kinds = [], []
    for path in sorted(glob.glob(os.path.join(pb_root, "**", "mod.rs"), recursive=True)):
        rel = os.path.relpath(os.path.dirname(path), pb_root)
        if not STABLE_DIRS.match(rel):
            continue
        module = rel.split("/")
        messages, resources = parse_module(path, module)
        for name in sorted(messages):
            info = openapi.struct(module, name)
            lines = [f"message {full_name(openapi, module, name)}"]
            lines += [field_line(openapi, info, f) for f in messages[name]]
            blocks.append("\n".join(lines))
        for api, kind, name in resources:
            kinds.append((api, kind, full_name(openapi, module, name)))
    kinds += [k for k in EXTRA_KINDS if k not in kinds]
    check(blocks)
    print("# Generated by generate_fields.py from k8s-pb 0.9.0 and k8s-openapi 0.25.0 (v1_33). Do not edit.")
    print("\n\n".join(blocks))
    print()
    for api, kind, name in sorted(set(kinds)):
        print(f"kind {api} {kind} {name}")


if __name__ == "__main__":
    main()
