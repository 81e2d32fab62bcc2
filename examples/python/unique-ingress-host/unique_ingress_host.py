"""unique-ingress-host (context-aware): on a create or update of an Ingress
(networking.k8s.io/v1, not subresources), each non-empty `spec.rules[].host`
must not be used by another Ingress in any namespace. The other ingresses come
from the server's own cache through the host import `list-objects`."""

from typing import Any, Dict, Iterator, List, Optional, Tuple

from capstan_plugin import AdmissionRequest, AdmissionResponse, allow, forbidden, list_objects, objects

GROUP = "networking.k8s.io"
API_VERSION = "networking.k8s.io/v1"


def hosts(ingress: Dict[str, Any]) -> List[str]:
    """The non-empty hosts of the ingress's rules, in rule order."""
    spec = ingress.get("spec") if isinstance(ingress.get("spec"), dict) else {}
    rules = spec.get("rules") if isinstance(spec.get("rules"), list) else []
    found = [rule.get("host") for rule in rules if isinstance(rule, dict)]
    return [h for h in found if isinstance(h, str) and h]


def owner(host: str, me: Tuple[str, str], others: List[Dict[str, Any]]) -> Optional[Tuple[str, str]]:
    """The first other ingress (namespace, name) with a rule for `host`."""
    for other in others:
        who = (objects.namespace(other), objects.name(other))
        if who != me and host in hosts(other):
            return who
    return None


def conflicts(ingress: Dict[str, Any], me: Tuple[str, str]) -> Iterator[str]:
    mine = hosts(ingress)
    if not mine:
        return
    others = list_objects(API_VERSION, "ingresses")
    for host in mine:
        found = owner(host, me, others)
        if found:
            yield f'host "{host}" is already used by ingress {found[0]}/{found[1]}'


def review(request: AdmissionRequest) -> AdmissionResponse:
    ingress = request.written_object(GROUP, "ingresses")
    if ingress is None:
        return allow()
    me = (request.namespace or objects.namespace(ingress), request.object_name())
    message = next(conflicts(ingress, me), None)
    return allow() if message is None else forbidden(request, message)
