//! Services (kube's `services.go`): each counts under `services` and
//! `count/services`; NodePort and LoadBalancer services count their ports
//! under `services.nodeports`, LoadBalancers count under
//! `services.loadbalancers`.

use serde_json::Value;

use crate::json;
use crate::quantity::Quantity;
use crate::resources::ResourceList;

const SERVICE_RESOURCES: [&str; 4] = [
    "count/services",
    "services",
    "services.nodeports",
    "services.loadbalancers",
];

/// Whether a quota key is a service resource.
pub(super) fn tracks(name: &str) -> bool {
    SERVICE_RESOURCES.contains(&name)
}

/// The usage of one service.
pub(super) fn usage(service: &Value) -> ResourceList {
    let ports = i64::try_from(json::array(service, &["spec", "ports"]).len()).unwrap_or(i64::MAX);
    let (node_ports, load_balancers) = match json::str_or_empty(service, &["spec", "type"]) {
        "NodePort" => (ports, 0),
        "LoadBalancer" => (ports, 1),
        _ => (0, 0),
    };
    [
        ("count/services", 1),
        ("services", 1),
        ("services.loadbalancers", load_balancers),
        ("services.nodeports", node_ports),
    ]
    .into_iter()
    .map(|(name, n)| (name.to_string(), Quantity::from_units(n)))
    .collect()
}
