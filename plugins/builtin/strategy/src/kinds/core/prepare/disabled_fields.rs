//! Fields of features that kube-apiserver 1.32 turns off by default
//! (`dropDisabledFields` of the pod strategy): a write drops them unless
//! the stored object already uses them. UserNamespacesSupport
//! (`spec.hostUsers`), DynamicResourceAllocation (a pod's `resourceClaims`
//! and its containers' `resources.claims`). (A StatefulSet's
//! MaxUnavailableStatefulSet field is `controllers::stateful_set_*`'s.)

use serde_json::Value;

use crate::json::{child_mut, items_mut};

const CONTAINER_LISTS: [&str; 3] = ["containers", "initContainers", "ephemeralContainers"];

/// A pod's, on create (`old` None) and update.
pub fn pod(pod: &mut Value, old: Option<&Value>) {
    let uses = |pointer: &str| old.and_then(|o| o.pointer(pointer)).is_some();
    let Some(spec) = child_mut(pod, "spec") else {
        return;
    };
    if !uses("/spec/hostUsers") {
        remove(spec, "hostUsers");
    }
    if !uses("/spec/resourceClaims") {
        remove(spec, "resourceClaims");
        for list in CONTAINER_LISTS {
            for container in items_mut(spec, list) {
                if let Some(resources) = child_mut(container, "resources") {
                    remove(resources, "claims");
                }
            }
        }
    }
}

pub fn pod_create(object: &mut Value) {
    pod(object, None);
}

pub fn pod_update(object: &mut Value, old: &Value) {
    pod(object, Some(old));
}

fn remove(object: &mut Value, key: &str) {
    if let Some(fields) = object.as_object_mut() {
        fields.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_of_disabled_features_are_dropped_unless_in_use() {
        let mut p = json!({"spec": {"hostUsers": false, "resourceClaims": [{"name": "g"}],
            "containers": [{"name": "c", "resources": {"claims": [{"name": "g"}]}}]}});
        pod_create(&mut p);
        assert_eq!(
            p,
            json!({"spec": {"containers": [{"name": "c", "resources": {}}]}})
        );
        let old = json!({"spec": {"hostUsers": false}});
        let mut q = json!({"spec": {"hostUsers": false}});
        pod_update(&mut q, &old);
        assert_eq!(q["spec"]["hostUsers"], false);
    }
}
