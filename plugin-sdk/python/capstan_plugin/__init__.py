"""Write Capstan plugins (admission policies) in Python.

A policy is a module with a function `review(request: AdmissionRequest) ->
AdmissionResponse`; `python -m capstan_plugin build policy.py policy.wasm`
makes it a component of the `admission` world of plugin-sdk/wit/capstan.wit
with componentize-py, and `capstan_plugin.testing` is a fake host for unit
tests.
"""

from . import objects
from .dispatch import WORLDS, PolicyError, run_admission, run_json
from .host import (ConfigError, HostError, Level, config, get_object,
                   list_objects, log, watermark)
from .patch import JsonPatch, diff, escape, pointer
from .response import AdmissionResponse, allow, deny, forbidden, not_found
from .review import (AdmissionRequest, GroupVersionKind, GroupVersionResource,
                     UserInfo, group_resource)

#: The WIT package (ABI) this SDK speaks.
ABI = "capstan:plugin@0.1.0"

__all__ = [
    "ABI", "AdmissionRequest", "AdmissionResponse", "ConfigError", "GroupVersionKind",
    "GroupVersionResource", "HostError", "JsonPatch", "Level", "PolicyError", "UserInfo",
    "WORLDS", "allow", "config", "deny", "diff", "escape", "forbidden", "get_object",
    "group_resource", "list_objects", "log", "not_found", "objects", "pointer",
    "run_admission", "run_json", "watermark",
]
