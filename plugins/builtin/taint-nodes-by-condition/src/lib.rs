//! Built-in admission plugin `taint-nodes-by-condition`, kube-apiserver's
//! TaintNodesByCondition: a Node is created with the
//! `node.kubernetes.io/not-ready:NoSchedule` taint (unless it has a taint of
//! that key and effect already), so no pod is scheduled to it before its
//! node controller finds it Ready and lifts the taint.

use capstan_plugin_sdk::{
    json, object, AdmissionPlugin, AdmissionRequest, AdmissionResponse, JsonPatch, Operation, Value,
};

const NOT_READY: &str = "node.kubernetes.io/not-ready";
const NO_SCHEDULE: &str = "NoSchedule";

/// The plugin.
pub struct TaintNodesByCondition;

impl AdmissionPlugin for TaintNodesByCondition {
    fn review(req: &AdmissionRequest) -> Result<AdmissionResponse, String> {
        let Some(node) = req
            .written_object("", "nodes")
            .filter(|_| req.operation == Operation::Create)
        else {
            return Ok(AdmissionResponse::allow());
        };
        let taints = object::array(node, &["spec", "taints"]);
        if taints.iter().any(is_not_ready) {
            return Ok(AdmissionResponse::allow());
        }
        Ok(AdmissionResponse::allow().with_patch(add_taint(node).ops()))
    }
}

/// kube's `Taint.MatchTaint`: same key and effect, whatever the value.
fn is_not_ready(taint: &Value) -> bool {
    let field = |name: &str| taint.get(name).and_then(Value::as_str).unwrap_or("");
    field("key") == NOT_READY && field("effect") == NO_SCHEDULE
}

fn add_taint(node: &Value) -> JsonPatch {
    let taint = json!({"key": NOT_READY, "effect": NO_SCHEDULE});
    let spec = node.get("spec").filter(|s| s.is_object());
    match spec.and_then(|s| s.get("taints")).filter(|t| t.is_array()) {
        Some(_) => JsonPatch::new().add(["spec", "taints", "-"], taint),
        None if spec.is_some() => JsonPatch::new().add(["spec", "taints"], json!([taint])),
        None => JsonPatch::new().add(["spec"], json!({"taints": [taint]})),
    }
}

capstan_plugin_sdk::admission_plugin!(TaintNodesByCondition);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::testing;

    fn admit(operation: Operation, node: Value) -> Value {
        let req = testing::request(operation, "v1", "nodes", "Node", "", node.clone());
        let r = TaintNodesByCondition::review(&req).unwrap();
        assert!(r.allowed);
        testing::apply_patch(&node, &r).unwrap()
    }

    fn taints(node: &Value) -> Vec<(String, String)> {
        object::array(node, &["spec", "taints"])
            .iter()
            .map(|t| {
                let s = |k: &str| t[k].as_str().unwrap_or("").to_string();
                (s("key"), s("effect"))
            })
            .collect()
    }

    #[test]
    fn a_new_node_is_tainted_not_ready() {
        let not_ready = (NOT_READY.to_string(), NO_SCHEDULE.to_string());
        let bare = admit(Operation::Create, json!({"metadata": {"name": "n1"}}));
        assert_eq!(taints(&bare), std::slice::from_ref(&not_ready));
        let empty_spec = admit(
            Operation::Create,
            json!({"metadata": {"name": "n"}, "spec": {}}),
        );
        assert_eq!(taints(&empty_spec), std::slice::from_ref(&not_ready));
        let other = json!({"metadata": {"name": "n2"}, "spec": {"taints": [{"key": "gpu", "effect": "NoExecute"}]}});
        let out = admit(Operation::Create, other);
        assert_eq!(
            taints(&out),
            [("gpu".to_string(), "NoExecute".to_string()), not_ready]
        );
    }

    #[test]
    fn a_node_with_the_taint_or_an_update_is_left_alone() {
        let tainted = json!({"metadata": {"name": "n"}, "spec": {"taints": [{"key": NOT_READY, "value": "x", "effect": NO_SCHEDULE}]}});
        assert_eq!(admit(Operation::Create, tainted.clone()), tainted);
        let untainted = json!({"metadata": {"name": "n"}, "spec": {}});
        assert_eq!(admit(Operation::Update, untainted.clone()), untainted);
        let other_effect = json!({"metadata": {"name": "n"}, "spec": {"taints": [{"key": NOT_READY, "effect": "NoExecute"}]}});
        assert_eq!(taints(&admit(Operation::Create, other_effect)).len(), 2);
    }
}
