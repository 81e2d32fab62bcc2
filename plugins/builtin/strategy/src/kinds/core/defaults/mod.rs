//! The core group's (v1) defaults, from kube's `pkg/apis/core/v1/defaults.go`
//! and its conversions: services, secrets, namespaces, replication
//! controllers, pod templates, persistent volumes and claims, endpoints,
//! limit ranges and nodes. Pods are [`pod`]'s.

use serde_json::{json, Value};

pub mod pod;
use crate::json::{
    child_mut, ensure_object, is_empty, items_mut, metadata_mut, name, object_at, set_default,
    set_if_zero,
};

/// The label every namespace carries, with its own name as the value.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// A ClientIP session affinity's default timeout (three hours).
const CLIENT_IP_TIMEOUT_SECONDS: i64 = 10800;

pub fn pod_template(object: &mut Value) {
    pod::template(object, "/template");
}

/// `SetDefaults_ReplicationController`: selector and labels from the
/// template's labels when empty, one replica.
pub fn replication_controller(object: &mut Value) {
    let labels = object
        .pointer("/spec/template/metadata/labels")
        .filter(|l| l.is_object())
        .cloned();
    if let Some(labels) = labels {
        if is_empty(object.pointer("/spec/selector")) {
            set_in(object, "/spec", "selector", labels.clone());
        }
        if is_empty(object.pointer("/metadata/labels")) {
            if let Some(metadata) = metadata_mut(object) {
                metadata.insert("labels".into(), labels);
            }
        }
    }
    set_default(object, "/spec/replicas", json!(1));
    pod::template(object, "/spec/template");
}

/// Sets `key` of the object at `parent` (nothing when there is none).
fn set_in(object: &mut Value, parent: &str, key: &str, value: Value) {
    if let Some(fields) = object.pointer_mut(parent).and_then(Value::as_object_mut) {
        fields.insert(key.into(), value);
    }
}

/// `SetDefaults_Service` and the ports' protocol.
pub fn service(object: &mut Value) {
    if let Some(spec) = child_mut(object, "spec") {
        service_spec(spec);
    }
    let load_balancer = object.pointer("/spec/type") == Some(&json!("LoadBalancer"));
    if load_balancer {
        if let Some(status) = object.pointer_mut("/status/loadBalancer") {
            load_balancer_ip_mode(status);
        }
    }
}

fn service_spec(spec: &mut Value) {
    set_if_zero(spec, "/sessionAffinity", json!("None"));
    session_affinity_config(spec);
    set_if_zero(spec, "/type", json!("ClusterIP"));
    for port in items_mut(spec, "ports") {
        set_if_zero(port, "/protocol", json!("TCP"));
        if let Some(number) = port.get("port").cloned() {
            set_if_zero(port, "/targetPort", number);
        }
    }
    let kind = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = kind.as_str();
    let node_ports = matches!(kind, "NodePort" | "LoadBalancer");
    let external_ips = !is_empty(spec.get("externalIPs"));
    if node_ports || (kind == "ClusterIP" && external_ips) {
        set_if_zero(spec, "/externalTrafficPolicy", json!("Cluster"));
    }
    if node_ports || kind == "ClusterIP" {
        set_default(spec, "/internalTrafficPolicy", json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        set_default(spec, "/allocateLoadBalancerNodePorts", json!(true));
    }
}

/// None has no config; ClientIP's timeout defaults to three hours.
fn session_affinity_config(spec: &mut Value) {
    let affinity = spec.get("sessionAffinity").and_then(Value::as_str);
    match affinity {
        Some("None") => {
            if let Some(fields) = spec.as_object_mut() {
                fields.remove("sessionAffinityConfig");
            }
        }
        Some("ClientIP") => {
            let timeout = spec.pointer("/sessionAffinityConfig/clientIP/timeoutSeconds");
            if timeout.is_none_or(Value::is_null) {
                let config = json!({"clientIP": {"timeoutSeconds": CLIENT_IP_TIMEOUT_SECONDS}});
                spec["sessionAffinityConfig"] = config;
            }
        }
        _ => {}
    }
}

/// LoadBalancerIPMode (on in 1.32): an ingress IP is a VIP unless told otherwise.
fn load_balancer_ip_mode(status: &mut Value) {
    for ingress in items_mut(status, "ingress") {
        let has_ip = ingress
            .get("ip")
            .and_then(Value::as_str)
            .is_some_and(|ip| !ip.is_empty());
        if has_ip {
            set_default(ingress, "/ipMode", json!("VIP"));
        }
    }
}

/// `SetDefaults_Secret`.
pub fn secret(object: &mut Value) {
    set_if_zero(object, "/type", json!("Opaque"));
}

/// `SetDefaults_Namespace` (its name as a label, set even over a client's
/// value; nothing while the name is not known yet) and the status phase.
pub fn namespace(object: &mut Value) {
    if let Some(ns) = name(object).map(String::from) {
        let labels = metadata_mut(object).and_then(|m| object_at(m, "labels"));
        if let Some(labels) = labels {
            labels.insert(NAMESPACE_NAME_LABEL.into(), json!(ns));
        }
    }
    status_phase(object, "Active");
}

/// `status.phase` set to `phase` when empty, `status` made when absent.
fn status_phase(object: &mut Value, phase: &str) {
    if let Some(status) = ensure_object(object, "status") {
        set_if_zero(status, "/phase", json!(phase));
    }
}

/// `SetDefaults_PersistentVolume` and its volume source's defaults.
pub fn persistent_volume(object: &mut Value) {
    status_phase(object, "Pending");
    let Some(spec) = child_mut(object, "spec") else {
        return;
    };
    set_if_zero(spec, "/persistentVolumeReclaimPolicy", json!("Retain"));
    set_default(spec, "/volumeMode", json!("Filesystem"));
    pod::persistent_sources(spec);
}

/// `SetDefaults_PersistentVolumeClaim` and its spec's; also each of a
/// StatefulSet's volumeClaimTemplates.
pub fn persistent_volume_claim(object: &mut Value) {
    status_phase(object, "Pending");
    if let Some(spec) = child_mut(object, "spec") {
        claim_spec(spec);
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`.
pub fn claim_spec(spec: &mut Value) {
    set_default(spec, "/volumeMode", json!("Filesystem"));
}

/// `SetDefaults_Endpoints`: every port is TCP unless told otherwise.
pub fn endpoints(object: &mut Value) {
    for subset in items_mut(object, "subsets") {
        for port in items_mut(subset, "ports") {
            set_if_zero(port, "/protocol", json!("TCP"));
        }
    }
}

/// `SetDefaults_LimitRangeItem` for each Container item: the default limit
/// from max, the default request from the default limit, then from min.
pub fn limit_range(object: &mut Value) {
    let Some(limits) = object
        .pointer_mut("/spec/limits")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for item in limits
        .iter_mut()
        .filter(|i| i.get("type") == Some(&json!("Container")))
    {
        fill_from(item, "default", &["max"]);
        fill_from(item, "defaultRequest", &["default", "min"]);
    }
}

/// Adds to the resource list `target` of `item` each resource of the lists
/// `sources` (in order) it lacks; an empty result is not written.
fn fill_from(item: &mut Value, target: &str, sources: &[&str]) {
    let mut list = item
        .get(target)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for source in sources {
        let from = item.get(*source).and_then(Value::as_object);
        for (resource, quantity) in from.into_iter().flatten() {
            list.entry(resource.clone()).or_insert(quantity.clone());
        }
    }
    if !list.is_empty() {
        item[target] = Value::Object(list);
    }
}

/// `SetDefaults_NodeStatus` (allocatable is the capacity when not stated)
/// and the conversion of `podCIDR`/`podCIDRs` (the singular authoritative).
pub fn node(object: &mut Value) {
    if let Some(status) = child_mut(object, "status") {
        let capacity = status.get("capacity").filter(|c| c.is_object()).cloned();
        if let Some(capacity) = capacity {
            set_default(status, "/allocatable", capacity);
        }
    }
    if let Some(spec) = child_mut(object, "spec") {
        pod_cidrs(spec);
    }
}

fn pod_cidrs(spec: &mut Value) {
    let cidr = spec.get("podCIDR").and_then(Value::as_str).unwrap_or("");
    if !cidr.is_empty() && spec.pointer("/podCIDRs/0").and_then(Value::as_str) != Some(cidr) {
        spec["podCIDRs"] = json!([cidr]);
    }
    let first = spec.pointer("/podCIDRs/0").cloned();
    if let Some(first) = first.filter(Value::is_string) {
        spec["podCIDR"] = first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::with;

    #[test]
    fn a_minimal_service() {
        let svc = with(service, json!({"spec": {"ports": [{"port": 80}]}}));
        assert_eq!(
            svc["spec"],
            json!({"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
                   "sessionAffinity": "None", "type": "ClusterIP",
                   "internalTrafficPolicy": "Cluster"})
        );
    }

    #[test]
    fn load_balancers_and_node_ports() {
        let lb = with(
            service,
            json!({"spec": {"type": "LoadBalancer"},
            "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}, {"hostname": "h"}]}}}),
        );
        assert_eq!(lb["spec"]["externalTrafficPolicy"], "Cluster");
        assert_eq!(lb["spec"]["internalTrafficPolicy"], "Cluster");
        assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
        assert_eq!(
            lb["status"]["loadBalancer"]["ingress"],
            json!([{"ip": "1.2.3.4", "ipMode": "VIP"}, {"hostname": "h"}])
        );
        let np = with(service, json!({"spec": {"type": "NodePort"}}));
        assert_eq!(np["spec"]["externalTrafficPolicy"], "Cluster");
        assert!(np["spec"].get("allocateLoadBalancerNodePorts").is_none());
        let external_ips = with(service, json!({"spec": {"externalIPs": ["1.1.1.1"]}}));
        assert_eq!(external_ips["spec"]["externalTrafficPolicy"], "Cluster");
        let name = with(service, json!({"spec": {"type": "ExternalName"}}));
        assert!(name["spec"].get("internalTrafficPolicy").is_none());
        assert!(name["spec"].get("externalTrafficPolicy").is_none());
    }

    #[test]
    fn session_affinity() {
        let client_ip = with(service, json!({"spec": {"sessionAffinity": "ClientIP"}}));
        assert_eq!(
            client_ip["spec"]["sessionAffinityConfig"],
            json!({"clientIP": {"timeoutSeconds": 10800}})
        );
        let none = with(
            service,
            json!({"spec": {
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}}}}),
        );
        assert!(none["spec"].get("sessionAffinityConfig").is_none());
    }

    #[test]
    fn secrets_namespaces_and_claims() {
        assert_eq!(with(secret, json!({}))["type"], "Opaque");
        assert_eq!(with(secret, json!({"type": ""}))["type"], "Opaque");
        assert_eq!(
            with(secret, json!({"type": "kubernetes.io/tls"}))["type"],
            "kubernetes.io/tls"
        );
        let ns = with(
            namespace,
            json!({"metadata": {"name": "team", "labels": {
            NAMESPACE_NAME_LABEL: "other"}}}),
        );
        assert_eq!(
            ns["metadata"]["labels"],
            json!({NAMESPACE_NAME_LABEL: "team"})
        );
        assert_eq!(ns["status"], json!({"phase": "Active"}));
        let unnamed = with(namespace, json!({"metadata": {"generateName": "x-"}}));
        assert!(unnamed["metadata"].get("labels").is_none());
        let pvc = with(persistent_volume_claim, json!({"spec": {}}));
        assert_eq!(
            pvc,
            json!({"spec": {"volumeMode": "Filesystem"}, "status": {"phase": "Pending"}})
        );
    }

    #[test]
    fn a_minimal_persistent_volume() {
        let pv = with(
            persistent_volume,
            json!({"spec": {"hostPath": {"path": "/d"}}}),
        );
        assert_eq!(
            pv,
            json!({"spec": {"hostPath": {"path": "/d", "type": ""},
                            "persistentVolumeReclaimPolicy": "Retain",
                            "volumeMode": "Filesystem"},
                   "status": {"phase": "Pending"}})
        );
    }

    #[test]
    fn replication_controllers_take_their_template_labels() {
        let rc = with(
            replication_controller,
            json!({"metadata": {},
            "spec": {"template": {"metadata": {"labels": {"app": "a"}}, "spec": {}}}}),
        );
        assert_eq!(rc["metadata"]["labels"], json!({"app": "a"}));
        assert_eq!(rc["spec"]["selector"], json!({"app": "a"}));
        assert_eq!(rc["spec"]["replicas"], 1);
        assert_eq!(rc["spec"]["template"]["spec"]["restartPolicy"], "Always");
        let own = with(
            replication_controller,
            json!({"metadata": {"labels": {"x": "y"}},
            "spec": {"selector": {"app": "a"}, "template": {"metadata": {"labels": {"app": "a", "v": "1"}}}}}),
        );
        assert_eq!(own["metadata"]["labels"], json!({"x": "y"}));
        assert_eq!(own["spec"]["selector"], json!({"app": "a"}));
    }

    #[test]
    fn endpoints_and_limit_ranges() {
        let ep = with(endpoints, json!({"subsets": [{"ports": [{"port": 80}]}]}));
        assert_eq!(ep["subsets"][0]["ports"][0]["protocol"], "TCP");
        let lr = with(
            limit_range,
            json!({"spec": {"limits": [
            {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}},
            {"type": "Pod", "max": {"cpu": "4"}}]}}),
        );
        assert_eq!(
            lr["spec"]["limits"],
            json!([{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"},
                    "default": {"cpu": "2"},
                    "defaultRequest": {"cpu": "2", "memory": "64Mi"}},
                   {"type": "Pod", "max": {"cpu": "4"}}])
        );
    }

    #[test]
    fn nodes() {
        let n = with(
            node,
            json!({"spec": {"podCIDR": "10.0.0.0/24"},
                                  "status": {"capacity": {"cpu": "4"}}}),
        );
        assert_eq!(n["status"]["allocatable"], json!({"cpu": "4"}));
        assert_eq!(n["spec"]["podCIDRs"], json!(["10.0.0.0/24"]));
        let plural = with(node, json!({"spec": {"podCIDRs": ["10.1.0.0/24"]}}));
        assert_eq!(plural["spec"]["podCIDR"], "10.1.0.0/24");
    }
}
