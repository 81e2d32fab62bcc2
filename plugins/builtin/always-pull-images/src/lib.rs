//! Built-in admission plugin `always-pull-images`, kube-apiserver's
//! AlwaysPullImages: every container, init container and ephemeral container
//! of a pod gets `imagePullPolicy: Always`, so a cached image can't be used
//! by a pod that could not pull it itself. Updates that bring no new image
//! are left alone, as in kube.

use std::collections::BTreeSet;

use capstan_plugin_sdk::{
    json, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, JsonPatch, Operation, Value,
};

/// The plugin.
pub struct AlwaysPullImages;

impl AdmissionPlugin for AlwaysPullImages {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let mutating = matches!(req.operation, Operation::Create | Operation::Update);
        let Some(pod) = req
            .object
            .as_ref()
            .filter(|_| mutating && req.is_resource("", "pods"))
        else {
            return Ok(AdmissionResponse::allow());
        };
        if req.operation == Operation::Update && !has_new_image(pod, req.old_object.as_ref()) {
            return Ok(AdmissionResponse::allow());
        }
        Ok(AdmissionResponse::allow().with_patch(pull_always(pod).ops()))
    }
}

fn images(pod: &Value) -> BTreeSet<&str> {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    object::pod_containers(spec)
        .into_iter()
        .map(|(_, _, c)| c.get("image").and_then(Value::as_str).unwrap_or(""))
        .collect()
}

/// kube's isUpdateWithNoNewImages, inverted.
fn has_new_image(pod: &Value, old: Option<&Value>) -> bool {
    let Some(old) = old else { return true };
    let before = images(old);
    images(pod).iter().any(|image| !before.contains(image))
}

fn pull_always(pod: &Value) -> JsonPatch {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let mut patch = JsonPatch::new();
    for (field, index, container) in object::pod_containers(spec) {
        if container.get("imagePullPolicy").and_then(Value::as_str) != Some("Always") {
            let index = index.to_string();
            patch = patch.add(
                ["spec", field, index.as_str(), "imagePullPolicy"],
                json!("Always"),
            );
        }
    }
    patch
}

capstan_plugin_sdk::admission_plugin!(AlwaysPullImages);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::testing;

    fn pod() -> Value {
        json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": [{"name": "i", "image": "busybox"}],
            "containers": [{"name": "a", "image": "nginx", "imagePullPolicy": "IfNotPresent"},
                           {"name": "b", "image": "redis", "imagePullPolicy": "Always"}],
            "ephemeralContainers": [{"name": "e", "image": "debug", "imagePullPolicy": "Never"}]}})
    }

    #[test]
    fn every_container_pulls_always() {
        let req = testing::request(Operation::Create, "v1", "pods", "Pod", "ns", pod());
        let r = AlwaysPullImages::review(&req).unwrap();
        assert!(r.allowed);
        assert_eq!(r.patch_type.as_deref(), Some("JSONPatch"));
        let out = testing::apply_patch(&pod(), &r).unwrap();
        for (_, _, c) in object::pod_containers(&out["spec"]) {
            assert_eq!(c["imagePullPolicy"], "Always", "{c}");
        }
        assert_eq!(
            r.patch_ops.len(),
            3,
            "the container already on Always is not patched"
        );
    }

    #[test]
    fn other_resources_and_subresources_are_untouched() {
        let cm = testing::request(
            Operation::Create,
            "v1",
            "configmaps",
            "ConfigMap",
            "ns",
            pod(),
        );
        assert!(AlwaysPullImages::review(&cm).unwrap().patch.is_none());
        let mut status = testing::request(Operation::Update, "v1", "pods", "Pod", "ns", pod());
        status.sub_resource = Some("status".into());
        assert!(AlwaysPullImages::review(&status).unwrap().patch.is_none());
    }

    #[test]
    fn update_without_new_image_is_untouched_but_new_image_is_patched() {
        let mut req = testing::request(Operation::Update, "v1", "pods", "Pod", "ns", pod());
        req.old_object = Some(pod());
        assert!(AlwaysPullImages::review(&req).unwrap().patch.is_none());
        let mut changed = pod();
        changed["spec"]["containers"][0]["image"] = json!("nginx:2");
        req.object = Some(changed);
        assert!(AlwaysPullImages::review(&req).unwrap().patch.is_some());
    }
}
