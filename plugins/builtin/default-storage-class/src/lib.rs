//! Built-in admission plugin `default-storage-class`, kube-apiserver's
//! DefaultStorageClass: a PersistentVolumeClaim created without a class
//! (no `spec.storageClassName`, no beta class annotation) gets the default
//! StorageClass, the one annotated `storageclass.kubernetes.io/is-default-class:
//! "true"` (newest first when several are, then by name, as kube chooses).

use capstan_plugin_sdk::{
    host, json, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, JsonPatch, Operation,
    Value,
};

const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";
const DEFAULT_ANNOTATIONS: [&str; 2] = [
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
];

/// The plugin.
pub struct DefaultStorageClass;

impl AdmissionPlugin for DefaultStorageClass {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let creates =
            req.operation == Operation::Create && req.is_resource("", "persistentvolumeclaims");
        let Some(claim) = req.object.as_ref().filter(|_| creates) else {
            return Ok(AdmissionResponse::allow());
        };
        if has_class(claim) {
            return Ok(AdmissionResponse::allow());
        }
        let classes =
            match host::list_objects("storage.k8s.io/v1", "storageclasses", None, None, None) {
                Ok(classes) => classes,
                Err(e) => return Ok(AdmissionResponse::forbidden(req, &e)),
            };
        let Some(name) = default_class(&classes) else {
            return Ok(AdmissionResponse::allow());
        };
        host::log(
            host::Level::Debug,
            &format!(
                "defaulting storage class for claim {} to {name}",
                req.object_name()
            ),
        );
        let patch = if claim.get("spec").is_some_and(Value::is_object) {
            JsonPatch::new().add(["spec", "storageClassName"], json!(name))
        } else {
            JsonPatch::new().add(["spec"], json!({"storageClassName": name}))
        };
        Ok(AdmissionResponse::allow().with_patch(patch.ops()))
    }
}

/// A class is set when `spec.storageClassName` is present (even "") or the beta annotation is.
fn has_class(claim: &Value) -> bool {
    let field = object::get(claim, &["spec", "storageClassName"]).is_some_and(|v| !v.is_null());
    field || object::annotations(claim).contains_key(BETA_CLASS_ANNOTATION)
}

/// The newest class marked default (ties by name), if any.
fn default_class(classes: &[Value]) -> Option<String> {
    let mut defaults: Vec<(&str, &str)> = classes
        .iter()
        .filter(|c| {
            let annotations = object::annotations(c);
            DEFAULT_ANNOTATIONS
                .iter()
                .any(|a| annotations.get(*a).map(String::as_str) == Some("true"))
        })
        .map(|c| {
            (
                object::get_str(c, &["metadata", "creationTimestamp"]).unwrap_or(""),
                object::name(c),
            )
        })
        .collect();
    defaults.sort_by(|a, b| b.0.cmp(a.0).then(a.1.cmp(b.1)));
    defaults.first().map(|(_, name)| name.to_string())
}

capstan_plugin_sdk::admission_plugin!(DefaultStorageClass);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::testing;

    fn class(name: &str, default: bool, created: &str) {
        let flag = if default { "true" } else { "false" };
        testing::put_object(
            "storage.k8s.io/v1",
            "storageclasses",
            json!({"metadata": {"name": name, "creationTimestamp": created,
                "annotations": {"storageclass.kubernetes.io/is-default-class": flag}}}),
        );
    }

    fn create(claim: Value) -> (AdmissionResponse, Value) {
        let req = testing::request(
            Operation::Create,
            "v1",
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            "ns",
            claim.clone(),
        );
        let r = DefaultStorageClass::review(&req).unwrap();
        let out = testing::apply_patch(&claim, &r).unwrap();
        (r, out)
    }

    #[test]
    fn claim_without_class_gets_the_newest_default() {
        testing::reset();
        class("slow", true, "2024-01-01T00:00:00Z");
        class("fast", true, "2025-01-01T00:00:00Z");
        class("other", false, "2026-01-01T00:00:00Z");
        let (_, out) = create(json!({"metadata": {"name": "data"}, "spec": {"resources": {}}}));
        assert_eq!(out["spec"]["storageClassName"], "fast");
    }

    #[test]
    fn explicit_class_even_empty_is_kept() {
        testing::reset();
        class("fast", true, "2025-01-01T00:00:00Z");
        let (r, _) =
            create(json!({"metadata": {"name": "data"}, "spec": {"storageClassName": ""}}));
        assert!(r.patch.is_none());
        let (r, _) = create(
            json!({"metadata": {"name": "d", "annotations": {BETA_CLASS_ANNOTATION: "x"}}, "spec": {}}),
        );
        assert!(r.patch.is_none());
    }

    #[test]
    fn no_default_class_no_change_and_updates_ignored() {
        testing::reset();
        class("plain", false, "2025-01-01T00:00:00Z");
        let (r, _) = create(json!({"metadata": {"name": "data"}, "spec": {}}));
        assert!(r.allowed && r.patch.is_none());
        class("fast", true, "2025-01-01T00:00:00Z");
        let update = testing::request(
            Operation::Update,
            "v1",
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            "ns",
            json!({"spec": {}}),
        );
        assert!(DefaultStorageClass::review(&update)
            .unwrap()
            .patch
            .is_none());
    }
}
