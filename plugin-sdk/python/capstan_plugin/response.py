"""The response half of an AdmissionReview and its builders: allow, deny with
a metav1.Status, JSON patches, warnings and audit annotations. `forbidden`
and `not_found` word their messages exactly as kube-apiserver's
`admission.NewForbidden` / `apierrors.NewNotFound` do (and as the Rust and
JavaScript SDKs do)."""

from __future__ import annotations

import base64
import json
from typing import Any, Dict, Iterable, List, Optional, Union

from .patch import JsonPatch, Op, diff
from .review import AdmissionRequest, group_resource


class AdmissionResponse:
    """`AdmissionReview.response`; `uid` is filled in by `run_admission`."""

    def __init__(self, allowed: bool, status: Optional[Dict[str, Any]] = None) -> None:
        self.uid = ""
        self.allowed = allowed
        self.status = status
        self.patch_ops: List[Op] = []
        self.warnings: List[str] = []
        self.audit_annotations: Dict[str, str] = {}

    def with_details(self, details: Dict[str, Any]) -> "AdmissionResponse":
        """Sets `status.details` (no effect on a response without status)."""
        if self.status is not None:
            self.status["details"] = dict(details)
        return self

    def with_cause(self, type_: str, field: str, message: str) -> "AdmissionResponse":
        """Adds a cause to `status.details.causes`."""
        if self.status is not None:
            details = self.status.setdefault("details", {})
            details.setdefault("causes", []).append(
                {"reason": type_, "message": message, "field": field}
            )
        return self

    def with_patch(self, ops: Union[JsonPatch, Iterable[Op]]) -> "AdmissionResponse":
        """Attaches JSON Patch operations (a list, or a `JsonPatch`)."""
        self.patch_ops.extend(ops.ops if isinstance(ops, JsonPatch) else ops)
        return self

    def with_changes(self, before: Any, after: Any) -> "AdmissionResponse":
        """Attaches the JSON Patch that turns `before` into `after` (see `diff`)."""
        return self.with_patch(diff(before, after))

    def with_warning(self, warning: str) -> "AdmissionResponse":
        """Adds a warning (kubectl prints it as "Warning: ...")."""
        self.warnings.append(warning)
        return self

    def with_audit_annotation(self, key: str, value: str) -> "AdmissionResponse":
        self.audit_annotations[key] = value
        return self

    @property
    def message(self) -> str:
        """The status message, "" when none."""
        return (self.status or {}).get("message", "")

    @property
    def code(self) -> int:
        """The status code, 0 when none."""
        return (self.status or {}).get("code", 0)

    def to_dict(self) -> Dict[str, Any]:
        """The wire form: base64 JSON Patch with patchType "JSONPatch", empty fields left out."""
        out: Dict[str, Any] = {"uid": self.uid, "allowed": self.allowed}
        if self.status is not None:
            out["status"] = self.status
        if self.patch_ops:
            text = json.dumps(self.patch_ops, separators=(",", ":"))
            out["patch"] = base64.b64encode(text.encode()).decode()
            out["patchType"] = "JSONPatch"
        if self.audit_annotations:
            out["auditAnnotations"] = self.audit_annotations
        if self.warnings:
            out["warnings"] = self.warnings
        return out


def allow() -> AdmissionResponse:
    """Admits the request unchanged."""
    return AdmissionResponse(True)


def deny(code: int, reason: str, message: str) -> AdmissionResponse:
    """Rejects the request with a Failure status (`code` e.g. 403, `reason`
    e.g. "Forbidden"); `message` is what kubectl prints after "Error from server"."""
    return AdmissionResponse(
        False, {"status": "Failure", "message": message, "reason": reason, "code": code}
    )


def forbidden(request: AdmissionRequest, message: str) -> AdmissionResponse:
    """kube's `admission.NewForbidden(a, err)`: 403,
    `<resource>[.<group>] "<name>" is forbidden: <message>`."""
    name = request.object_name()
    r = request.resource
    text = f'{group_resource(r.group, r.resource)} "{name}" is forbidden: {message}'
    return deny(403, "Forbidden", text).with_details(
        {"name": name, "group": r.group, "kind": r.resource}
    )


def not_found(group: str, resource: str, name: str) -> AdmissionResponse:
    """kube's `apierrors.NewNotFound`: 404, `<resource>[.<group>] "<name>" not found`."""
    text = f'{group_resource(group, resource)} "{name}" not found'
    return deny(404, "NotFound", text).with_details({"name": name, "group": group, "kind": resource})
