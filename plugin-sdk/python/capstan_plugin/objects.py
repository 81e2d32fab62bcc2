"""Read helpers for Kubernetes objects (plain JSON values: dicts and lists)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence


def get_str(obj: Any, path: Sequence[str]) -> Optional[str]:
    """The value at `path` (keys) when it is a string, else None."""
    value = obj
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value if isinstance(value, str) else None


def name(obj: Any) -> str:
    """`metadata.name`, "" when none."""
    return get_str(obj, ("metadata", "name")) or ""


def namespace(obj: Any) -> str:
    """`metadata.namespace`, "" when none (cluster-scoped)."""
    return get_str(obj, ("metadata", "namespace")) or ""


def name_or_generate_name(obj: Any) -> Optional[str]:
    """`metadata.name`, else `metadata.generateName`, else None."""
    return get_str(obj, ("metadata", "name")) or get_str(obj, ("metadata", "generateName")) or None


def _string_map(obj: Any, path: Sequence[str]) -> Dict[str, str]:
    value = obj
    for key in path:
        if not isinstance(value, dict):
            return {}
        value = value.get(key)
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, str)}


def labels(obj: Any) -> Dict[str, str]:
    """`metadata.labels` (string values only), {} when none."""
    return _string_map(obj, ("metadata", "labels"))


def annotations(obj: Any) -> Dict[str, str]:
    """`metadata.annotations` (string values only), {} when none."""
    return _string_map(obj, ("metadata", "annotations"))
