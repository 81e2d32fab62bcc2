"""require-labels: every create or update (not subresources, not deletes) of
an object lacking a label listed in the configuration (`{"labels": ["team"]}`)
is refused with kube's Forbidden wording."""

import json

from capstan_plugin import AdmissionRequest, AdmissionResponse, Level, allow, config, forbidden, log, objects


def review(request: AdmissionRequest) -> AdmissionResponse:
    obj = request.written_object()
    if obj is None:
        return allow()
    present = objects.labels(obj)
    missing = [key for key in config().get("labels", []) if key not in present]
    if not missing:
        return allow()
    log(Level.INFO, f"rejecting {objects.name(obj)}: missing {json.dumps(missing)}")
    return forbidden(request, f"missing required label(s): {', '.join(missing)}")
