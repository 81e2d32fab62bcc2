//! networking.k8s.io/v1 NetworkPolicy (`ValidateNetworkPolicySpec` of
//! kube's networking validation): selectors, ports and port ranges, peers,
//! ipBlock CIDRs and their exceptions, policyTypes.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, list, text};
use crate::netparse::{self, Cidr};
use crate::selector;
use kube_rules::gofmt;

const POLICY_TYPES: [&str; 2] = ["Ingress", "Egress"];
const CIDR_MESSAGE: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// A NetworkPolicy create or update; an update tolerates the invalid
/// label values its stored podSelector already had.
pub fn network_policy(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let allow = old.is_some_and(|old| {
        let pod_selector = old.pointer("/spec/podSelector").unwrap_or(&Value::Null);
        !selector::validate(pod_selector, "", false).0.is_empty()
    });
    let mut causes = Vec::new();
    let pod_selector = spec.get("podSelector").unwrap_or(&Value::Null);
    causes.extend(selector::validate(pod_selector, "spec.podSelector", allow).0);
    for (direction, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in list(spec, direction).iter().enumerate() {
            let at = format!("spec.{direction}[{i}]");
            for (j, port) in list(rule, "ports").iter().enumerate() {
                causes.extend(port_causes(port, &format!("{at}.ports[{j}]")));
            }
            for (j, peer) in list(rule, peers).iter().enumerate() {
                causes.extend(peer_causes(peer, &format!("{at}.{peers}[{j}]"), allow));
            }
        }
    }
    policy_types(spec, &mut causes);
    causes
}

fn policy_types(spec: &Value, causes: &mut Vec<Cause>) {
    let types = list(spec, "policyTypes");
    if types.len() > POLICY_TYPES.len() {
        let names: Vec<String> = types
            .iter()
            .map(|t| gofmt::quote(t.as_str().unwrap_or_default()))
            .collect();
        let shown = format!("[]networking.PolicyType{{{}}}", names.join(", "));
        let detail = "may not specify more than two policyTypes";
        causes.push(common::invalid("spec.policyTypes", &shown, detail));
        return;
    }
    for (i, kind) in types.iter().enumerate() {
        let kind = kind.as_str().unwrap_or_default();
        if !POLICY_TYPES.contains(&kind) {
            let field = format!("spec.policyTypes[{i}]");
            causes.push(common::not_supported(&field, kind, &POLICY_TYPES));
        }
    }
}

/// `ValidateNetworkPolicyPort`.
fn port_causes(port: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str) {
        if !["TCP", "UDP", "SCTP"].contains(&protocol) {
            let field = format!("{at}.protocol");
            causes.push(common::not_supported(
                &field,
                protocol,
                &["TCP", "UDP", "SCTP"],
            ));
        }
    }
    let end_port = port.get("endPort").and_then(Value::as_i64);
    let (port_field, end_field) = (format!("{at}.port"), format!("{at}.endPort"));
    match port.get("port").filter(|p| !p.is_null()) {
        Some(Value::String(name)) => {
            if let Some(end) = end_port {
                let detail = "may not be specified when `port` is non-numeric";
                causes.push(common::invalid(&end_field, &end.to_string(), detail));
            }
            common::invalid_each(&mut causes, &port_field, name, kube_rules::port_name(name));
        }
        Some(number) => {
            let number = number.as_i64().unwrap_or_default();
            if let Some(msg) = kube_rules::port_num(number) {
                causes.push(common::invalid(&port_field, &number.to_string(), &msg));
            }
            if let Some(end) = end_port {
                if end < number {
                    let detail = "must be greater than or equal to `port`";
                    causes.push(common::invalid(&end_field, &number.to_string(), detail));
                }
                if let Some(msg) = kube_rules::port_num(end) {
                    causes.push(common::invalid(&end_field, &end.to_string(), &msg));
                }
            }
        }
        None => {
            if let Some(end) = end_port {
                let detail = "may not be specified when `port` is not specified";
                causes.push(common::invalid(&end_field, &end.to_string(), detail));
            }
        }
    }
    causes
}

/// `ValidateNetworkPolicyPeer`.
fn peer_causes(peer: &Value, at: &str, allow: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut peers = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if let Some(sel) = peer.get(key).filter(|s| !s.is_null()) {
            peers += 1;
            causes.extend(selector::validate(sel, &format!("{at}.{key}"), allow).0);
        }
    }
    let ip_block = peer.get("ipBlock").filter(|b| !b.is_null());
    if let Some(block) = ip_block {
        peers += 1;
        causes.extend(ip_block_causes(block, &format!("{at}.ipBlock")));
    }
    if peers == 0 {
        causes.push(common::required(at, "must specify a peer"));
    } else if peers > 1 && ip_block.is_some() {
        causes.push(common::forbidden(
            at,
            "may not specify both ipBlock and another peer",
        ));
    }
    causes
}

/// `ValidateIPBlock`.
fn ip_block_causes(block: &Value, at: &str) -> Vec<Cause> {
    let cidr_text = text(block, "cidr");
    let field = format!("{at}.cidr");
    if cidr_text.is_empty() {
        return vec![common::required(&field, "")];
    }
    let Some(cidr) = netparse::parse_cidr(cidr_text) else {
        return vec![common::invalid_str(&field, cidr_text, CIDR_MESSAGE)];
    };
    let mut causes = Vec::new();
    for (i, except) in list(block, "except").iter().enumerate() {
        let except = except.as_str().unwrap_or_default();
        let field = format!("{at}.except[{i}]");
        match netparse::parse_cidr(except) {
            None => causes.push(common::invalid_str(&field, except, CIDR_MESSAGE)),
            Some(inner) if !strict_subset(&cidr, &inner) => {
                let detail = "must be a strict subset of `cidr`";
                causes.push(common::invalid_str(&field, except, detail));
            }
            Some(_) => {}
        }
    }
    causes
}

fn strict_subset(outer: &Cidr, inner: &Cidr) -> bool {
    outer.contains_network_of(inner) && outer.prefix() < inner.prefix()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn ports_cidrs_and_policy_types() {
        let np = json!({"spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 0}],
            "from": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}], "policyTypes": ["Sideways"]}});
        assert_eq!(
            messages(&network_policy(&np, None)),
            vec![
                "spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.ingress[0].from[0].ipBlock.cidr: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                "spec.policyTypes[0]: Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\"",
            ]
        );
        let np = json!({"spec": {"podSelector": {}, "egress": [{"to": [{},
            {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16", "11.0.0.0/16"]}, "podSelector": {}}]}]}});
        assert_eq!(
            messages(&network_policy(&np, None)),
            vec![
                "spec.egress[0].to[0]: Required value: must specify a peer",
                "spec.egress[0].to[1].ipBlock.except[1]: Invalid value: \"11.0.0.0/16\": must be a strict subset of `cidr`",
                "spec.egress[0].to[1]: Forbidden: may not specify both ipBlock and another peer",
            ]
        );
    }
}
