//! What a write to the `status` subresource takes from the client. A
//! custom resource's status write changes only status (kube's
//! customResourceStatusStrategy copies the old object and sets status). A
//! built-in's status strategy keeps the old spec but, for most kinds, takes
//! the client's metadata (labels, annotations, ...), except the metadata
//! fields its PrepareForUpdate puts back (pkg/registry/*/strategy.go).

use crate::catalogue::ResourceInfo;
use serde_json::Value;

/// Metadata fields a built-in's status strategy leaves as they were.
enum Kept {
    All,
    Fields(&'static [&'static str]),
}

fn kept_metadata(res: &ResourceInfo) -> Kept {
    if res.custom.is_some() {
        return Kept::All;
    }
    match (res.group.as_str(), res.plural.as_str()) {
        ("apps", "deployments") => Kept::Fields(&["labels"]),
        ("", "pods") => Kept::Fields(&["ownerReferences"]),
        // The kinds whose strategy puts all metadata back (flowcontrol's,
        // ResetObjectMetaForStatus users) are not served.
        _ => Kept::Fields(&[]),
    }
}

/// The object a status write of `desired` over `current` stores: the
/// current object with the desired status, and the desired metadata as the
/// kind's status strategy allows (system fields are the update's to keep).
pub fn merge(res: &ResourceInfo, current: &Value, desired: &Value) -> Value {
    let mut out = current.clone();
    let Some(obj) = out.as_object_mut() else {
        return out;
    };
    match desired.get("status") {
        Some(status) => obj.insert("status".into(), status.clone()),
        None => obj.remove("status"),
    };
    if res.custom.is_none() && res.group.is_empty() && res.plural == "pods" {
        keep_qos_class(obj, current);
    }
    let Kept::Fields(kept) = kept_metadata(res) else {
        return out;
    };
    let Some(Value::Object(mut metadata)) = desired.get("metadata").cloned() else {
        return out;
    };
    for field in kept {
        match current.pointer(&format!("/metadata/{field}")) {
            Some(old) => metadata.insert((*field).to_string(), old.clone()),
            None => metadata.remove(*field),
        };
    }
    obj.insert("metadata".into(), Value::Object(metadata));
    out
}

/// A pod's QoS class is set at creation: a status write that leaves it out
/// keeps it (kube's podStatusStrategy backfills it).
fn keep_qos_class(pod: &mut serde_json::Map<String, Value>, current: &Value) {
    let Some(class) = current.pointer("/status/qosClass") else {
        return;
    };
    let status = pod
        .entry("status")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Some(status) = status.as_object_mut() {
        let missing = status
            .get("qosClass")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if missing {
            status.insert("qosClass".into(), class.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use serde_json::json;

    fn builtin(plural: &str) -> ResourceInfo {
        let cat = Catalogue::builtin();
        let found = cat.resources().iter().find(|r| r.plural == plural);
        found.cloned().expect("a built-in resource")
    }

    #[test]
    fn namespace_status_write_takes_annotations_but_not_spec() {
        let current = json!({"metadata": {"name": "n"}, "spec": {"finalizers": ["kubernetes"]}});
        let desired = json!({"metadata": {"name": "n", "annotations": {"a": "b"}},
                             "spec": {}, "status": {"phase": "Active"}});
        let out = merge(&builtin("namespaces"), &current, &desired);
        assert_eq!(out["metadata"]["annotations"], json!({"a": "b"}));
        assert_eq!(out["spec"], current["spec"]);
        assert_eq!(out["status"], json!({"phase": "Active"}));
    }

    #[test]
    fn pod_status_write_keeps_the_qos_class() {
        let current = json!({"metadata": {"name": "p"}, "status": {"qosClass": "BestEffort"}});
        let desired = json!({"metadata": {"name": "p"}, "status": {"phase": "Running"}});
        let out = merge(&builtin("pods"), &current, &desired);
        assert_eq!(
            out["status"],
            json!({"phase": "Running", "qosClass": "BestEffort"})
        );
    }

    #[test]
    fn deployment_status_write_keeps_its_labels() {
        let current = json!({"metadata": {"name": "d", "labels": {"app": "web"}}});
        let desired = json!({"metadata": {"name": "d", "labels": {"app": "x"},
                             "annotations": {"a": "b"}}, "status": {"replicas": 1}});
        let out = merge(&builtin("deployments"), &current, &desired);
        assert_eq!(out["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(out["metadata"]["annotations"], json!({"a": "b"}));
    }
}
