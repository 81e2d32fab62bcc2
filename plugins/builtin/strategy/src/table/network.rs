//! Rows for networking resources: Services, Endpoints, EndpointSlices,
//! Ingresses, IngressClasses and NetworkPolicies (kube's printers).

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::access::{
    age, format_label_map, format_label_selector, int, list, name, non_empty, opt_int, or_none,
    text,
};

const MAX_LISTED: usize = 3;

/// `a,b,c + N more...` once more than three items exist; `empty` otherwise.
fn list_with_more(items: Vec<String>, total: usize, empty: &str) -> String {
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
fn load_balancer_addresses(obj: &Value) -> String {
    let set: BTreeSet<&str> = list(obj, "/status/loadBalancer/ingress")
        .iter()
        .filter_map(|i| non_empty(i, "/ip").or_else(|| non_empty(i, "/hostname")))
        .collect();
    set.into_iter().collect::<Vec<_>>().join(",")
}

fn service_external_ip(svc: &Value) -> String {
    let external: Vec<&str> = list(svc, "/spec/externalIPs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match text(svc, "/spec/type") {
        "ClusterIP" | "" | "NodePort" => or_none(&external.join(",")),
        "LoadBalancer" => {
            let lb = load_balancer_addresses(svc);
            let mut all: Vec<&str> = lb.split(',').filter(|s| !s.is_empty()).collect();
            all.extend(external);
            match all.is_empty() {
                true => "<pending>".to_string(),
                false => all.join(","),
            }
        }
        "ExternalName" => text(svc, "/spec/externalName").to_string(),
        _ => "<unknown>".to_string(),
    }
}

/// `80/TCP`, or `80:30080/TCP` when a node port is allocated.
fn service_ports(svc: &Value) -> String {
    let pieces: Vec<String> = list(svc, "/spec/ports")
        .iter()
        .map(|p| {
            let proto = non_empty(p, "/protocol").unwrap_or("TCP");
            match int(p, "/nodePort") {
                np if np > 0 => format!("{}:{np}/{proto}", int(p, "/port")),
                _ => format!("{}/{proto}", int(p, "/port")),
            }
        })
        .collect();
    or_none(&pieces.join(","))
}

pub(crate) fn service_row(svc: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let cluster_ip = non_empty(svc, "/spec/clusterIPs/0").or(non_empty(svc, "/spec/clusterIP"));
    vec![
        name(svc),
        Value::from(non_empty(svc, "/spec/type").unwrap_or("ClusterIP")),
        Value::from(cluster_ip.unwrap_or("<none>")),
        Value::from(service_external_ip(svc)),
        Value::from(service_ports(svc)),
        age(svc, now),
        Value::from(format_label_map(svc, "/spec/selector")),
    ]
}

fn host_port(ip: &str, port: i64) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

/// kube's `formatEndpoints` with all ports.
fn format_endpoints(obj: &Value) -> String {
    let subsets = list(obj, "/subsets");
    if subsets.is_empty() {
        return "<none>".to_string();
    }
    let mut shown = Vec::new();
    let mut total = 0;
    for ss in subsets {
        let addrs = list(ss, "/addresses");
        let ports = list(ss, "/ports");
        if ports.is_empty() {
            total += addrs.len();
            shown.extend(addrs.iter().map(|a| text(a, "/ip").to_string()));
            continue;
        }
        for port in ports {
            total += addrs.len();
            let p = int(port, "/port");
            shown.extend(addrs.iter().map(|a| host_port(text(a, "/ip"), p)));
        }
    }
    list_with_more(shown, total, "")
}

pub(crate) fn endpoints_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![name(obj), Value::from(format_endpoints(obj)), age(obj, now)]
}

fn slice_ports(obj: &Value) -> String {
    let ports = list(obj, "/ports");
    let shown = ports
        .iter()
        .map(|p| match opt_int(p, "/port") {
            Some(n) => n.to_string(),
            None => p
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("*")
                .to_string(),
        })
        .collect();
    list_with_more(shown, ports.len(), "<unset>")
}

fn slice_endpoints(obj: &Value) -> String {
    let addrs: Vec<String> = list(obj, "/endpoints")
        .iter()
        .flat_map(|e| list(e, "/addresses").iter())
        .map(|a| a.as_str().unwrap_or("").to_string())
        .collect();
    let total = addrs.len();
    list_with_more(addrs, total, "<unset>")
}

pub(crate) fn endpoint_slice_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(text(obj, "/addressType")),
        Value::from(slice_ports(obj)),
        Value::from(slice_endpoints(obj)),
        age(obj, now),
    ]
}

/// kube's `formatHosts`: first three hosts, `*` when none.
fn ingress_hosts(obj: &Value) -> String {
    let rules = list(obj, "/spec/rules");
    let mut shown = Vec::new();
    let mut more = false;
    for rule in rules {
        if shown.len() == MAX_LISTED {
            more = true;
            break;
        }
        shown.extend(non_empty(rule, "/host"));
    }
    if shown.is_empty() {
        return "*".to_string();
    }
    match more {
        true => format!("{} + {} more...", shown.join(","), rules.len() - MAX_LISTED),
        false => shown.join(","),
    }
}

pub(crate) fn ingress_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let class = obj
        .pointer("/spec/ingressClassName")
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let ports = if list(obj, "/spec/tls").is_empty() {
        "80"
    } else {
        "80, 443"
    };
    vec![
        name(obj),
        Value::from(class),
        Value::from(ingress_hosts(obj)),
        Value::from(load_balancer_addresses(obj)),
        Value::from(ports),
        age(obj, now),
    ]
}

pub(crate) fn ingress_class_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let params = match obj.pointer("/spec/parameters") {
        Some(p) if p.is_object() => {
            let group = non_empty(p, "/apiGroup").map(|g| format!(".{g}"));
            let kind = text(p, "/kind");
            format!("{kind}{}/{}", group.unwrap_or_default(), text(p, "/name"))
        }
        _ => "<none>".to_string(),
    };
    vec![
        name(obj),
        Value::from(text(obj, "/spec/controller")),
        Value::from(params),
        age(obj, now),
    ]
}

pub(crate) fn network_policy_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    // spec.podSelector is a struct, never a nil pointer: absent means {}.
    let empty = Value::Object(Default::default());
    let selector = obj.pointer("/spec/podSelector").filter(|v| !v.is_null());
    vec![
        name(obj),
        Value::from(format_label_selector(Some(selector.unwrap_or(&empty)))),
        age(obj, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2024-01-01T00:10:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn node_port_service() {
        let svc = json!({
            "metadata": {"name": "web", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"type": "NodePort", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                     "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"},
                               {"port": 53, "protocol": "UDP"}],
                     "selector": {"app": "web"}}
        });
        assert_eq!(
            service_row(&svc, now()),
            [
                json!("web"),
                json!("NodePort"),
                json!("10.96.0.10"),
                json!("<none>"),
                json!("80:30080/TCP,53/UDP"),
                json!("10m"),
                json!("app=web")
            ]
        );
    }

    #[test]
    fn load_balancer_and_headless() {
        let lb = json!({"spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {}}});
        assert_eq!(service_external_ip(&lb), "<pending>");
        let lb = json!({"spec": {"type": "LoadBalancer", "externalIPs": ["5.6.7.8"]},
                        "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        assert_eq!(service_external_ip(&lb), "1.2.3.4,5.6.7.8");
        let headless = json!({"spec": {"clusterIP": "None", "clusterIPs": ["None"]}});
        assert_eq!(service_row(&headless, now())[2], json!("None"));
        assert_eq!(service_row(&headless, now())[4], json!("<none>"));
    }

    #[test]
    fn endpoints_formatting() {
        let ep = json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"},
                                                   {"ip": "fd00::1"}, {"ip": "10.0.0.4"}],
                                     "ports": [{"port": 8080}]}]});
        assert_eq!(
            format_endpoints(&ep),
            "10.0.0.1:8080,10.0.0.2:8080,[fd00::1]:8080 + 1 more..."
        );
        assert_eq!(format_endpoints(&json!({})), "<none>");
    }

    #[test]
    fn endpoint_slices() {
        let s = json!({"addressType": "IPv4", "ports": [{"port": 80}, {"name": "x"}],
                       "endpoints": [{"addresses": ["10.0.0.1"]}]});
        let cells = endpoint_slice_row(&s, now());
        assert_eq!(
            cells[1..4],
            [json!("IPv4"), json!("80,x"), json!("10.0.0.1")]
        );
        assert_eq!(slice_endpoints(&json!({})), "<unset>");
    }

    #[test]
    fn ingress_cells() {
        let ing = json!({"spec": {"ingressClassName": "nginx",
                                  "rules": [{"host": "a.example"}, {"host": "b.example"}],
                                  "tls": [{}]},
                         "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example"}]}}});
        let cells = ingress_row(&ing, now());
        assert_eq!(
            cells[1..5],
            [
                json!("nginx"),
                json!("a.example,b.example"),
                json!("lb.example"),
                json!("80, 443")
            ]
        );
        assert_eq!(ingress_hosts(&json!({"spec": {"rules": [{}]}})), "*");
    }

    #[test]
    fn network_policy_selector() {
        let np = json!({"spec": {"podSelector": {}}});
        assert_eq!(network_policy_row(&np, now())[1], json!("<none>"));
        let np = json!({"spec": {"podSelector": {"matchLabels": {"role": "db"}}}});
        assert_eq!(network_policy_row(&np, now())[1], json!("role=db"));
    }
}
