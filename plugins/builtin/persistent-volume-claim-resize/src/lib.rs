//! Built-in admission plugin `persistent-volume-claim-resize`,
//! kube-apiserver's PersistentVolumeClaimResize: a claim's storage request
//! may grow only when the claim is Bound and its StorageClass (the same
//! before and after) has `allowVolumeExpansion: true`.

use capstan_plugin_sdk::{
    host, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, Operation, Value,
};
use capstan_quota::Quantity;

const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// The plugin.
pub struct PersistentVolumeClaimResize;

impl AdmissionPlugin for PersistentVolumeClaimResize {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let updated = req
            .written_object("", "persistentvolumeclaims")
            .filter(|_| req.operation == Operation::Update);
        let (Some(claim), Some(old)) = (updated, req.old_object.as_ref()) else {
            return Ok(AdmissionResponse::allow());
        };
        if storage(claim) <= storage(old) {
            return Ok(AdmissionResponse::allow());
        }
        if object::get_str(old, &["status", "phase"]) != Some("Bound") {
            let message = "Only bound persistent volume claims can be expanded";
            return Ok(AdmissionResponse::forbidden(req, message));
        }
        if !allows_resize(claim, old) {
            let message = "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize";
            return Ok(AdmissionResponse::forbidden(req, message));
        }
        Ok(AdmissionResponse::allow())
    }
}

/// `spec.resources.requests.storage`, zero when missing.
fn storage(claim: &Value) -> Quantity {
    object::get_str(claim, &["spec", "resources", "requests", "storage"])
        .and_then(|text| Quantity::parse(text).ok())
        .unwrap_or_else(|| Quantity::from_units(0))
}

/// kube's `GetPersistentVolumeClaimClass`: the beta annotation first.
fn class(claim: &Value) -> String {
    let annotations = object::annotations(claim);
    match annotations.get(BETA_CLASS_ANNOTATION) {
        Some(class) => class.clone(),
        None => object::get_str(claim, &["spec", "storageClassName"])
            .unwrap_or("")
            .to_string(),
    }
}

/// The same class before and after, and that class allows expansion.
fn allows_resize(claim: &Value, old: &Value) -> bool {
    let (class, old_class) = (class(claim), class(old));
    if class.is_empty() || class != old_class {
        return false;
    }
    match host::get_object("storage.k8s.io/v1", "storageclasses", None, &class) {
        Ok(Some(sc)) => sc.get("allowVolumeExpansion").and_then(Value::as_bool) == Some(true),
        _ => false,
    }
}

capstan_plugin_sdk::admission_plugin!(PersistentVolumeClaimResize);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, testing};

    fn claim(size: &str, class: &str, phase: &str) -> Value {
        json!({"metadata": {"name": "data"}, "spec": {"storageClassName": class,
            "resources": {"requests": {"storage": size}}}, "status": {"phase": phase}})
    }

    fn update(old: Value, new: Value) -> AdmissionResponse {
        let mut req = testing::request(
            Operation::Update,
            "v1",
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            "ns",
            new,
        );
        req.old_object = Some(old);
        PersistentVolumeClaimResize::review(&req).unwrap()
    }

    fn storage_class(name: &str, expands: bool) {
        let sc = json!({"metadata": {"name": name}, "allowVolumeExpansion": expands});
        testing::put_object("storage.k8s.io/v1", "storageclasses", sc);
    }

    #[test]
    fn growing_a_bound_claim_of_an_expandable_class_is_allowed() {
        testing::reset();
        storage_class("fast", true);
        assert!(update(claim("1Gi", "fast", "Bound"), claim("2Gi", "fast", "Bound")).allowed);
        assert!(
            update(
                claim("2Gi", "slow", "Pending"),
                claim("1500Mi", "slow", "Pending")
            )
            .allowed
        );
    }

    #[test]
    fn growing_an_unbound_claim_is_refused() {
        testing::reset();
        storage_class("fast", true);
        let r = update(
            claim("1Gi", "fast", "Pending"),
            claim("2Gi", "fast", "Pending"),
        );
        assert_eq!(r.code(), 403);
        assert_eq!(
            r.message(),
            r#"persistentvolumeclaims "data" is forbidden: Only bound persistent volume claims can be expanded"#
        );
    }

    #[test]
    fn growing_without_an_expandable_class_is_refused() {
        testing::reset();
        storage_class("fixed", false);
        storage_class("fast", true);
        let refused = "persistentvolumeclaims \"data\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize";
        for (old, new) in [
            ("fixed", "fixed"),
            ("missing", "missing"),
            ("", ""),
            ("fast", "fixed"),
        ] {
            let r = update(claim("1Gi", old, "Bound"), claim("2Gi", new, "Bound"));
            assert_eq!(r.message(), refused, "{old} -> {new}");
        }
    }
}
