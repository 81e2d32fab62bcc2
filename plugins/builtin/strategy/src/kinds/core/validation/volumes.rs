//! PersistentVolumes and PersistentVolumeClaims (`ValidatePersistentVolumeSpec`,
//! `ValidatePersistentVolumeClaimSpec`): access modes, capacity and requests,
//! reclaim policy, exactly one volume source, class names, volume modes.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::quantities;
use crate::common;

/// `sets.List(supportedAccessModes)`: sorted.
const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
const RECLAIM_POLICIES: [&str; 3] = ["Delete", "Recycle", "Retain"];
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];
/// The volume sources of a PersistentVolume, in the order kube checks them.
const SOURCES: [&str; 22] = [
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
];

/// Whether `key` of a PersistentVolume's spec is one of its volume sources.
pub fn is_source(key: &str) -> bool {
    SOURCES.contains(&key)
}

fn access_modes(spec: &Value, required_detail: &str, causes: &mut Vec<Cause>) {
    let modes: Vec<&str> = common::list(spec, "accessModes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if modes.is_empty() {
        causes.push(common::required("spec.accessModes", required_detail));
    }
    let (mut once_pod, mut other) = (false, false);
    for mode in &modes {
        if !ACCESS_MODES.contains(mode) {
            causes.push(common::not_supported(
                "spec.accessModes",
                mode,
                &ACCESS_MODES,
            ));
        } else if *mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        let detail = "may not use ReadWriteOncePod with other access modes";
        causes.push(common::forbidden("spec.accessModes", detail));
    }
}

fn class_name(spec: &Value, causes: &mut Vec<Cause>) {
    let class = common::text(spec, "storageClassName");
    if !class.is_empty() {
        common::invalid_each(
            causes,
            "spec.storageClassName",
            class,
            kube_rules::dns1123_subdomain(class),
        );
    }
}

fn volume_mode(spec: &Value, causes: &mut Vec<Cause>) {
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        if !VOLUME_MODES.contains(&mode) {
            causes.push(common::not_supported(
                "spec.volumeMode",
                mode,
                &VOLUME_MODES,
            ));
        }
    }
}

/// `ValidatePersistentVolume`'s spec checks.
pub fn persistent_volume(pv: &Value) -> Vec<Cause> {
    let spec = &pv["spec"];
    let mut causes = Vec::new();
    access_modes(spec, "", &mut causes);
    let capacity = spec.get("capacity").and_then(Value::as_object);
    if capacity.is_none_or(|c| c.is_empty()) {
        causes.push(common::required("spec.capacity", ""));
    }
    for (name, text) in capacity.into_iter().flatten() {
        let field = format!("spec.capacity[{name}]");
        let q = quantities::of(text);
        if q.value() < 0 {
            let detail = "must be a valid resource quantity";
            causes.push(common::invalid(&field, &q.value().to_string(), detail));
        }
        if q <= capstan_quota::Quantity::ZERO {
            causes.push(common::invalid_str(
                &field,
                &q.to_string(),
                "must be greater than zero",
            ));
        }
    }
    let policy = common::text(spec, "persistentVolumeReclaimPolicy");
    if !policy.is_empty() && !RECLAIM_POLICIES.contains(&policy) {
        let field = "spec.persistentVolumeReclaimPolicy";
        causes.push(common::not_supported(field, policy, &RECLAIM_POLICIES));
    }
    sources(spec, &mut causes);
    class_name(spec, &mut causes);
    volume_mode(spec, &mut causes);
    causes
}

/// Exactly one volume source; a local volume needs node affinity.
fn sources(spec: &Value, causes: &mut Vec<Cause>) {
    let mut found = 0;
    for source in SOURCES
        .iter()
        .filter(|s| spec.get(**s).is_some_and(|v| !v.is_null()))
    {
        if found > 0 && *source != "flexVolume" {
            let detail = "may not specify more than 1 volume type";
            causes.push(common::forbidden(&format!("spec.{source}"), detail));
            continue;
        }
        found += 1;
        if *source == "local" && spec.get("nodeAffinity").is_none_or(Value::is_null) {
            causes.push(common::required(
                "spec.nodeAffinity",
                "Local volume requires node affinity",
            ));
        }
    }
    if found == 0 {
        causes.push(common::required("spec", "must specify a volume type"));
    }
}

/// `ValidatePersistentVolumeClaimSpec`.
pub fn persistent_volume_claim(pvc: &Value) -> Vec<Cause> {
    let spec = &pvc["spec"];
    let mut causes = Vec::new();
    access_modes(spec, "at least 1 access mode is required", &mut causes);
    let field = "spec.resources[storage]";
    match spec
        .pointer("/resources/requests/storage")
        .and_then(Value::as_str)
    {
        None => causes.push(common::required(field, "")),
        Some(text) => {
            let q = quantities::parse(text);
            if q <= capstan_quota::Quantity::ZERO {
                causes.push(common::invalid_str(
                    field,
                    &q.to_string(),
                    "must be greater than zero",
                ));
            }
        }
    }
    class_name(spec, &mut causes);
    volume_mode(spec, &mut causes);
    if let Some(source) = spec.get("dataSource").filter(|v| v.is_object()) {
        data_source(source, &mut causes);
    }
    causes
}

/// `validateDataSource`'s first checks.
fn data_source(source: &Value, causes: &mut Vec<Cause>) {
    let (name, kind) = (common::text(source, "name"), common::text(source, "kind"));
    if name.is_empty() {
        causes.push(common::required("spec.dataSource.name", ""));
    }
    if kind.is_empty() {
        causes.push(common::required("spec.dataSource.kind", ""));
    }
    if common::text(source, "apiGroup").is_empty() && kind != "PersistentVolumeClaim" {
        let detail = "must be 'PersistentVolumeClaim' when referencing the default apiGroup";
        causes.push(common::invalid_str("spec.dataSource", kind, detail));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn a_volume_needs_exactly_one_source() {
        let pv =
            json!({"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}});
        assert_eq!(
            messages(&persistent_volume(&pv)),
            ["spec: Required value: must specify a volume type"]
        );
        let two = json!({"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/d"}, "nfs": {"server": "s", "path": "/"}}});
        assert_eq!(
            messages(&persistent_volume(&two)),
            ["spec.nfs: Forbidden: may not specify more than 1 volume type"]
        );
    }

    #[test]
    fn a_claim_needs_supported_modes_and_a_storage_request() {
        let pvc = json!({"spec": {"accessModes": ["Bogus"], "resources": {"requests": {}}}});
        assert_eq!(
            messages(&persistent_volume_claim(&pvc)),
            ["spec.accessModes: Unsupported value: \"Bogus\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
             "spec.resources[storage]: Required value"]
        );
    }
}
