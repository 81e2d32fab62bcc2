//! The status a new object starts with: pods are Pending (with their QoS
//! class), namespaces Active, persistent volumes and claims Pending; the
//! other kinds whose PrepareForCreate resets status start with the empty
//! status kube encodes (its non-omitempty fields: Service's `loadBalancer`,
//! a ReplicaSet's `replicas: 0`, …), so a create answers as kube's does.

use capstan_plugin_sdk::strategy::StrategyResource;
use serde_json::Value;

/// Sets the initial `status` of a new `object` of `resource`, if its kind
/// has one (`KindRules::initial_status`).
pub fn set(resource: &StrategyResource, object: &mut Value) {
    let rules = crate::kinds::rules(resource);
    let Some(status) = rules.initial_status(resource, object) else {
        return;
    };
    if let Some(fields) = object.as_object_mut() {
        fields.insert("status".into(), status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn status_of(plural: &str, mut object: Value) -> Value {
        let resource = StrategyResource {
            resource: plural.into(),
            ..Default::default()
        };
        set(&resource, &mut object);
        object.get("status").cloned().unwrap_or(Value::Null)
    }

    #[test]
    fn initial_phases() {
        let pod = json!({"spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Running"}});
        assert_eq!(
            status_of("pods", pod),
            json!({"phase": "Pending", "qosClass": "BestEffort"})
        );
        assert_eq!(
            status_of("namespaces", json!({})),
            json!({"phase": "Active"})
        );
        assert_eq!(
            status_of("persistentvolumeclaims", json!({})),
            json!({"phase": "Pending"})
        );
        assert_eq!(
            status_of("persistentvolumes", json!({})),
            json!({"phase": "Pending"})
        );
        assert_eq!(status_of("configmaps", json!({})), Value::Null);
        let created = json!({"metadata": {"creationTimestamp": "2024-01-01T00:00:00Z"}});
        assert_eq!(
            status_of("persistentvolumes", created),
            json!({"phase": "Pending", "lastPhaseTransitionTime": "2024-01-01T00:00:00Z"})
        );
    }

    fn status_in(group: &str, plural: &str) -> Value {
        let resource = StrategyResource {
            group: group.into(),
            resource: plural.into(),
            ..Default::default()
        };
        let mut object = json!({"status": {"replicas": 5}});
        set(&resource, &mut object);
        object["status"].clone()
    }

    #[test]
    fn local_api_services_are_available_from_their_creation() {
        let resource = StrategyResource {
            group: "apiregistration.k8s.io".into(),
            resource: "apiservices".into(),
            ..Default::default()
        };
        let mut local = json!({"metadata": {"creationTimestamp": "2024-01-01T00:00:00Z"},
                               "spec": {"group": "g", "version": "v1"}});
        set(&resource, &mut local);
        assert_eq!(
            local["status"],
            json!({"conditions": [{"type": "Available", "status": "True",
                "lastTransitionTime": "2024-01-01T00:00:00Z", "reason": "Local",
                "message": "Local APIServices are always available"}]})
        );
        let mut remote = json!({"spec": {"service": {"name": "s", "namespace": "n"}}});
        set(&resource, &mut remote);
        assert_eq!(remote["status"], json!({}));
    }

    #[test]
    fn empty_statuses_as_kube_encodes_them() {
        assert_eq!(status_in("", "services"), json!({"loadBalancer": {}}));
        assert_eq!(status_in("apps", "deployments"), json!({}));
        assert_eq!(status_in("apps", "replicasets"), json!({"replicas": 0}));
        assert_eq!(
            status_in("apps", "statefulsets"),
            json!({"replicas": 0, "availableReplicas": 0})
        );
        assert_eq!(status_in("apps", "daemonsets")["numberReady"], 0);
        assert_eq!(status_in("batch", "jobs"), json!({}));
        assert_eq!(
            status_in("networking.k8s.io", "ingresses"),
            json!({"loadBalancer": {}})
        );
    }
}
