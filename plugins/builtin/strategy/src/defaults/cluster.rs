//! The defaults of the smaller cluster-wide groups: storage.k8s.io/v1
//! StorageClass, scheduling.k8s.io/v1 PriorityClass, rbac.authorization.k8s.io/v1
//! bindings and apiregistration.k8s.io/v1 APIService (each from its
//! group's `defaults.go` in kube).

use serde_json::{json, Value};

use crate::json::{child_mut, items_mut, set_default, set_if_zero};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// `SetDefaults_StorageClass`: volumes deleted with their claim, bound at once.
pub fn storage_class(object: &mut Value) {
    set_default(object, "/reclaimPolicy", json!("Delete"));
    set_default(object, "/volumeBindingMode", json!("Immediate"));
}

/// `SetDefaults_PriorityClass`.
pub fn priority_class(object: &mut Value) {
    set_default(object, "/preemptionPolicy", json!("PreemptLowerPriority"));
}

/// `SetDefaults_RoleBinding` / `SetDefaults_ClusterRoleBinding` and
/// `SetDefaults_Subject`: the role and user or group subjects are RBAC's.
pub fn binding(object: &mut Value) {
    if let Some(role_ref) = child_mut(object, "roleRef") {
        set_if_zero(role_ref, "/apiGroup", json!(RBAC_GROUP));
    }
    for subject in items_mut(object, "subjects") {
        let kind = subject.get("kind").and_then(Value::as_str);
        if matches!(kind, Some("User" | "Group")) {
            set_if_zero(subject, "/apiGroup", json!(RBAC_GROUP));
        }
    }
}

/// `SetDefaults_ServiceReference`: a service is reached on port 443.
pub fn api_service(object: &mut Value) {
    if let Some(service) = object
        .pointer_mut("/spec/service")
        .filter(|s| s.is_object())
    {
        set_default(service, "/port", json!(443));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::with;

    #[test]
    fn storage_and_priority_classes() {
        let sc = with(storage_class, json!({"provisioner": "p"}));
        assert_eq!(
            sc,
            json!({"provisioner": "p", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"})
        );
        let pc = with(priority_class, json!({"value": 10}));
        assert_eq!(
            pc,
            json!({"value": 10, "preemptionPolicy": "PreemptLowerPriority"})
        );
        let never = with(
            priority_class,
            json!({"value": 1, "preemptionPolicy": "Never"}),
        );
        assert_eq!(never["preemptionPolicy"], "Never");
    }

    #[test]
    fn bindings_name_the_rbac_group() {
        let b = with(
            binding,
            json!({"roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "u"}, {"kind": "Group", "name": "g"},
                         {"kind": "ServiceAccount", "name": "sa", "namespace": "d"}]}),
        );
        assert_eq!(b["roleRef"]["apiGroup"], RBAC_GROUP);
        assert_eq!(b["subjects"][0]["apiGroup"], RBAC_GROUP);
        assert_eq!(b["subjects"][1]["apiGroup"], RBAC_GROUP);
        assert!(b["subjects"][2].get("apiGroup").is_none());
    }

    #[test]
    fn api_service_ports() {
        let remote = with(
            api_service,
            json!({"spec": {"service": {"name": "s", "namespace": "n"}}}),
        );
        assert_eq!(remote["spec"]["service"]["port"], 443);
        let local = with(
            api_service,
            json!({"spec": {"group": "g", "version": "v1"}}),
        );
        assert!(local["spec"].get("service").is_none());
    }
}
