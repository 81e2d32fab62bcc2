//! What the printers of Services, Endpoints, EndpointSlices and Ingresses
//! share: lists cut after three items, load balancer addresses.

use std::collections::BTreeSet;

use serde_json::Value;

use super::access::{list, non_empty};

pub(crate) const MAX_LISTED: usize = 3;

/// `a,b,c + N more...` once more than three items exist; `empty` otherwise.
pub(crate) fn list_with_more(items: Vec<String>, total: usize, empty: &str) -> String {
    let shown: Vec<String> = items.into_iter().take(MAX_LISTED).collect();
    let joined = shown.join(",");
    if total > MAX_LISTED {
        return format!("{joined} + {} more...", total - MAX_LISTED);
    }
    if joined.is_empty() {
        empty.to_string()
    } else {
        joined
    }
}

/// Sorted, de-duplicated load balancer ingress IPs / hostnames.
pub(crate) fn load_balancer_addresses(obj: &Value) -> String {
    let set: BTreeSet<&str> = list(obj, "/status/loadBalancer/ingress")
        .iter()
        .filter_map(|i| non_empty(i, "/ip").or_else(|| non_empty(i, "/hostname")))
        .collect();
    set.into_iter().collect::<Vec<_>>().join(",")
}
