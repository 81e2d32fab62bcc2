"""The request half of an AdmissionReview (admission.k8s.io/v1) as typed
dataclasses, parsed from the JSON the host sends."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from . import objects


@dataclass
class GroupVersionKind:
    group: str = ""
    version: str = ""
    kind: str = ""

    @staticmethod
    def from_dict(d: Any) -> "GroupVersionKind":
        d = d if isinstance(d, dict) else {}
        return GroupVersionKind(d.get("group") or "", d.get("version") or "", d.get("kind") or "")


@dataclass
class GroupVersionResource:
    group: str = ""
    version: str = ""
    resource: str = ""

    @staticmethod
    def from_dict(d: Any) -> "GroupVersionResource":
        d = d if isinstance(d, dict) else {}
        return GroupVersionResource(
            d.get("group") or "", d.get("version") or "", d.get("resource") or ""
        )


@dataclass
class UserInfo:
    username: str = ""
    uid: str = ""
    groups: List[str] = field(default_factory=list)
    extra: Dict[str, List[str]] = field(default_factory=dict)

    @staticmethod
    def from_dict(d: Any) -> "UserInfo":
        d = d if isinstance(d, dict) else {}
        return UserInfo(
            d.get("username") or "",
            d.get("uid") or "",
            list(d.get("groups") or []),
            dict(d.get("extra") or {}),
        )


@dataclass
class AdmissionRequest:
    """`AdmissionReview.request`. Objects stay plain JSON values (dicts);
    `raw` is the request exactly as the host sent it."""

    uid: str = ""
    kind: GroupVersionKind = field(default_factory=GroupVersionKind)
    resource: GroupVersionResource = field(default_factory=GroupVersionResource)
    sub_resource: str = ""
    request_kind: Optional[GroupVersionKind] = None
    request_resource: Optional[GroupVersionResource] = None
    request_sub_resource: str = ""
    name: str = ""
    namespace: str = ""
    operation: str = ""
    user_info: UserInfo = field(default_factory=UserInfo)
    object: Optional[Dict[str, Any]] = None
    old_object: Optional[Dict[str, Any]] = None
    dry_run: bool = False
    options: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @staticmethod
    def from_dict(d: Dict[str, Any]) -> "AdmissionRequest":
        def optional(key: str, parse: Any) -> Any:
            return parse(d[key]) if isinstance(d.get(key), dict) else None

        return AdmissionRequest(
            uid=d.get("uid") or "",
            kind=GroupVersionKind.from_dict(d.get("kind")),
            resource=GroupVersionResource.from_dict(d.get("resource")),
            sub_resource=d.get("subResource") or "",
            request_kind=optional("requestKind", GroupVersionKind.from_dict),
            request_resource=optional("requestResource", GroupVersionResource.from_dict),
            request_sub_resource=d.get("requestSubResource") or "",
            name=d.get("name") or "",
            namespace=d.get("namespace") or "",
            operation=d.get("operation") or "",
            user_info=UserInfo.from_dict(d.get("userInfo")),
            object=d.get("object") if isinstance(d.get("object"), dict) else None,
            old_object=d.get("oldObject") if isinstance(d.get("oldObject"), dict) else None,
            dry_run=bool(d.get("dryRun")),
            options=d.get("options") if isinstance(d.get("options"), dict) else None,
            raw=d,
        )

    def is_write(self) -> bool:
        """True for CREATE and UPDATE."""
        return self.operation in ("CREATE", "UPDATE")

    def is_resource(self, group: str, resource: str) -> bool:
        """True when the request is about `group`/`resource` itself (not a subresource)."""
        return (
            self.resource.group == group
            and self.resource.resource == resource
            and self.sub_resource == ""
        )

    def written_object(
        self, group: Optional[str] = None, resource: Optional[str] = None
    ) -> Optional[Dict[str, Any]]:
        """The object being created or updated when the request writes
        `group`/`resource` itself (not a subresource); without arguments, any
        resource. None otherwise (DELETE, CONNECT, subresources)."""
        if group is None:
            about = self.sub_resource == ""
        else:
            about = self.is_resource(group, resource or "")
        return self.object if self.is_write() and about else None

    def object_name(self) -> str:
        """The name kube's admission errors use: the object's name, else its
        generateName, else the request's name, else "Unknown"."""
        from_object = objects.name_or_generate_name(self.object) if self.object else None
        return from_object or self.name or "Unknown"


def group_resource(group: str, resource: str) -> str:
    """`<resource>.<group>`, or `<resource>` for the core group (GroupResource.String())."""
    return f"{resource}.{group}" if group else resource
