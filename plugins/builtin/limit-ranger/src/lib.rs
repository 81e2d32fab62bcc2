//! Built-in admission plugin `limit-ranger`, kube-apiserver's LimitRanger:
//! on pod creation, containers get the namespace's LimitRange defaults
//! (`default`, `defaultRequest`) and the pod is annotated with what was set;
//! then pods (and PersistentVolumeClaims on create and update) are checked
//! against the LimitRanges' min / max / maxLimitRequestRatio.
//!
//! kube runs the defaulting in the mutating phase and the checks in the
//! validating phase; this plugin does both in one call, checking the
//! defaulted pod, so it belongs in the mutating chain.

mod constraints;
mod defaults;
mod quantity;

use capstan_plugin_sdk::{
    host, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, JsonPatch, Operation, Value,
};
use kube_rules::gofmt::aggregate;

/// The plugin.
pub struct LimitRanger;

impl AdmissionPlugin for LimitRanger {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(obj) = req.object.as_ref().filter(|_| supports(req)) else {
            return Ok(AdmissionResponse::allow());
        };
        let being_deleted = req.old_object.as_ref().is_some_and(|old| {
            object::get(old, &["metadata", "deletionTimestamp"]).is_some_and(|v| !v.is_null())
        });
        if being_deleted {
            return Ok(AdmissionResponse::allow());
        }
        let ranges = match host::list_objects("v1", "limitranges", Some(&req.namespace), None, None)
        {
            Ok(ranges) => ranges,
            Err(e) => return Ok(list_failed(req, &e)),
        };
        if req.kind.kind == "Pod" {
            Ok(admit_pod(req, obj, &ranges))
        } else {
            Ok(admit_claim(req, obj, &ranges))
        }
    }
}

/// Pods on create, PersistentVolumeClaims on create and update; never subresources.
fn supports(req: &AdmissionRequest) -> bool {
    let core = req.kind.group.is_empty() && req.subresource().is_empty();
    match (req.kind.kind.as_str(), req.operation) {
        ("Pod", Operation::Create) => core,
        ("PersistentVolumeClaim", Operation::Create | Operation::Update) => core,
        _ => false,
    }
}

fn list_failed(req: &AdmissionRequest, error: &str) -> AdmissionResponse {
    host::log(
        host::Level::Warn,
        &format!("listing limit ranges failed: {error}"),
    );
    let operation = match req.operation {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
        Operation::Connect => "CONNECT",
    };
    let r = &req.resource;
    let message = format!(
        "unable to {operation} {}/{}, Resource={} at this time because there was an error enforcing limit ranges",
        r.group, r.version, r.resource
    );
    AdmissionResponse::forbidden(req, &message)
}

fn admit_pod(req: &AdmissionRequest, pod: &Value, ranges: &[Value]) -> AdmissionResponse {
    let mut defaulted = pod.clone();
    let mut changed = false;
    for range in ranges {
        changed |= defaults::apply(range, &mut defaulted);
    }
    for range in ranges {
        let errors = constraints::validate_pod(range, &defaulted);
        if !errors.is_empty() {
            return AdmissionResponse::forbidden(req, &aggregate(&errors));
        }
    }
    if !changed {
        return AdmissionResponse::allow();
    }
    AdmissionResponse::allow().with_patch(patch(pod, &defaulted).ops())
}

fn admit_claim(req: &AdmissionRequest, claim: &Value, ranges: &[Value]) -> AdmissionResponse {
    for range in ranges {
        let errors = constraints::validate_claim(range, claim);
        if !errors.is_empty() {
            return AdmissionResponse::forbidden(req, &aggregate(&errors));
        }
    }
    AdmissionResponse::allow()
}

/// Replaces each changed container's `resources` and sets the annotation.
fn patch(before: &Value, after: &Value) -> JsonPatch {
    let mut patch = JsonPatch::new();
    for field in ["containers", "initContainers"] {
        let old = object::array(before, &["spec", field]);
        for (i, container) in object::array(after, &["spec", field]).iter().enumerate() {
            if old.get(i).and_then(|c| c.get("resources")) != container.get("resources") {
                let resources = container.get("resources").cloned().unwrap_or(Value::Null);
                patch = patch.add(["spec", field, &i.to_string(), "resources"], resources);
            }
        }
    }
    let note = object::get(after, &["metadata", "annotations", defaults::ANNOTATION]).cloned();
    match (
        object::get(before, &["metadata", "annotations"]).is_some_and(Value::is_object),
        note,
    ) {
        (true, Some(note)) => patch.add(["metadata", "annotations", defaults::ANNOTATION], note),
        (false, Some(_)) => {
            let annotations = object::get(after, &["metadata", "annotations"])
                .cloned()
                .unwrap_or(Value::Null);
            if before.get("metadata").is_some_and(Value::is_object) {
                patch.add(["metadata", "annotations"], annotations)
            } else {
                patch.add(
                    ["metadata"],
                    serde_json::json!({ "annotations": annotations }),
                )
            }
        }
        (_, None) => patch,
    }
}

capstan_plugin_sdk::admission_plugin!(LimitRanger);

#[cfg(test)]
mod tests;
