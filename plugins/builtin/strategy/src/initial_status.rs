//! The status a new object starts with, for the kinds whose status the
//! server sets at once: pods are Pending (with their QoS class), namespaces
//! Active, persistent volumes and claims Pending.

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
        ("", "persistentvolumeclaims" | "persistentvolumes") => Some(json!({"phase": "Pending"})),
        _ => None,
    }
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
    }
}
