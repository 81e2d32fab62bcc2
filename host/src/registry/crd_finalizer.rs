//! A CustomResourceDefinition's delete (kube's CRD REST delete): the CRD is
//! marked Terminating and held by the cleanup finalizer, which
//! `controllers::crd_cleanup` removes once every object of it is gone.

use crate::apimachinery::meta;
use crate::catalogue::ResourceInfo;
use serde_json::{json, Value};

pub const FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";
const GROUP: &str = "apiextensions.k8s.io";
const PLURAL: &str = "customresourcedefinitions";

/// The finalizer a delete of this resource adds (CRDs only).
pub fn finalizer_for(res: &ResourceInfo) -> Option<&'static str> {
    (res.group == GROUP && res.plural == PLURAL && res.custom.is_none()).then_some(FINALIZER)
}

/// The Terminating condition a CRD gets when it is marked for deletion.
pub fn mark_pending(crd: &mut Value) {
    set_terminating(
        crd,
        "True",
        "InstanceDeletionPending",
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
    );
}

pub fn set_terminating(crd: &mut Value, status: &str, reason: &str, message: &str) {
    let condition = json!({"type": "Terminating", "status": status, "lastTransitionTime": meta::now(),
                           "reason": reason, "message": message});
    if !crd.get("status").is_some_and(Value::is_object) {
        crd["status"] = json!({});
    }
    let conditions = &mut crd["status"]["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    if let Some(list) = conditions.as_array_mut() {
        match list.iter_mut().find(|c| c["type"] == "Terminating") {
            Some(c) if c["status"] == status => {
                c["reason"] = json!(reason);
                c["message"] = json!(message);
            }
            Some(c) => *c = condition,
            None => list.push(condition),
        }
    }
}
