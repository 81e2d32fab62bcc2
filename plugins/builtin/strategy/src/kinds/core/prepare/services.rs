//! A Service update that changes its type drops what the old type had and
//! the new one does not use, when the client left it as stored (kube's
//! service strategy, `dropTypeDependentFields`): cluster IPs and IP
//! families for ExternalName, node ports, the health-check node port,
//! `allocateLoadBalancerNodePorts`, `loadBalancerClass`,
//! `externalTrafficPolicy`, and the load balancer status.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::json::{child_mut, is_empty, items_mut};

pub fn drop_type_dependent_fields(service: &mut Value, old: &Value) {
    let null = Value::Null;
    let old_spec = old.get("spec").unwrap_or(&null).clone();
    let Some(spec) = child_mut(service, "spec") else {
        return;
    };
    let (was, now) = (kind(&old_spec).to_string(), kind(spec).to_string());
    let unchanged = |spec: &Value, key: &str| spec.get(key) == old_spec.get(key);
    if was != "ExternalName" && now == "ExternalName" {
        if unchanged(spec, "clusterIP") && unchanged(spec, "clusterIPs") {
            remove(spec, &["clusterIP", "clusterIPs"]);
        }
        for key in ["ipFamilies", "ipFamilyPolicy"] {
            if unchanged(spec, key) {
                remove(spec, &[key]);
            }
        }
    }
    if now == "ExternalName" {
        // kube drops it from every ExternalName Service it serves
        // (`defaultOnReadInternalTrafficPolicy`).
        remove(spec, &["internalTrafficPolicy"]);
    }
    if uses_node_ports(&was)
        && !uses_node_ports(&now)
        && node_ports(&old_spec).is_superset(&node_ports(spec))
    {
        for port in items_mut(spec, "ports") {
            remove(port, &["nodePort"]);
        }
    }
    if needs_health_check_port(&old_spec)
        && !needs_health_check_port(spec)
        && unchanged(spec, "healthCheckNodePort")
    {
        remove(spec, &["healthCheckNodePort"]);
    }
    if was == "LoadBalancer" && now != "LoadBalancer" {
        let allocate = spec.get("allocateLoadBalancerNodePorts");
        if allocate.is_some_and(|a| !a.is_null())
            && unchanged(spec, "allocateLoadBalancerNodePorts")
        {
            remove(spec, &["allocateLoadBalancerNodePorts"]);
        }
        if unchanged(spec, "loadBalancerClass") {
            remove(spec, &["loadBalancerClass"]);
        }
    }
    if externally_accessible(&old_spec)
        && !externally_accessible(spec)
        && unchanged(spec, "externalTrafficPolicy")
    {
        remove(spec, &["externalTrafficPolicy"]);
    }
    if now != "LoadBalancer" {
        if let Some(status) = child_mut(service, "status") {
            status["loadBalancer"] = json!({});
        }
    }
}

fn kind(spec: &Value) -> &str {
    spec.get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
}

fn uses_node_ports(kind: &str) -> bool {
    matches!(kind, "NodePort" | "LoadBalancer")
}

fn needs_health_check_port(spec: &Value) -> bool {
    kind(spec) == "LoadBalancer" && spec.get("externalTrafficPolicy") == Some(&json!("Local"))
}

fn externally_accessible(spec: &Value) -> bool {
    uses_node_ports(kind(spec)) || (kind(spec) == "ClusterIP" && !is_empty(spec.get("externalIPs")))
}

fn node_ports(spec: &Value) -> HashSet<i64> {
    let ports = spec.get("ports").and_then(Value::as_array);
    ports
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("nodePort").and_then(Value::as_i64))
        .filter(|n| *n != 0)
        .collect()
}

fn remove(object: &mut Value, keys: &[&str]) {
    if let Some(fields) = object.as_object_mut() {
        for key in keys {
            fields.remove(*key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_port_turned_cluster_ip_loses_its_node_ports() {
        let old = json!({"spec": {"type": "NodePort", "externalTrafficPolicy": "Cluster",
            "ports": [{"port": 80, "nodePort": 30080}]}});
        let mut new = json!({"spec": {"type": "ClusterIP", "externalTrafficPolicy": "Cluster",
            "ports": [{"port": 80, "nodePort": 30080}]}});
        drop_type_dependent_fields(&mut new, &old);
        assert_eq!(
            new,
            json!({"spec": {"type": "ClusterIP", "ports": [{"port": 80}]}})
        );
    }

    #[test]
    fn a_load_balancer_turned_external_name_loses_its_allocations() {
        let old = json!({"spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.5",
            "clusterIPs": ["10.0.0.5"], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
            "allocateLoadBalancerNodePorts": true, "externalTrafficPolicy": "Local",
            "healthCheckNodePort": 31000, "ports": [{"port": 80, "nodePort": 30080}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        let mut new = old.clone();
        new["spec"]["type"] = json!("ExternalName");
        new["spec"]["externalName"] = json!("example.com");
        drop_type_dependent_fields(&mut new, &old);
        assert_eq!(
            new,
            json!({"spec": {"type": "ExternalName", "externalName": "example.com",
                            "ports": [{"port": 80}]},
                   "status": {"loadBalancer": {}}})
        );
    }

    #[test]
    fn changed_values_are_left_for_validation() {
        let old = json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}});
        let mut new =
            json!({"spec": {"type": "ClusterIP", "ports": [{"port": 80, "nodePort": 30081}]}});
        drop_type_dependent_fields(&mut new, &old);
        assert_eq!(new["spec"]["ports"][0]["nodePort"], 30081);
    }
}
