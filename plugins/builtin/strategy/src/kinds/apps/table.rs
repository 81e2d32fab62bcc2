//! The printers of the apps group's kinds (kube's printers.go, wide cells included).

use crate::table::access::{age, format_label_map, format_label_selector, int, list, name, text};
use crate::table::columns;
use crate::table::workloads::{
    desired_replicas, replica_counts, with_template, TEMPLATE_CONTAINERS,
};
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// ControllerRevisions.
pub(crate) fn controller_revision_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Controller", "Controller of the object"),
        columns::text("Revision", "Revision number of this state."),
        columns::AGE,
    ]
}

/// StatefulSets.
pub(crate) fn stateful_set_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Ready", "Number of the pod with ready state"),
        columns::AGE,
        columns::CONTAINERS,
        columns::IMAGES,
    ]
}

/// Deployments.
pub(crate) fn deployment_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::text("Ready", "Number of the pod with ready state"),
        columns::text("Up-to-date", "Pods updated to the latest template."),
        columns::text("Available", "Pods available to serve."),
        columns::AGE,
        columns::CONTAINERS,
        columns::IMAGES,
        columns::SELECTOR,
    ]
}

/// ReplicationControllers and ReplicaSets.
pub(crate) fn replicas_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::int("Desired", "Number of desired pods."),
        columns::int("Current", "Number of pods currently running."),
        columns::int("Ready", "Number of ready pods."),
        columns::AGE,
        columns::CONTAINERS,
        columns::IMAGES,
        columns::SELECTOR,
    ]
}

pub(crate) fn daemon_set_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::int("Desired", "Nodes that should run the daemon pod."),
        columns::int("Current", "Nodes running at least one daemon pod."),
        columns::int("Ready", "Nodes with a ready daemon pod."),
        columns::int("Up-to-date", "Nodes running the updated daemon pod."),
        columns::int("Available", "Nodes with an available daemon pod."),
        columns::text("Node Selector", "Node selector of the pod template."),
        columns::AGE,
        columns::CONTAINERS,
        columns::IMAGES,
        columns::SELECTOR,
    ]
}

pub(crate) fn deployment_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let selector = crate::selector::to_text(obj.pointer("/spec/selector").unwrap_or(&Value::Null))
        .unwrap_or_else(|| "<invalid>".to_string());
    let ready = format!(
        "{}/{}",
        int(obj, "/status/readyReplicas"),
        desired_replicas(obj)
    );
    let cells = vec![
        name(obj),
        Value::from(ready),
        Value::from(int(obj, "/status/updatedReplicas")),
        Value::from(int(obj, "/status/availableReplicas")),
        age(obj, now),
    ];
    let mut cells = with_template(cells, obj, TEMPLATE_CONTAINERS);
    cells.push(Value::from(selector));
    cells
}

pub(crate) fn replica_set_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let mut cells = with_template(replica_counts(obj, now), obj, TEMPLATE_CONTAINERS);
    cells.push(Value::from(format_label_selector(
        obj.pointer("/spec/selector"),
    )));
    cells
}

pub(crate) fn stateful_set_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let ready = format!(
        "{}/{}",
        int(obj, "/status/readyReplicas"),
        desired_replicas(obj)
    );
    let cells = vec![name(obj), Value::from(ready), age(obj, now)];
    with_template(cells, obj, TEMPLATE_CONTAINERS)
}

pub(crate) fn daemon_set_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let count = |p: &str| Value::from(int(obj, p));
    let cells = vec![
        name(obj),
        count("/status/desiredNumberScheduled"),
        count("/status/currentNumberScheduled"),
        count("/status/numberReady"),
        count("/status/updatedNumberScheduled"),
        count("/status/numberAvailable"),
        Value::from(format_label_map(obj, "/spec/template/spec/nodeSelector")),
        age(obj, now),
    ];
    let mut cells = with_template(cells, obj, TEMPLATE_CONTAINERS);
    cells.push(Value::from(format_label_selector(
        obj.pointer("/spec/selector"),
    )));
    cells
}

/// `kind.group/name` of the controlling owner, lower-cased like kube.
fn controller_name(obj: &Value) -> String {
    let owner = list(obj, "/metadata/ownerReferences")
        .iter()
        .find(|o| o.get("controller").and_then(Value::as_bool) == Some(true));
    let Some(owner) = owner else {
        return "<none>".to_string();
    };
    let api_version = text(owner, "/apiVersion");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = text(owner, "/kind");
    let owner_name = text(owner, "/name");
    match (kind, group) {
        ("", _) => owner_name.to_string(),
        (k, "") => format!("{}/{owner_name}", k.to_lowercase()),
        (k, g) => format!("{}.{}/{owner_name}", k.to_lowercase(), g.to_lowercase()),
    }
}

pub(crate) fn controller_revision_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(controller_name(obj)),
        Value::from(int(obj, "/revision")),
        age(obj, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::core::table::replication_controller_row;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-02T00:00:00Z")
    }

    fn deployment() -> Value {
        json!({
            "metadata": {"name": "web", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"replicas": 3,
                     "selector": {"matchLabels": {"app": "web"}},
                     "template": {"spec": {"containers": [
                        {"name": "nginx", "image": "nginx:1.25"},
                        {"name": "log", "image": "busybox"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}
        })
    }

    #[test]
    fn deployment_cells() {
        let cells = deployment_row(&deployment(), now());
        assert_eq!(
            cells,
            [
                json!("web"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("24h"),
                json!("nginx,log"),
                json!("nginx:1.25,busybox"),
                json!("app=web")
            ]
        );
    }

    #[test]
    fn replica_set_and_rc_cells() {
        let cells = replica_set_row(&deployment(), now());
        assert_eq!(cells[1..4], [json!(3), json!(0), json!(2)]);
        assert_eq!(cells[7], json!("app=web"));
        let rc = json!({"metadata": {"name": "rc"}, "spec": {"selector": {"b": "2", "a": "1"}}});
        let cells = replication_controller_row(&rc, now());
        assert_eq!(cells[1], json!(1));
        assert_eq!(cells[4], json!("<unknown>"));
        assert_eq!(cells[7], json!("a=1,b=2"));
    }

    #[test]
    fn controller_revision_owner() {
        let cr = json!({"metadata": {"name": "web-1", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": true}]},
            "revision": 2});
        assert_eq!(
            controller_revision_row(&cr, now())[1..3],
            [json!("statefulset.apps/web"), json!(2)]
        );
    }

    #[test]
    fn daemon_set_and_stateful_set() {
        let ds = json!({"metadata": {"name": "d"},
            "spec": {"template": {"spec": {"nodeSelector": {"kubernetes.io/os": "linux"}}}},
            "status": {"desiredNumberScheduled": 2, "numberReady": 1}});
        let cells = daemon_set_row(&ds, now());
        assert_eq!(
            cells[1..7],
            [
                json!(2),
                json!(0),
                json!(1),
                json!(0),
                json!(0),
                json!("kubernetes.io/os=linux")
            ]
        );
        let sts = json!({"metadata": {"name": "s"}, "spec": {"replicas": 2},
                         "status": {"readyReplicas": 2}});
        assert_eq!(stateful_set_row(&sts, now())[1], json!("2/2"));
    }
}
