//! Built-in admission plugin `storage-object-in-use-protection`,
//! kube-apiserver's StorageObjectInUseProtection: a PersistentVolume is
//! created with the `kubernetes.io/pv-protection` finalizer and a
//! PersistentVolumeClaim with `kubernetes.io/pvc-protection`, so neither is
//! removed while in use (the host's `controllers/storage_protection.rs`
//! lifts them once it is not).

use capstan_plugin_sdk::{
    json, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, JsonPatch, Operation, Value,
};

const PV_PROTECTION: &str = "kubernetes.io/pv-protection";
const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";

/// The plugin.
pub struct StorageObjectInUseProtection;

impl AdmissionPlugin for StorageObjectInUseProtection {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        if req.operation != Operation::Create {
            return Ok(AdmissionResponse::allow());
        }
        let written = [
            ("persistentvolumes", PV_PROTECTION),
            ("persistentvolumeclaims", PVC_PROTECTION),
        ]
        .into_iter()
        .find_map(|(resource, finalizer)| Some((req.written_object("", resource)?, finalizer)));
        let Some((obj, finalizer)) = written else {
            return Ok(AdmissionResponse::allow());
        };
        Ok(AdmissionResponse::allow().with_patch(add_finalizer(obj, finalizer).ops()))
    }
}

/// The finalizer appended, unless the object has it already.
fn add_finalizer(obj: &Value, finalizer: &str) -> JsonPatch {
    let finalizers = object::array(obj, &["metadata", "finalizers"]);
    if finalizers.iter().any(|f| f.as_str() == Some(finalizer)) {
        return JsonPatch::new();
    }
    let meta = obj.get("metadata").filter(|m| m.is_object());
    match meta
        .and_then(|m| m.get("finalizers"))
        .filter(|f| f.is_array())
    {
        Some(_) => JsonPatch::new().add(["metadata", "finalizers", "-"], json!(finalizer)),
        None if meta.is_some() => {
            JsonPatch::new().add(["metadata", "finalizers"], json!([finalizer]))
        }
        None => JsonPatch::new().add(["metadata"], json!({"finalizers": [finalizer]})),
    }
}

capstan_plugin_sdk::admission_plugin!(StorageObjectInUseProtection);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::testing;

    fn admit(operation: Operation, resource: &str, obj: Value) -> Value {
        let req = testing::request(operation, "v1", resource, "X", "ns", obj.clone());
        let r = StorageObjectInUseProtection::review(&req).unwrap();
        assert!(r.allowed);
        testing::apply_patch(&obj, &r).unwrap()
    }

    #[test]
    fn claims_and_volumes_get_their_protection_finalizer_on_create() {
        let claim = admit(
            Operation::Create,
            "persistentvolumeclaims",
            json!({"metadata": {"name": "c"}}),
        );
        assert_eq!(claim["metadata"]["finalizers"], json!([PVC_PROTECTION]));
        let volume = json!({"metadata": {"name": "v", "finalizers": ["mine"]}});
        let volume = admit(Operation::Create, "persistentvolumes", volume);
        assert_eq!(
            volume["metadata"]["finalizers"],
            json!(["mine", PV_PROTECTION])
        );
    }

    #[test]
    fn present_finalizers_updates_and_other_kinds_are_left_alone() {
        let protected = json!({"metadata": {"name": "c", "finalizers": [PVC_PROTECTION]}});
        let out = admit(
            Operation::Create,
            "persistentvolumeclaims",
            protected.clone(),
        );
        assert_eq!(out, protected);
        let plain = json!({"metadata": {"name": "c"}});
        assert_eq!(
            admit(Operation::Update, "persistentvolumeclaims", plain.clone()),
            plain
        );
        assert_eq!(admit(Operation::Create, "configmaps", plain.clone()), plain);
    }
}
