//! Rows for cluster-level objects: Nodes, Namespaces and Events (core/v1
//! and events.k8s.io/v1 print the same way, as kube's `printEvent`).

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::access::{age, flag, int, list, map, name, non_empty, opt_int, since, text, time};

const ROLE_PREFIX: &str = "node-role.kubernetes.io/";
const ROLE_LABEL: &str = "kubernetes.io/role";

fn node_status(node: &Value) -> String {
    let ready = list(node, "/status/conditions")
        .iter()
        .rev()
        .find(|c| text(c, "/type") == "Ready");
    let mut status = vec![match ready {
        Some(c) if text(c, "/status") == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if flag(node, "/spec/unschedulable") {
        status.push("SchedulingDisabled");
    }
    status.join(",")
}

fn node_roles(node: &Value) -> String {
    let mut roles = BTreeSet::new();
    for (k, v) in map(node, "/metadata/labels").into_iter().flatten() {
        let v = v.as_str().unwrap_or("");
        match k.strip_prefix(ROLE_PREFIX) {
            Some(role) if !role.is_empty() => {
                roles.insert(role.to_string());
            }
            _ if k == ROLE_LABEL && !v.is_empty() => {
                roles.insert(v.to_string());
            }
            _ => {}
        }
    }
    let joined = roles.into_iter().collect::<Vec<_>>().join(",");
    if joined.is_empty() {
        "<none>".to_string()
    } else {
        joined
    }
}

fn node_address(node: &Value, kind: &str) -> String {
    list(node, "/status/addresses")
        .iter()
        .find(|a| text(a, "/type") == kind)
        .map_or("<none>".to_string(), |a| text(a, "/address").to_string())
}

fn or_unknown(node: &Value, pointer: &str) -> Value {
    Value::from(non_empty(node, pointer).unwrap_or("<unknown>"))
}

pub(crate) fn node_row(node: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(node),
        Value::from(node_status(node)),
        Value::from(node_roles(node)),
        age(node, now),
        Value::from(text(node, "/status/nodeInfo/kubeletVersion")),
        Value::from(node_address(node, "InternalIP")),
        Value::from(node_address(node, "ExternalIP")),
        or_unknown(node, "/status/nodeInfo/osImage"),
        or_unknown(node, "/status/nodeInfo/kernelVersion"),
        or_unknown(node, "/status/nodeInfo/containerRuntimeVersion"),
    ]
}

pub(crate) fn namespace_row(ns: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(ns),
        Value::from(text(ns, "/status/phase")),
        age(ns, now),
    ]
}

/// Reads a core/v1 field, falling back to its events.k8s.io/v1 spelling.
fn either<'a>(ev: &'a Value, core: &str, v1: &str) -> &'a str {
    non_empty(ev, core).unwrap_or_else(|| text(ev, v1))
}

fn event_times(ev: &Value, now: DateTime<Utc>) -> (String, String, i64) {
    let first_ts = time(ev, "/firstTimestamp").or_else(|| time(ev, "/deprecatedFirstTimestamp"));
    let first = match first_ts {
        Some(t) => since(Some(t), now),
        None => since(time(ev, "/eventTime"), now),
    };
    let last_ts = time(ev, "/lastTimestamp").or_else(|| time(ev, "/deprecatedLastTimestamp"));
    let mut last = last_ts.map_or_else(|| first.clone(), |t| since(Some(t), now));
    let mut count = opt_int(ev, "/count").unwrap_or_else(|| int(ev, "/deprecatedCount"));
    if ev.pointer("/series").is_some_and(Value::is_object) {
        last = since(time(ev, "/series/lastObservedTime"), now);
        count = int(ev, "/series/count");
    } else if count == 0 {
        count = 1;
    }
    (first, last, count)
}

fn event_target(ev: &Value) -> String {
    let kind = either(ev, "/involvedObject/kind", "/regarding/kind").to_lowercase();
    match either(ev, "/involvedObject/name", "/regarding/name") {
        "" => kind,
        n => format!("{kind}/{n}"),
    }
}

fn event_source(ev: &Value) -> String {
    let component = non_empty(ev, "/source/component")
        .or_else(|| non_empty(ev, "/deprecatedSource/component"))
        .unwrap_or_else(|| either(ev, "/reportingComponent", "/reportingController"));
    let host = non_empty(ev, "/source/host")
        .or_else(|| non_empty(ev, "/deprecatedSource/host"))
        .unwrap_or_else(|| text(ev, "/reportingInstance"));
    match host {
        "" => component.to_string(),
        h => format!("{component}, {h}"),
    }
}

pub(crate) fn event_row(ev: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let (first, last, count) = event_times(ev, now);
    let field_path = either(ev, "/involvedObject/fieldPath", "/regarding/fieldPath");
    vec![
        Value::from(last),
        Value::from(text(ev, "/type")),
        Value::from(text(ev, "/reason")),
        Value::from(event_target(ev)),
        Value::from(field_path),
        Value::from(event_source(ev)),
        Value::from(either(ev, "/message", "/note").trim()),
        Value::from(first),
        Value::from(count),
        name(ev),
    ]
}

/// kube's printComponentStatus: the Healthy condition's status, message and error.
pub(crate) fn component_status_row(obj: &Value, _now: DateTime<Utc>) -> Vec<Value> {
    let healthy = list(obj, "/conditions")
        .iter()
        .find(|c| text(c, "/type") == "Healthy");
    let (status, message, error) = match healthy {
        Some(c) => (
            if text(c, "/status") == "True" {
                "Healthy"
            } else {
                "Unhealthy"
            },
            text(c, "/message"),
            text(c, "/error"),
        ),
        None => ("Unknown", "", ""),
    };
    vec![
        name(obj),
        Value::from(status),
        Value::from(message),
        Value::from(error),
    ]
}

/// kube-aggregator's APIService columns: the backing service (`Local`
/// without one) and the Available condition, with its reason when not True.
pub(crate) fn api_service_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let service = match non_empty(obj, "/spec/service/name") {
        Some(svc) => format!("{}/{svc}", text(obj, "/spec/service/namespace")),
        None => "Local".to_string(),
    };
    let available = list(obj, "/status/conditions")
        .iter()
        .find(|c| text(c, "/type") == "Available")
        .map_or("Unknown".to_string(), |c| {
            match (text(c, "/status"), text(c, "/reason")) {
                ("True", _) | (_, "") => text(c, "/status").to_string(),
                (status, reason) => format!("{status} ({reason})"),
            }
        });
    vec![
        name(obj),
        Value::from(service),
        Value::from(available),
        age(obj, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2024-01-01T01:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn node_cells() {
        let node = json!({
            "metadata": {"name": "n1", "creationTimestamp": "2024-01-01T00:00:00Z",
                         "labels": {"node-role.kubernetes.io/control-plane": "",
                                    "kubernetes.io/role": "master"}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "addresses": [{"type": "InternalIP", "address": "192.168.0.2"}],
                       "nodeInfo": {"kubeletVersion": "v1.33.0", "osImage": "Debian"}}
        });
        assert_eq!(
            node_row(&node, now()),
            [
                json!("n1"),
                json!("Ready,SchedulingDisabled"),
                json!("control-plane,master"),
                json!("60m"),
                json!("v1.33.0"),
                json!("192.168.0.2"),
                json!("<none>"),
                json!("Debian"),
                json!("<unknown>"),
                json!("<unknown>")
            ]
        );
        assert_eq!(node_status(&json!({})), "Unknown");
    }

    #[test]
    fn core_event_cells() {
        let ev = json!({
            "metadata": {"name": "web.17a"},
            "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{a}"},
            "reason": "Pulled", "type": "Normal", "message": " pulled image \n",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:59:00Z",
            "count": 3
        });
        assert_eq!(
            event_row(&ev, now()),
            [
                json!("60s"),
                json!("Normal"),
                json!("Pulled"),
                json!("pod/web"),
                json!("spec.containers{a}"),
                json!("kubelet, n1"),
                json!("pulled image"),
                json!("60m"),
                json!(3),
                json!("web.17a")
            ]
        );
    }

    #[test]
    fn events_v1_and_series() {
        let ev = json!({
            "metadata": {"name": "e"},
            "regarding": {"kind": "Node", "name": "n1"},
            "note": "boom", "reportingController": "ctrl", "reportingInstance": "i1",
            "eventTime": "2024-01-01T00:30:00.000000Z",
            "series": {"count": 7, "lastObservedTime": "2024-01-01T00:57:00.500000Z"}
        });
        let cells = event_row(&ev, now());
        assert_eq!(cells[0], json!("2m59s"));
        assert_eq!(cells[3], json!("node/n1"));
        assert_eq!(cells[5], json!("ctrl, i1"));
        assert_eq!(cells[6], json!("boom"));
        assert_eq!(cells[7], json!("30m"));
        assert_eq!(cells[8], json!(7));
        let bare = json!({"involvedObject": {"kind": "Pod"}});
        assert_eq!(event_row(&bare, now())[0], json!("<unknown>"));
        assert_eq!(event_row(&bare, now())[8], json!(1));
    }
}
