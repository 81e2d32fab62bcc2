"""JSON Patch (RFC 6902) for mutating admission responses: a builder with
RFC 6901 pointer escaping, and `diff(before, after)` computing the operations
that turn one object into the other."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List

Op = Dict[str, Any]


def escape(token: Any) -> str:
    """Escapes one reference token: `~` → `~0`, `/` → `~1` (RFC 6901)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(segments: Iterable[Any]) -> str:
    """A JSON pointer from unescaped segments: ["metadata", "labels", "a/b"] →
    "/metadata/labels/a~1b"."""
    return "".join("/" + escape(s) for s in segments)


class JsonPatch:
    """Collects operations with segment paths:
    `JsonPatch().add(["spec", "x"], v).ops`."""

    def __init__(self) -> None:
        self.ops: List[Op] = []

    def add(self, path: Iterable[Any], value: Any) -> "JsonPatch":
        self.ops.append({"op": "add", "path": pointer(path), "value": value})
        return self

    def replace(self, path: Iterable[Any], value: Any) -> "JsonPatch":
        self.ops.append({"op": "replace", "path": pointer(path), "value": value})
        return self

    def remove(self, path: Iterable[Any]) -> "JsonPatch":
        self.ops.append({"op": "remove", "path": pointer(path)})
        return self

    def is_empty(self) -> bool:
        return not self.ops


def _same(a: Any, b: Any) -> bool:
    # JSON equality: true and 1 differ, 1 and 1.0 do not.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def diff(before: Any, after: Any, path: List[Any] = None) -> List[Op]:
    """The JSON Patch that turns `before` into `after`: objects are compared
    key by key (remove, add, replace), lists of equal length element by
    element, anything else that differs is replaced whole. Mutate a copy of
    the request's object (`copy.deepcopy`) and diff it against the original."""
    path = path or []
    if _same(before, after):
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        ops: List[Op] = [
            {"op": "remove", "path": pointer(path + [k])} for k in before if k not in after
        ]
        for key, value in after.items():
            if key not in before:
                ops.append({"op": "add", "path": pointer(path + [key]), "value": value})
            else:
                ops.extend(diff(before[key], value, path + [key]))
        return ops
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [op for i, (b, a) in enumerate(zip(before, after)) for op in diff(b, a, path + [i])]
    return [{"op": "replace", "path": pointer(path), "value": after}]
