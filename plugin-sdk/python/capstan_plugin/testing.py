"""A fake host for unit tests (pytest, unittest): a configuration, an object
store, captured logs and failing reads, plus helpers to build requests and
apply a response's patch. Importing this module installs the fake; call
`reset()` at the start of each test."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any, Dict, List, Optional, Tuple

from . import objects
from .host import HostError, Level, use_host
from .response import AdmissionResponse
from .review import AdmissionRequest

Key = Tuple[str, str, str, str]


class FakeHost:
    """The host functions over in-memory state, as `WitHost` presents the real ones."""

    def __init__(self) -> None:
        self.config_text = "{}"
        self.objects: Dict[Key, Dict[str, Any]] = {}
        self.logs: List[Tuple[Level, str]] = []
        self.read_error: Optional[str] = None
        self.changes: Dict[Tuple[str, str], int] = {}

    def _check_reads(self) -> None:
        if self.read_error is not None:
            raise HostError(self.read_error)

    def log(self, level: Level, message: str) -> None:
        self.logs.append((level, message))

    def config(self) -> str:
        return self.config_text

    def get_object(self, api_version: str, resource: str, ns: Optional[str], name: str) -> Optional[str]:
        self._check_reads()
        found = self.objects.get((api_version, resource, ns or "", name))
        return None if found is None else json.dumps(found)

    def list_objects(self, api_version: str, resource: str, ns: Optional[str],
                     label_selector: Optional[str], field_selector: Optional[str]) -> str:
        self._check_reads()
        items = [
            o for (av, r, o_ns, _), o in self.objects.items()
            if av == api_version and r == resource and (ns is None or ns == o_ns)
            and (not label_selector or _labels_match(o, label_selector))
            and (not field_selector or _fields_match(o, field_selector))
        ]
        return json.dumps({"apiVersion": api_version, "kind": "List", "items": items})

    def watermark(self, api_version: str, resource: str) -> str:
        self._check_reads()
        return str(self.changes.get((api_version, resource), 0))


_fake = FakeHost()


def reset() -> None:
    """Empties the store, the logs and the configuration ("{}"), and installs the fake."""
    global _fake
    _fake = FakeHost()
    use_host(_fake)


def set_config(value: Any) -> None:
    """Sets the configuration the plugin reads with `config()`."""
    _fake.config_text = json.dumps(value)


def set_config_text(text: str) -> None:
    """Sets the raw configuration text (to test invalid configurations)."""
    _fake.config_text = text


def put_object(api_version: str, resource: str, obj: Dict[str, Any]) -> None:
    """Stores an object under its metadata.namespace / metadata.name; moves the watermark."""
    key = (api_version, resource, objects.namespace(obj), objects.name(obj))
    _fake.objects[key] = copy.deepcopy(obj)
    _changed(api_version, resource)


def remove_object(api_version: str, resource: str, namespace: str, name: str) -> None:
    """Removes an object (namespace "" for cluster-scoped ones); moves the watermark."""
    _fake.objects.pop((api_version, resource, namespace, name), None)
    _changed(api_version, resource)


def _changed(api_version: str, resource: str) -> None:
    key = (api_version, resource)
    _fake.changes[key] = _fake.changes.get(key, 0) + 1


def fail_reads(message: Optional[str]) -> None:
    """Makes every get/list/watermark raise HostError(message); None restores reads."""
    _fake.read_error = message


def logs() -> List[Tuple[Level, str]]:
    """The lines the plugin logged so far, as (level, message)."""
    return list(_fake.logs)


def request(operation: str, api_version: str, resource: str, kind: str, namespace: str,
            obj: Dict[str, Any], sub_resource: str = "") -> AdmissionRequest:
    """A request for `obj` at `api_version` ("v1", "apps/v1") / `resource`,
    with `kind` and namespace; name from the object's metadata. DELETE
    requests carry it as oldObject."""
    group, _, version = api_version.rpartition("/")
    raw: Dict[str, Any] = {
        "uid": "test-uid",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "name": objects.name(obj),
        "namespace": namespace,
        "operation": operation,
        "userInfo": {"username": "test"},
    }
    if sub_resource:
        raw["subResource"] = sub_resource
    raw["oldObject" if operation == "DELETE" else "object"] = obj
    return AdmissionRequest.from_dict(raw)


def review_text(req: AdmissionRequest) -> str:
    """The AdmissionReview the host would send for `req` (JSON text, for run_admission)."""
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": req.raw})


def apply_patch(obj: Any, response: Any) -> Any:
    """Applies a response's patch (an AdmissionResponse, or the wire form's
    base64 `patch`) to a copy of `obj`."""
    if isinstance(response, AdmissionResponse):
        ops = response.patch_ops
    else:
        ops = json.loads(base64.b64decode(response["patch"])) if response.get("patch") else []
    doc = copy.deepcopy(obj)
    for op in ops:
        doc = _apply_op(doc, op)
    return doc


def _tokens(path: str) -> List[str]:
    return [t.replace("~1", "/").replace("~0", "~") for t in path.split("/")[1:]]


def _apply_op(doc: Any, op: Dict[str, Any]) -> Any:
    parts = _tokens(op["path"])
    if not parts:
        if op["op"] == "remove":
            raise ValueError(f"{op['path']}: cannot remove the root")
        return copy.deepcopy(op["value"])
    *parents, last = parts
    parent = doc
    for p in parents:
        parent = parent[int(p)] if isinstance(parent, list) else parent.get(p)
        if not isinstance(parent, (dict, list)):
            raise ValueError(f"{op['path']}: parent does not exist")
    if isinstance(parent, list):
        i = len(parent) if last == "-" else int(last)
        if op["op"] == "add":
            parent.insert(i, copy.deepcopy(op["value"]))
        elif op["op"] == "replace":
            parent[i] = copy.deepcopy(op["value"])
        else:
            del parent[i]
        return doc
    if op["op"] != "add" and last not in parent:
        raise ValueError(f"{op['path']}: cannot apply")
    if op["op"] == "remove":
        del parent[last]
    else:
        parent[last] = copy.deepcopy(op["value"])
    return doc


def _requirements(selector: str) -> List[Tuple[str, str, str]]:
    out = []
    for s in (part.strip() for part in selector.split(",")):
        if not s:
            continue
        if "!=" in s:
            k, v = s.split("!=", 1)
            out.append(("ne", k.strip(), v.strip()))
        elif "=" in s:
            k, v = s.replace("==", "=").split("=", 1)
            out.append(("eq", k.strip(), v.strip()))
        elif s.startswith("!"):
            out.append(("absent", s[1:].strip(), ""))
        else:
            out.append(("exists", s, ""))
    return out


def _labels_match(obj: Any, selector: str) -> bool:
    labels = objects.labels(obj)
    checks = {
        "eq": lambda k, v: labels.get(k) == v,
        "ne": lambda k, v: labels.get(k) != v,
        "exists": lambda k, v: k in labels,
        "absent": lambda k, v: k not in labels,
    }
    return all(checks[op](k, v) for op, k, v in _requirements(selector))


def _fields_match(obj: Any, selector: str) -> bool:
    def at(key: str) -> str:
        return objects.get_str(obj, key.split(".")) or ""

    return all(
        (at(k) == v) if op == "eq" else (at(k) != v) if op == "ne" else True
        for op, k, v in _requirements(selector)
    )


reset()
