"""The dispatchers that turn a world's JSON text into values for the policy's
function and its answer back into JSON text. The build's generated entry
exports them as the world's function; tests can call them with the JSON the
host would send."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, NamedTuple

from .response import AdmissionResponse
from .review import AdmissionRequest


class PolicyError(Exception):
    """The input could not be read, or the policy answered something unusable."""


class World(NamedTuple):
    export: str  # the policy's function, as the WIT export is called
    input: str  # what the JSON input is


#: Each world of plugin-sdk/wit/capstan.wit: its export and what its input is.
WORLDS: Dict[str, World] = {
    "admission": World("review", "AdmissionReview"),
    "authenticator": World("authenticate", "TokenReview"),
    "authorizer": World("authorize", "SubjectAccessReview"),
    "strategy": World("call", "strategy call"),
    "converter": World("convert", "ConversionReview"),
}


def _parse(what: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise PolicyError(f"invalid {what}: {e}") from None


def run_admission(review: Callable[[AdmissionRequest], AdmissionResponse], text: str) -> str:
    """AdmissionReview JSON in, AdmissionReview JSON out: calls
    `review(request)`, which returns an `AdmissionResponse`; sets
    response.uid to request.uid and echoes apiVersion. An exception means
    "could not decide": the host applies the plugin's failurePolicy."""
    envelope = _parse("AdmissionReview", text)
    raw = envelope.get("request") if isinstance(envelope, dict) else None
    if not isinstance(raw, dict):
        raise PolicyError("AdmissionReview has no request")
    request = AdmissionRequest.from_dict(raw)
    response = review(request)
    if not isinstance(response, AdmissionResponse):
        raise PolicyError("review must return an AdmissionResponse (allow(), forbidden(...), ...)")
    response.uid = request.uid
    return json.dumps({
        "apiVersion": envelope.get("apiVersion") or "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": response.to_dict(),
    })


def run_json(fn: Callable[[Any], Any], what: str, text: str) -> str:
    """The other worlds (authenticator, authorizer, strategy, converter): the
    input parsed, `fn(input)` called, its answer (the whole review with
    `status`/`response` set, as the WIT file describes) serialized."""
    return json.dumps(fn(_parse(what, text)))


def run_world(world: str, fn: Callable[[Any], Any], text: str) -> str:
    """`run_admission` for the admission world, `run_json` for the others."""
    if world == "admission":
        return run_admission(fn, text)
    return run_json(fn, WORLDS[world].input, text)


def failure(error: BaseException) -> str:
    """The `err(message)` a failed call answers: the exception's message,
    prefixed by its type unless it is one of the SDK's own."""
    if isinstance(error, PolicyError):
        return str(error)
    return f"{type(error).__name__}: {error}"
