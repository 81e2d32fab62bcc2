//! The value a canonical field label has on a served object, mirroring the
//! registries' `ToSelectableFields`: missing strings read "", booleans
//! "true"/"false", counts their decimal form (0 when absent).

use serde_json::Value;

use super::field_rules::FieldLabels;

/// Where a kind's own labels are read: the value of `label` on `obj`, or
/// None for a label it does not read (then its JSON path is).
pub(super) type Values = fn(&Value, &str) -> Option<String>;

fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn first_non_empty<'a>(obj: &'a Value, pointers: &[&str]) -> &'a str {
    pointers
        .iter()
        .map(|p| str_at(obj, p))
        .find(|s| !s.is_empty())
        .unwrap_or("")
}

fn bool_at(obj: &Value, pointer: &str) -> String {
    let b = obj
        .pointer(pointer)
        .and_then(Value::as_bool)
        .unwrap_or(false);
    b.to_string()
}

fn int_at(obj: &Value, pointer: &str) -> String {
    obj.pointer(pointer)
        .and_then(Value::as_i64)
        .unwrap_or(0)
        .to_string()
}

/// Renders any JSON scalar the way a field selector compares it.
fn render(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// Generic lookup of a dotted path (used for custom resources).
pub(crate) fn path_value(obj: &Value, label: &str) -> String {
    let pointer: String = label
        .trim_start_matches('.')
        .split('.')
        .map(|p| format!("/{p}"))
        .collect();
    render(obj.pointer(&pointer))
}

pub(super) fn pod(obj: &Value, label: &str) -> Option<String> {
    Some(match label {
        "spec.nodeName" => str_at(obj, "/spec/nodeName").to_string(),
        "spec.restartPolicy" => str_at(obj, "/spec/restartPolicy").to_string(),
        "spec.schedulerName" => str_at(obj, "/spec/schedulerName").to_string(),
        "spec.serviceAccountName" => str_at(obj, "/spec/serviceAccountName").to_string(),
        "spec.hostNetwork" => bool_at(obj, "/spec/hostNetwork"),
        "status.phase" => str_at(obj, "/status/phase").to_string(),
        "status.podIP" => first_non_empty(obj, &["/status/podIPs/0/ip", "/status/podIP"]).into(),
        "status.nominatedNodeName" => str_at(obj, "/status/nominatedNodeName").to_string(),
        // Accepted by the conversion func but never set by kube's
        // ToSelectableFields, so it always reads "".
        "status.podIPs" => String::new(),
        _ => return None,
    })
}

/// Core and events.k8s.io events share storage; read either served shape.
pub(super) fn event(obj: &Value, label: &str) -> Option<String> {
    if let Some(field) = label.strip_prefix("involvedObject.") {
        let core = format!("/involvedObject/{field}");
        let v1 = format!("/regarding/{field}");
        return Some(first_non_empty(obj, &[&core, &v1]).to_string());
    }
    let reporting = ["/reportingComponent", "/reportingController"];
    Some(match label {
        "reason" => str_at(obj, "/reason").to_string(),
        "type" => str_at(obj, "/type").to_string(),
        "reportingComponent" => first_non_empty(obj, &reporting).to_string(),
        "source" => first_non_empty(
            obj,
            &[
                "/source/component",
                "/deprecatedSource/component",
                reporting[0],
                reporting[1],
            ],
        )
        .to_string(),
        _ => return None,
    })
}

pub(super) fn node(obj: &Value, label: &str) -> Option<String> {
    (label == "spec.unschedulable").then(|| bool_at(obj, "/spec/unschedulable"))
}

pub(super) fn replication_controller(obj: &Value, label: &str) -> Option<String> {
    (label == "status.replicas").then(|| int_at(obj, "/status/replicas"))
}

pub(super) fn job(obj: &Value, label: &str) -> Option<String> {
    (label == "status.successful").then(|| int_at(obj, "/status/succeeded"))
}

/// Kinds whose labels are all read at their JSON path.
pub(super) fn none(_: &Value, _: &str) -> Option<String> {
    None
}

/// The value of `label` (already canonical) on `obj` of a kind with these
/// field labels.
pub(crate) fn field_value(labels: &FieldLabels, obj: &Value, label: &str) -> String {
    match label {
        "metadata.name" => str_at(obj, "/metadata/name").to_string(),
        "metadata.namespace" => str_at(obj, "/metadata/namespace").to_string(),
        _ => (labels.values)(obj, label).unwrap_or_else(|| path_value(obj, label)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::selectors::field_rules::field_labels_for;
    use serde_json::json;

    #[test]
    fn pod_fields() {
        let pod =
            json!({"spec": {"hostNetwork": true}, "status": {"podIPs": [{"ip": "10.0.0.1"}]}});
        assert_eq!(
            field_value(field_labels_for("", "pods"), &pod, "spec.hostNetwork"),
            "true"
        );
        assert_eq!(
            field_value(field_labels_for("", "pods"), &json!({}), "spec.hostNetwork"),
            "false"
        );
        assert_eq!(
            field_value(field_labels_for("", "pods"), &pod, "status.podIP"),
            "10.0.0.1"
        );
        assert_eq!(
            field_value(field_labels_for("", "pods"), &pod, "status.podIPs"),
            ""
        );
        assert_eq!(
            field_value(field_labels_for("", "pods"), &pod, "spec.nodeName"),
            ""
        );
    }

    #[test]
    fn counts_and_events() {
        let job = json!({"status": {"succeeded": 3}});
        assert_eq!(
            field_value(field_labels_for("batch", "jobs"), &job, "status.successful"),
            "3"
        );
        assert_eq!(
            field_value(
                field_labels_for("batch", "jobs"),
                &json!({}),
                "status.successful"
            ),
            "0"
        );
        let ev = json!({"regarding": {"name": "p1"}, "reportingController": "kubelet"});
        assert_eq!(
            field_value(
                field_labels_for("events.k8s.io", "events"),
                &ev,
                "involvedObject.name"
            ),
            "p1"
        );
        assert_eq!(
            field_value(field_labels_for("", "events"), &ev, "source"),
            "kubelet"
        );
    }

    #[test]
    fn generic_paths() {
        let obj = json!({"spec": {"color": "red", "size": 3}});
        assert_eq!(path_value(&obj, "spec.color"), "red");
        assert_eq!(path_value(&obj, ".spec.size"), "3");
        assert_eq!(path_value(&obj, "spec.none"), "");
    }
}
