//! Services (`ValidateService`, `ValidateServiceUpdate`): ports (required
//! unless headless or ExternalName, named when several, unique), type,
//! session affinity, ExternalName's DNS name, and cluster IPs that may not
//! change once set. Node port ranges are the allocator's business.

use std::collections::HashSet;

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::pods;
use crate::common::{self, int, list, text};
use kube_rules::gofmt;

const TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const AFFINITIES: [&str; 2] = ["ClientIP", "None"];

/// A create or update of a Service.
pub fn validate(service: &Value, old: Option<&Value>) -> Vec<Cause> {
    let spec = service.get("spec").unwrap_or(&Value::Null);
    let mut causes = Vec::new();
    if let Some(old) = old {
        let old_spec = old.get("spec").unwrap_or(&Value::Null);
        cluster_ip_update(spec, old_spec, &mut causes);
    }
    validate_spec(spec, &mut causes);
    causes
}

/// `spec.type`, defaulted to ClusterIP when absent.
fn service_type(spec: &Value) -> &str {
    spec.get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
}

/// `spec.clusterIPs`, or `[spec.clusterIP]` when only that is set.
fn cluster_ips(spec: &Value) -> Vec<String> {
    let ips: Vec<String> = list(spec, "clusterIPs")
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    if !ips.is_empty() {
        return ips;
    }
    let ip = text(spec, "clusterIP");
    if ip.is_empty() {
        Vec::new()
    } else {
        vec![ip.to_string()]
    }
}

fn is_headless(spec: &Value) -> bool {
    service_type(spec) == "ClusterIP" && cluster_ips(spec).first().is_some_and(|ip| ip == "None")
}

fn validate_spec(spec: &Value, causes: &mut Vec<Cause>) {
    let kind = service_type(spec);
    let ports = list(spec, "ports");
    if ports.is_empty() && !is_headless(spec) && kind != "ExternalName" {
        causes.push(common::required("spec.ports", ""));
    }
    type_specific(spec, kind, causes);
    let mut names = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        service_port(
            port,
            &format!("spec.ports[{i}]"),
            ports.len() > 1,
            &mut names,
            causes,
        );
    }
    pods::one_of(
        spec.get("sessionAffinity"),
        "spec.sessionAffinity",
        &AFFINITIES,
        causes,
    );
    pods::one_of(spec.get("type"), "spec.type", &TYPES, causes);
    if kind == "ClusterIP" {
        for (i, port) in ports.iter().enumerate() {
            if int(port, "nodePort") != 0 {
                let field = format!("spec.ports[{i}].nodePort");
                causes.push(common::forbidden(
                    &field,
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    duplicate_ports(ports, causes);
}

fn type_specific(spec: &Value, kind: &str, causes: &mut Vec<Cause>) {
    let headless_for = |what: &str| {
        common::invalid_str(
            "spec.clusterIPs[0]",
            "None",
            &format!("may not be set to 'None' for {what} services"),
        )
    };
    match kind {
        "LoadBalancer" | "NodePort" if cluster_ips(spec).first().is_some_and(|ip| ip == "None") => {
            causes.push(headless_for(kind));
        }
        "ExternalName" => external_name(spec, causes),
        _ => {}
    }
}

fn external_name(spec: &Value, causes: &mut Vec<Cause>) {
    if !cluster_ips(spec).is_empty() {
        let detail = "may not be set for ExternalName services";
        causes.push(common::forbidden("spec.clusterIPs", detail));
    }
    let field = "spec.externalName";
    let raw = text(spec, "externalName");
    let cname = raw.strip_suffix('.').unwrap_or(raw);
    if cname.is_empty() {
        causes.push(common::required(field, ""));
    } else {
        common::invalid_each(causes, field, cname, kube_rules::dns1123_subdomain(cname));
    }
}

/// `validateServicePort`: name, port number, protocol and target port.
fn service_port<'a>(
    port: &'a Value,
    path: &str,
    require_name: bool,
    names: &mut HashSet<&'a str>,
    causes: &mut Vec<Cause>,
) {
    let name = text(port, "name");
    let name_field = format!("{path}.name");
    if require_name && name.is_empty() {
        causes.push(common::required(&name_field, ""));
    } else if !name.is_empty() {
        common::invalid_each(causes, &name_field, name, kube_rules::dns1123_label(name));
        if !names.insert(name) {
            causes.push(common::duplicate(&name_field, &gofmt::quote(name)));
        }
    }
    let number = int(port, "port");
    if let Some(msg) = kube_rules::port_num(number) {
        causes.push(common::invalid(
            &format!("{path}.port"),
            &number.to_string(),
            &msg,
        ));
    }
    pods::protocol(port, path, causes);
    target_port(
        port.get("targetPort"),
        &format!("{path}.targetPort"),
        causes,
    );
}

/// An IntOrString: a port number or an IANA port name (absent = defaulted).
fn target_port(value: Option<&Value>, field: &str, causes: &mut Vec<Cause>) {
    match value {
        Some(Value::String(name)) => {
            common::invalid_each(causes, field, name, kube_rules::port_name(name));
        }
        Some(Value::Number(n)) => {
            let number = n.as_i64().unwrap_or_default();
            if let Some(msg) = kube_rules::port_num(number) {
                causes.push(common::invalid(field, &number.to_string(), &msg));
            }
        }
        _ => {}
    }
}

/// Node ports and (protocol, port) pairs may each appear only once.
fn duplicate_ports(ports: &[Value], causes: &mut Vec<Cause>) {
    let protocol = port_protocol;
    let mut node_ports = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let node_port = int(port, "nodePort");
        if node_port != 0 && !node_ports.insert((protocol(port), node_port)) {
            let field = format!("spec.ports[{i}].nodePort");
            causes.push(common::duplicate(&field, &node_port.to_string()));
        }
    }
    let mut seen = HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let key = (protocol(port), int(port, "port"));
        if !seen.insert(key) {
            causes.push(common::duplicate(
                &format!("spec.ports[{i}]"),
                &port_key(key),
            ));
        }
    }
}

/// A port's protocol, "TCP" when unset.
fn port_protocol(port: &Value) -> &str {
    Some(text(port, "protocol"))
        .filter(|s| !s.is_empty())
        .unwrap_or("TCP")
}

/// The `core.ServicePort{Protocol, Port}` key kube prints with `%#v`.
fn port_key((protocol, port): (&str, i64)) -> String {
    format!(
        "core.ServicePort{{Name:\"\", Protocol:{}, AppProtocol:(*string)(nil), Port:{port}, \
         TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}",
        gofmt::quote(protocol)
    )
}

/// Cluster IPs may not change once set, unless ExternalName is involved
/// or both are headless. A missing new IP keeps the old one (kube copies it).
fn cluster_ip_update(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    if service_type(new) == "ExternalName" || service_type(old) == "ExternalName" {
        return;
    }
    if is_headless(new) && is_headless(old) {
        return;
    }
    let (new_ips, old_ips) = (cluster_ips(new), cluster_ips(old));
    if new_ips.is_empty() || old_ips.is_empty() {
        return;
    }
    let compared = if new_ips.len() == old_ips.len() {
        old_ips.len()
    } else {
        1
    };
    for i in 0..compared {
        if new_ips[i] != old_ips[i] {
            let field = format!("spec.clusterIPs[{i}]");
            causes.push(common::invalid(
                &field,
                &gofmt::strings(&new_ips),
                "may not change once set",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn ports_are_required_unless_headless_or_external_name() {
        let got = messages(&validate(&json!({"spec": {"type": "ClusterIP"}}), None));
        assert_eq!(got, vec!["spec.ports: Required value"]);
        assert!(validate(&json!({"spec": {"clusterIP": "None"}}), None).is_empty());
        let ext = json!({"spec": {"type": "ExternalName", "externalName": "db.example.com."}});
        assert!(validate(&ext, None).is_empty());
        let ext = json!({"spec": {"type": "ExternalName", "externalName": "Bad_Name"}});
        assert!(messages(&validate(&ext, None))[0].starts_with(
            "spec.externalName: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"
        ));
    }

    #[test]
    fn port_rules() {
        let svc = json!({"spec": {"type": "Bogus", "ports": [
            {"name": "web", "port": 70000, "targetPort": "HTTP", "protocol": "ICMP"},
            {"port": 80, "targetPort": 0},
            {"name": "web", "port": 80, "targetPort": 8080}]}});
        let got = messages(&validate(&svc, None));
        assert_eq!(
            got,
            vec![
                "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "spec.ports[0].targetPort: Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "spec.ports[0].targetPort: Invalid value: \"HTTP\": must contain at least one letter (a-z)",
                "spec.ports[1].name: Required value",
                "spec.ports[1].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.ports[2].name: Duplicate value: \"web\"",
                "spec.type: Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
                "spec.ports[2]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", \
                 AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, \
                 IntVal:0, StrVal:\"\"}, NodePort:0}",
            ]
        );
    }

    #[test]
    fn node_ports_are_forbidden_for_cluster_ip() {
        let svc = json!({"spec": {"ports": [{"port": 80, "nodePort": 30080}]}});
        assert_eq!(
            messages(&validate(&svc, None)),
            vec!["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]
        );
    }

    #[test]
    fn cluster_ip_may_not_change() {
        let old = json!({"spec": {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                                   "ports": [{"port": 80}]}});
        let new = json!({"spec": {"clusterIP": "10.96.0.11", "ports": [{"port": 80}]}});
        let got = validate(&new, Some(&old));
        assert_eq!(
            messages(&got),
            vec!["spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.11\"}: may not change once set"]
        );
        let omitted = json!({"spec": {"ports": [{"port": 81}]}});
        assert!(validate(&omitted, Some(&old)).is_empty());
    }
}
