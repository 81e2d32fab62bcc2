//! Rows for storage objects: PersistentVolumes, PersistentVolumeClaims and
//! StorageClasses (kube's printers, including the access-mode shorthands
//! and the "(default)" StorageClass marker).

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::access::{age, flag, list, map, name, non_empty, quantity, text};

const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// kube's `GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order.
fn access_modes(obj: &Value, pointer: &str) -> String {
    let modes: Vec<&str> = list(obj, pointer)
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let known = [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ];
    let shown: Vec<&str> = known
        .iter()
        .filter(|(mode, _)| modes.contains(mode))
        .map(|(_, short)| *short)
        .collect();
    shown.join(",")
}

/// The beta storage-class annotation wins over `spec.storageClassName`.
fn storage_class(obj: &Value) -> String {
    let annotation = map(obj, "/metadata/annotations")
        .and_then(|a| a.get(BETA_CLASS_ANNOTATION))
        .and_then(Value::as_str);
    annotation
        .unwrap_or_else(|| text(obj, "/spec/storageClassName"))
        .to_string()
}

fn is_deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

fn phase(obj: &Value) -> &str {
    if is_deleting(obj) {
        "Terminating"
    } else {
        text(obj, "/status/phase")
    }
}

fn or_unset(obj: &Value, pointer: &str) -> Value {
    let v = obj.pointer(pointer).and_then(Value::as_str);
    Value::from(v.unwrap_or("<unset>"))
}

pub(crate) fn persistent_volume_row(pv: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let claim = match pv.pointer("/spec/claimRef") {
        Some(c) if c.is_object() => format!("{}/{}", text(c, "/namespace"), text(c, "/name")),
        _ => String::new(),
    };
    vec![
        name(pv),
        Value::from(quantity(pv, "/spec/capacity/storage")),
        Value::from(access_modes(pv, "/spec/accessModes")),
        Value::from(text(pv, "/spec/persistentVolumeReclaimPolicy")),
        Value::from(phase(pv)),
        Value::from(claim),
        Value::from(storage_class(pv)),
        or_unset(pv, "/spec/volumeAttributesClassName"),
        Value::from(text(pv, "/status/reason")),
        age(pv, now),
        or_unset(pv, "/spec/volumeMode"),
    ]
}

pub(crate) fn persistent_volume_claim_row(pvc: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let bound = non_empty(pvc, "/spec/volumeName").is_some();
    let (capacity, modes) = match bound {
        true => (
            quantity(pvc, "/status/capacity/storage"),
            access_modes(pvc, "/status/accessModes"),
        ),
        false => (String::new(), String::new()),
    };
    vec![
        name(pvc),
        Value::from(phase(pvc)),
        Value::from(text(pvc, "/spec/volumeName")),
        Value::from(capacity),
        Value::from(modes),
        Value::from(storage_class(pvc)),
        or_unset(pvc, "/spec/volumeAttributesClassName"),
        age(pvc, now),
        or_unset(pvc, "/spec/volumeMode"),
    ]
}

fn is_default_class(sc: &Value) -> bool {
    let annotations = map(sc, "/metadata/annotations");
    let is_true =
        |key: &str| annotations.and_then(|a| a.get(key)).and_then(Value::as_str) == Some("true");
    is_true("storageclass.kubernetes.io/is-default-class")
        || is_true("storageclass.beta.kubernetes.io/is-default-class")
}

pub(crate) fn storage_class_row(sc: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let mut shown_name = text(sc, "/metadata/name").to_string();
    if is_default_class(sc) {
        shown_name.push_str(" (default)");
    }
    vec![
        Value::from(shown_name),
        Value::from(text(sc, "/provisioner")),
        Value::from(non_empty(sc, "/reclaimPolicy").unwrap_or("Delete")),
        Value::from(non_empty(sc, "/volumeBindingMode").unwrap_or("Immediate")),
        Value::from(flag(sc, "/allowVolumeExpansion")),
        age(sc, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2024-01-03T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn bound_volume_and_claim() {
        let pv = json!({
            "metadata": {"name": "pv1", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"capacity": {"storage": "10Gi"},
                     "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
                     "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "fast",
                     "claimRef": {"namespace": "ns", "name": "data"}, "volumeMode": "Filesystem"},
            "status": {"phase": "Bound"}
        });
        assert_eq!(
            persistent_volume_row(&pv, now()),
            [
                json!("pv1"),
                json!("10Gi"),
                json!("RWO,RWX"),
                json!("Retain"),
                json!("Bound"),
                json!("ns/data"),
                json!("fast"),
                json!("<unset>"),
                json!(""),
                json!("2d"),
                json!("Filesystem")
            ]
        );
        let pvc = json!({"metadata": {"name": "data"}, "spec": {"volumeName": "pv1"},
            "status": {"phase": "Bound", "capacity": {"storage": "10Gi"},
                       "accessModes": ["ReadWriteOnce"]}});
        assert_eq!(
            persistent_volume_claim_row(&pvc, now())[1..5],
            [json!("Bound"), json!("pv1"), json!("10Gi"), json!("RWO")]
        );
        let pending = json!({"spec": {}, "status": {"phase": "Pending"}});
        assert_eq!(persistent_volume_claim_row(&pending, now())[3], json!(""));
    }

    #[test]
    fn default_storage_class() {
        let sc = json!({"metadata": {"name": "standard", "annotations":
                         {"storageclass.kubernetes.io/is-default-class": "true"}},
                        "provisioner": "rancher.io/local-path",
                        "volumeBindingMode": "WaitForFirstConsumer"});
        assert_eq!(
            storage_class_row(&sc, now())[..5],
            [
                json!("standard (default)"),
                json!("rancher.io/local-path"),
                json!("Delete"),
                json!("WaitForFirstConsumer"),
                json!(false)
            ]
        );
    }
}
