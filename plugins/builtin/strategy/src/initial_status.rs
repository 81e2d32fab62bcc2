//! The status a new object starts with: pods are Pending (with their QoS
//! class), namespaces Active, persistent volumes and claims Pending; the
//! other kinds whose PrepareForCreate resets status start with the empty
//! status kube encodes (its non-omitempty fields: Service's `loadBalancer`,
//! a ReplicaSet's `replicas: 0`, …), so a create answers as kube's does.

use capstan_plugin_sdk::strategy::StrategyResource;
use serde_json::{json, Value};

use crate::qos;

/// Sets the initial `status` of a new `object` of `resource`, if its kind has one.
pub fn set(resource: &StrategyResource, object: &mut Value) {
    let Some(status) = initial(resource, object) else {
        return;
    };
    if let Some(fields) = object.as_object_mut() {
        fields.insert("status".into(), status);
    }
}

fn initial(resource: &StrategyResource, object: &Value) -> Option<Value> {
    match (resource.group.as_str(), resource.resource.as_str()) {
        ("", "pods") => Some(json!({"phase": "Pending", "qosClass": qos::class(object)})),
        ("", "namespaces") => Some(json!({"phase": "Active"})),
        ("", "persistentvolumeclaims") => Some(json!({"phase": "Pending"})),
        ("", "persistentvolumes") => Some(volume_pending(object)),
        ("apiregistration.k8s.io", "apiservices") => Some(api_service(object)),
        ("", "services") | ("networking.k8s.io", "ingresses") => Some(json!({"loadBalancer": {}})),
        ("", "replicationcontrollers") | ("apps", "replicasets") => Some(json!({"replicas": 0})),
        ("apps", "statefulsets") => Some(json!({"replicas": 0, "availableReplicas": 0})),
        ("apps", "daemonsets") => Some(json!({
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        })),
        ("policy", "poddisruptionbudgets") => Some(json!({
            "disruptionsAllowed": 0,
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "expectedPods": 0,
        })),
        ("apps", "deployments") | ("batch", "jobs" | "cronjobs") | ("", "resourcequotas") => {
            Some(json!({}))
        }
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            Some(crate::crd::initial_status(object))
        }
        _ => crate::added_kinds::initial_status(resource),
    }
}

/// A new volume is Pending since its creation (`lastPhaseTransitionTime`
/// is the create's time, the object's creationTimestamp).
fn volume_pending(object: &Value) -> Value {
    let mut status = json!({"phase": "Pending"});
    if let Some(now) = created(object) {
        status["lastPhaseTransitionTime"] = now;
    }
    status
}

/// A local APIService (no service) is Available from its creation.
fn api_service(object: &Value) -> Value {
    let local = object.pointer("/spec/service").is_none_or(Value::is_null);
    if !local {
        return json!({});
    }
    let mut available = json!({"type": "Available", "status": "True"});
    if let Some(now) = created(object) {
        available["lastTransitionTime"] = now;
    }
    available["reason"] = json!("Local");
    available["message"] = json!("Local APIServices are always available");
    json!({ "conditions": [available] })
}

/// The create's time: `metadata.creationTimestamp`, which the host sets first.
fn created(object: &Value) -> Option<Value> {
    object
        .pointer("/metadata/creationTimestamp")
        .filter(|t| t.is_string())
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

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
