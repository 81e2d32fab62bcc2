//! The `discovery.k8s.io` group's kinds.

pub(crate) mod table;
use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::{Generation, KindRules, Printer};
use crate::json::items_mut;

pub(super) struct EndpointSlices;

impl KindRules for EndpointSlices {
    fn defaults(&self, _: &StrategyResource, object: &mut Value) {
        crate::kinds::networking::defaults::endpoint_slice(object);
    }
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        crate::kinds::core::validation::endpoint_slice(object, old)
    }
    fn prepare_for_create(&self, object: &mut Value) {
        no_deprecated_topology(object);
    }
    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        topology_on_update(object, old);
    }
    fn generation(&self) -> Option<Generation> {
        Some(Generation::DesiredStateAndLabels)
    }
    fn printer(&self) -> Option<Printer> {
        Some(Printer::new(
            table::endpoint_slice_columns,
            table::endpoint_slice_row,
        ))
    }
}

/// v1 writes of an EndpointSlice drop `deprecatedTopology`.
fn no_deprecated_topology(slice: &mut Value) {
    for endpoint in items_mut(slice, "endpoints") {
        if let Some(fields) = endpoint.as_object_mut() {
            fields.remove("deprecatedTopology");
        }
    }
}

/// ... unless the endpoints are unchanged; a node name the stored slice
/// recorded in the topology becomes `nodeName`.
fn topology_on_update(slice: &mut Value, old: &Value) {
    if slice.get("endpoints") == old.get("endpoints") {
        return;
    }
    let hostname = "/deprecatedTopology/kubernetes.io~1hostname";
    let known: Vec<Value> = old
        .get("endpoints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.pointer(hostname).cloned())
        .collect();
    for endpoint in items_mut(slice, "endpoints") {
        let node = endpoint.pointer(hostname).cloned();
        let unnamed = endpoint.get("nodeName").is_none_or(Value::is_null);
        if let Some(node) = node.filter(|n| unnamed && known.contains(n)) {
            endpoint["nodeName"] = node;
        }
        if let Some(fields) = endpoint.as_object_mut() {
            fields.remove("deprecatedTopology");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn endpoint_slices_drop_deprecated_topology() {
        let old = json!({"endpoints": [{"addresses": ["1.1.1.1"],
            "deprecatedTopology": {"kubernetes.io/hostname": "n1"}}]});
        let mut slice = json!({"endpoints": [{"addresses": ["1.1.1.2"],
            "deprecatedTopology": {"kubernetes.io/hostname": "n1"}}]});
        topology_on_update(&mut slice, &old);
        assert_eq!(
            slice["endpoints"],
            json!([{"addresses": ["1.1.1.2"], "nodeName": "n1"}])
        );
    }
}
