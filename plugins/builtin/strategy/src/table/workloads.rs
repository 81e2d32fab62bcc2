//! Rows for workload controllers: Deployments, ReplicaSets,
//! ReplicationControllers, StatefulSets, DaemonSets, Jobs, CronJobs,
//! ControllerRevisions and PodTemplates (kube's printers, wide cells included).

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::access::{
    age, containers_and_images, format_label_map, format_label_selector, human_duration, int, list,
    name, opt_int, since, text, time,
};

const TEMPLATE_CONTAINERS: &str = "/spec/template/spec/containers";

/// `spec.replicas`, which kube defaults to 1 before storing.
fn desired_replicas(obj: &Value) -> i64 {
    opt_int(obj, "/spec/replicas").unwrap_or(1)
}

fn with_template(mut cells: Vec<Value>, obj: &Value, pointer: &str) -> Vec<Value> {
    let (names, images) = containers_and_images(obj, pointer);
    cells.push(names);
    cells.push(images);
    cells
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

fn replica_counts(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(obj),
        Value::from(desired_replicas(obj)),
        Value::from(int(obj, "/status/replicas")),
        Value::from(int(obj, "/status/readyReplicas")),
        age(obj, now),
    ]
}

pub(crate) fn replica_set_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let mut cells = with_template(replica_counts(obj, now), obj, TEMPLATE_CONTAINERS);
    cells.push(Value::from(format_label_selector(
        obj.pointer("/spec/selector"),
    )));
    cells
}

pub(crate) fn replication_controller_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let mut cells = with_template(replica_counts(obj, now), obj, TEMPLATE_CONTAINERS);
    cells.push(Value::from(format_label_map(obj, "/spec/selector")));
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

/// The status of the first condition of a type is "True".
fn job_condition(obj: &Value, kind: &str) -> bool {
    list(obj, "/status/conditions")
        .iter()
        .find(|c| text(c, "/type") == kind)
        .is_some_and(|c| text(c, "/status") == "True")
}

fn job_status(obj: &Value) -> &'static str {
    let deleting = obj
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    if job_condition(obj, "Complete") {
        "Complete"
    } else if job_condition(obj, "Failed") {
        "Failed"
    } else if deleting {
        "Terminating"
    } else if job_condition(obj, "Suspended") {
        "Suspended"
    } else if job_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    }
}

fn job_completions(obj: &Value) -> String {
    let succeeded = int(obj, "/status/succeeded");
    if let Some(c) = opt_int(obj, "/spec/completions") {
        return format!("{succeeded}/{c}");
    }
    match int(obj, "/spec/parallelism") {
        p if p > 1 => format!("{succeeded}/1 of {p}"),
        _ => format!("{succeeded}/1"),
    }
}

fn job_duration(obj: &Value, now: DateTime<Utc>) -> String {
    match (
        time(obj, "/status/startTime"),
        time(obj, "/status/completionTime"),
    ) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now - start),
        (Some(start), Some(done)) => human_duration(done - start),
    }
}

pub(crate) fn job_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let cells = vec![
        name(obj),
        Value::from(job_status(obj)),
        Value::from(job_completions(obj)),
        Value::from(job_duration(obj, now)),
        age(obj, now),
    ];
    let mut cells = with_template(cells, obj, TEMPLATE_CONTAINERS);
    cells.push(Value::from(format_label_selector(
        obj.pointer("/spec/selector"),
    )));
    cells
}

/// kube's `printBoolPtr`: "True" / "False" / "<unset>".
fn bool_ptr(v: Option<&Value>) -> &'static str {
    match v.and_then(Value::as_bool) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    }
}

pub(crate) fn cron_job_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let last = match time(obj, "/status/lastScheduleTime") {
        Some(t) => since(Some(t), now),
        None => "<none>".to_string(),
    };
    let tz = obj
        .pointer("/spec/timeZone")
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let cells = vec![
        name(obj),
        Value::from(text(obj, "/spec/schedule")),
        Value::from(tz),
        Value::from(bool_ptr(obj.pointer("/spec/suspend"))),
        Value::from(list(obj, "/status/active").len() as i64),
        Value::from(last),
        age(obj, now),
    ];
    let pointer = "/spec/jobTemplate/spec/template/spec/containers";
    let mut cells = with_template(cells, obj, pointer);
    let selector = obj.pointer("/spec/jobTemplate/spec/selector");
    cells.push(Value::from(format_label_selector(selector)));
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

pub(crate) fn pod_template_row(obj: &Value, _now: DateTime<Utc>) -> Vec<Value> {
    let cells = with_template(vec![name(obj)], obj, "/template/spec/containers");
    let mut cells = cells;
    cells.push(Value::from(format_label_map(
        obj,
        "/template/metadata/labels",
    )));
    cells
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2024-01-02T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
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
    fn job_status_completions_duration() {
        let job = json!({
            "metadata": {"name": "pi"},
            "spec": {"completions": 1, "selector": {}},
            "status": {"succeeded": 1, "startTime": "2024-01-01T00:00:00Z",
                       "completionTime": "2024-01-01T00:00:45Z",
                       "conditions": [{"type": "Complete", "status": "True"}]}
        });
        let cells = job_row(&job, now());
        assert_eq!(cells[1..4], [json!("Complete"), json!("1/1"), json!("45s")]);
        assert_eq!(cells[7], json!("<none>"));
        let par = json!({"spec": {"parallelism": 3}, "status": {}});
        assert_eq!(job_completions(&par), "0/1 of 3");
        assert_eq!(job_status(&par), "Running");
    }

    #[test]
    fn cron_job_cells() {
        let cj = json!({"metadata": {"name": "c"},
                        "spec": {"schedule": "*/5 * * * *", "suspend": false},
                        "status": {"active": [{"name": "j1"}],
                                   "lastScheduleTime": "2024-01-01T23:58:00Z"}});
        let cells = cron_job_row(&cj, now());
        assert_eq!(
            cells[1..6],
            [
                json!("*/5 * * * *"),
                json!("<none>"),
                json!("False"),
                json!(1),
                json!("2m")
            ]
        );
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
