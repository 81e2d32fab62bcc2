//! Endpoints and EndpointSlices (`ValidateEndpoints`, discovery's
//! `ValidateEndpointSlice`): addresses, ports, protocols, names.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::ip;
use crate::common;
use kube_rules::qualified_name;

fn dns_label(field: &str, value: &str, causes: &mut Vec<Cause>) {
    common::invalid_each(causes, field, value, kube_rules::dns1123_label(value));
}

fn protocol(field: &str, port: &Value, causes: &mut Vec<Cause>) {
    match port.get("protocol").and_then(Value::as_str) {
        None | Some("") => causes.push(common::required(field, "")),
        Some(p) if !common::PROTOCOLS.contains(&p) => {
            causes.push(common::not_supported(field, p, &common::PROTOCOLS))
        }
        Some(_) => {}
    }
}

fn app_protocol(field: &str, port: &Value, causes: &mut Vec<Cause>) {
    if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
        common::invalid_each(causes, field, app, qualified_name(app));
    }
}

/// `ValidateEndpoints`' subsets.
pub fn endpoints(object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, subset) in common::list(object, "subsets").iter().enumerate() {
        let at = format!("subsets[{i}]");
        let (ready, not_ready) = (
            common::list(subset, "addresses"),
            common::list(subset, "notReadyAddresses"),
        );
        if ready.is_empty() && not_ready.is_empty() {
            causes.push(common::required(
                &at,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (list, name) in [(ready, "addresses"), (not_ready, "notReadyAddresses")] {
            for (j, address) in list.iter().enumerate() {
                endpoint_address(&format!("{at}.{name}[{j}]"), address, &mut causes);
            }
        }
        let ports = common::list(subset, "ports");
        for (j, port) in ports.iter().enumerate() {
            endpoint_port(
                &format!("{at}.ports[{j}]"),
                port,
                ports.len() > 1,
                &mut causes,
            );
        }
    }
    causes
}

fn endpoint_address(at: &str, address: &Value, causes: &mut Vec<Cause>) {
    let value = common::text(address, "ip");
    ip::check_ip(&format!("{at}.ip"), value, causes);
    let hostname = common::text(address, "hostname");
    if !hostname.is_empty() {
        dns_label(&format!("{at}.hostname"), hostname, causes);
    }
    if let Some(node) = address.get("nodeName").and_then(Value::as_str) {
        common::invalid_each(
            causes,
            &format!("{at}.nodeName"),
            node,
            kube_rules::dns1123_subdomain(node),
        );
    }
    ip::check_non_special(&format!("{at}.ip"), value, causes);
}

fn endpoint_port(at: &str, port: &Value, name_required: bool, causes: &mut Vec<Cause>) {
    let name = common::text(port, "name");
    if name_required && name.is_empty() {
        causes.push(common::required(&format!("{at}.name"), ""));
    } else if !name.is_empty() {
        dns_label(&format!("{at}.name"), name, causes);
    }
    let number = common::int(port, "port");
    if let Some(detail) = kube_rules::port_num(number) {
        causes.push(common::invalid(
            &format!("{at}.port"),
            &number.to_string(),
            &detail,
        ));
    }
    protocol(&format!("{at}.protocol"), port, causes);
    app_protocol(&format!("{at}.appProtocol"), port, causes);
}

const ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];

/// `ValidateEndpointSlice`.
pub fn endpoint_slice(slice: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let kind = common::text(slice, "addressType");
    if kind.is_empty() {
        causes.push(common::required("addressType", ""));
    } else if !ADDRESS_TYPES.contains(&kind) {
        causes.push(common::not_supported("addressType", kind, &ADDRESS_TYPES));
    }
    let endpoints = common::list(slice, "endpoints");
    if endpoints.len() > 1000 {
        causes.push(common::too_many("endpoints", endpoints.len(), 1000));
    } else {
        for (i, endpoint) in endpoints.iter().enumerate() {
            slice_endpoint(&format!("endpoints[{i}]"), kind, endpoint, &mut causes);
        }
    }
    slice_ports(common::list(slice, "ports"), &mut causes);
    causes
}

fn slice_endpoint(at: &str, kind: &str, endpoint: &Value, causes: &mut Vec<Cause>) {
    let addresses = common::list(endpoint, "addresses");
    let field = format!("{at}.addresses");
    if addresses.is_empty() {
        causes.push(common::required(&field, "must contain at least 1 address"));
    } else if addresses.len() > 100 {
        causes.push(common::too_many(&field, addresses.len(), 100));
    }
    for (j, address) in addresses.iter().filter_map(Value::as_str).enumerate() {
        let field = format!("{field}[{j}]");
        let family = match (kind, ip::parse(address)) {
            ("IPv4", parsed) => Some((
                parsed.is_some_and(|a| a.is_ipv4()),
                "must be a valid IPv4 address",
            )),
            ("IPv6", parsed) => Some((
                parsed.is_some_and(|a| a.is_ipv6()),
                "must be a valid IPv6 address",
            )),
            _ => None,
        };
        if let Some((valid, detail)) = family {
            if !valid {
                causes.push(common::invalid_str(&field, address, detail));
            }
            ip::check_non_special(&field, address, causes);
        }
    }
    if let Some(node) = endpoint.get("nodeName").and_then(Value::as_str) {
        common::invalid_each(
            causes,
            &format!("{at}.nodeName"),
            node,
            kube_rules::dns1123_subdomain(node),
        );
    }
    if let Some(hostname) = endpoint.get("hostname").and_then(Value::as_str) {
        dns_label(&format!("{at}.hostname"), hostname, causes);
    }
}

fn slice_ports(ports: &[Value], causes: &mut Vec<Cause>) {
    if ports.len() > 20000 {
        causes.push(common::too_many("ports", ports.len(), 20000));
        return;
    }
    let mut names = std::collections::HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let at = format!("ports[{i}]");
        let name = common::text(port, "name");
        if !name.is_empty() {
            dns_label(&format!("{at}.name"), name, causes);
        }
        if !names.insert(name) {
            causes.push(common::duplicate(
                &format!("{at}.name"),
                &kube_rules::gofmt::quote(name),
            ));
        }
        protocol(&format!("{at}.protocol"), port, causes);
        app_protocol(&format!("{at}.appProtocol"), port, causes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn endpoint_addresses_and_ports_are_checked() {
        let ep = json!({"subsets": [{"addresses": [{"ip": "999.1.1.1"}], "ports": [{"port": 70000, "protocol": "TCP"}]}]});
        assert_eq!(
            messages(&endpoints(&ep)),
            ["subsets[0].addresses[0].ip: Invalid value: \"999.1.1.1\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
             "subsets[0].addresses[0].ip: Invalid value: \"999.1.1.1\": must be a valid IP address",
             "subsets[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"]
        );
    }

    #[test]
    fn slices_need_a_known_address_type_and_addresses() {
        let slice = json!({"addressType": "Bogus", "endpoints": [{"addresses": []}]});
        assert_eq!(
            messages(&endpoint_slice(&slice)),
            ["addressType: Unsupported value: \"Bogus\": supported values: \"FQDN\", \"IPv4\", \"IPv6\"",
             "endpoints[0].addresses: Required value: must contain at least 1 address"]
        );
    }
}
