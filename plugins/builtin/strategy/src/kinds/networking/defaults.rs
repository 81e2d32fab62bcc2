//! The networking.k8s.io/v1 defaults (kube's `pkg/apis/networking/v1/defaults.go`)
//! and discovery.k8s.io/v1's EndpointSlice ports (`pkg/apis/discovery/v1`).

use serde_json::{json, Value};

use crate::json::{child_mut, is_empty, items_mut, set_default};

/// `SetDefaults_NetworkPolicy`: policyTypes from what the spec states
/// (Ingress always, Egress when there are egress rules); every rule's
/// ports are TCP unless told otherwise.
pub fn network_policy(object: &mut Value) {
    let Some(spec) = child_mut(object, "spec") else {
        return;
    };
    for direction in ["ingress", "egress"] {
        for rule in items_mut(spec, direction) {
            for port in items_mut(rule, "ports") {
                set_default(port, "/protocol", json!("TCP"));
            }
        }
    }
    if is_empty(spec.get("policyTypes")) {
        let mut types = vec![json!("Ingress")];
        if !is_empty(spec.get("egress")) {
            types.push(json!("Egress"));
        }
        spec["policyTypes"] = Value::Array(types);
    }
}

/// `SetDefaults_IngressClass`: parameters are cluster-scoped unless told otherwise.
pub fn ingress_class(object: &mut Value) {
    if let Some(parameters) = object
        .pointer_mut("/spec/parameters")
        .filter(|p| p.is_object())
    {
        set_default(parameters, "/scope", json!("Cluster"));
    }
}

/// `SetDefaults_EndpointPort`: an unnamed TCP port unless told otherwise.
pub fn endpoint_slice(object: &mut Value) {
    for port in items_mut(object, "ports") {
        set_default(port, "/name", json!(""));
        set_default(port, "/protocol", json!("TCP"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::with;

    #[test]
    fn network_policy_types_follow_the_rules_given() {
        let deny_all = with(network_policy, json!({"spec": {"podSelector": {}}}));
        assert_eq!(deny_all["spec"]["policyTypes"], json!(["Ingress"]));
        let both = with(
            network_policy,
            json!({"spec": {"podSelector": {},
            "ingress": [{"ports": [{"port": 80}]}], "egress": [{"ports": [{"port": 53, "protocol": "UDP"}]}]}}),
        );
        assert_eq!(both["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(
            both["spec"]["ingress"][0]["ports"][0],
            json!({"port": 80, "protocol": "TCP"})
        );
        assert_eq!(both["spec"]["egress"][0]["ports"][0]["protocol"], "UDP");
        let egress_only = with(network_policy, json!({"spec": {"policyTypes": ["Egress"]}}));
        assert_eq!(egress_only["spec"]["policyTypes"], json!(["Egress"]));
    }

    #[test]
    fn ingress_class_parameters_are_cluster_scoped() {
        let ic = with(
            ingress_class,
            json!({"spec": {"controller": "x/y",
            "parameters": {"kind": "K", "name": "n"}}}),
        );
        assert_eq!(ic["spec"]["parameters"]["scope"], "Cluster");
        let bare = with(ingress_class, json!({"spec": {"controller": "x/y"}}));
        assert_eq!(bare, json!({"spec": {"controller": "x/y"}}));
    }

    #[test]
    fn endpoint_slice_ports() {
        let eps = with(
            endpoint_slice,
            json!({"addressType": "IPv4", "ports": [{"port": 80}]}),
        );
        assert_eq!(
            eps["ports"],
            json!([{"port": 80, "name": "", "protocol": "TCP"}])
        );
    }
}
