//! The printers of Ingresses, IngressClasses and NetworkPolicies (kube's printers.go, wide cells
//! included).

use crate::table::access::{age, format_label_selector, list, name, non_empty, text};
use crate::table::columns;
use crate::table::network::{load_balancer_addresses, MAX_LISTED};
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// NetworkPolicies.
pub(crate) fn network_policy_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Pod-Selector", "Pods the policy applies to."),
        columns::AGE,
    ]
}

/// IngressClasses.
pub(crate) fn ingress_class_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text(
            "Controller",
            "Controller that is responsible for handling this class",
        ),
        columns::text(
            "Parameters",
            "A reference to a resource with additional parameters",
        ),
        columns::AGE,
    ]
}

/// Ingresses.
pub(crate) fn ingress_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text(
            "Class",
            "The name of the IngressClass resource that should be used for additional \
                 configuration",
        ),
        columns::text(
            "Hosts",
            "Hosts that incoming requests are matched against before the ingress rule",
        ),
        columns::text(
            "Address",
            "Address is a list containing ingress points for the load-balancer",
        ),
        columns::text("Ports", "Ports of TLS configurations that open"),
        columns::AGE,
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
        crate::table::at("2024-01-01T00:10:00Z")
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
