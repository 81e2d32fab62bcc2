//! The pod row: READY, the STATUS reason logic (init containers, waiting /
//! terminated reasons, Terminating, SchedulingGated, ...), RESTARTS with the
//! time of the last restart, and the wide columns — as kube's `printPod`.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::table::access::{age, flag, int, list, name, non_empty, or_none, since, text, time};

#[derive(Default)]
struct Restarts {
    count: i64,
    last: Option<DateTime<Utc>>,
}

impl Restarts {
    /// Adds a container status' restart count and last termination time.
    fn add(&mut self, status: &Value) {
        self.count += int(status, "/restartCount");
        let finished = time(status, "/lastState/terminated/finishedAt");
        if finished > self.last {
            self.last = finished;
        }
    }
}

struct Summary {
    ready: i64,
    total: i64,
    reason: String,
    restarts: Restarts,
}

fn is_restartable(spec: Option<&Value>) -> bool {
    spec.is_some_and(|c| text(c, "/restartPolicy") == "Always")
}

fn has_condition(pod: &Value, kind: &str) -> Option<&'static str> {
    let cond = list(pod, "/status/conditions")
        .iter()
        .find(|c| text(c, "/type") == kind)?;
    Some(if text(cond, "/status") == "True" {
        "True"
    } else {
        "False"
    })
}

fn initial_reason(pod: &Value) -> String {
    let mut reason = non_empty(pod, "/status/reason")
        .unwrap_or(text(pod, "/status/phase"))
        .to_string();
    let gated = list(pod, "/status/conditions")
        .iter()
        .any(|c| text(c, "/type") == "PodScheduled" && text(c, "/reason") == "SchedulingGated");
    if gated {
        reason = "SchedulingGated".to_string();
    }
    reason
}

fn exit_reason(terminated: &Value, prefix: &str) -> String {
    if let Some(r) = non_empty(terminated, "/reason") {
        return format!("{prefix}{r}");
    }
    let signal = int(terminated, "/signal");
    if signal != 0 {
        format!("{prefix}Signal:{signal}")
    } else {
        format!("{prefix}ExitCode:{}", int(terminated, "/exitCode"))
    }
}

/// Walks init container statuses; returns true while still initializing.
fn scan_init(pod: &Value, s: &mut Summary, restartable: &mut Restarts) -> bool {
    let specs = list(pod, "/spec/initContainers");
    for (i, c) in list(pod, "/status/initContainerStatuses")
        .iter()
        .enumerate()
    {
        let spec = specs.iter().find(|x| text(x, "/name") == text(c, "/name"));
        s.restarts.add(c);
        if is_restartable(spec) {
            restartable.add(c);
        }
        let terminated = c.pointer("/state/terminated");
        if terminated.is_some_and(|t| int(t, "/exitCode") == 0) {
            continue;
        }
        if is_restartable(spec) && c.pointer("/started").and_then(Value::as_bool) == Some(true) {
            s.ready += i64::from(flag(c, "/ready"));
            continue;
        }
        let waiting = non_empty(c, "/state/waiting/reason").filter(|r| *r != "PodInitializing");
        s.reason = match (terminated, waiting) {
            (Some(t), _) => exit_reason(t, "Init:"),
            (None, Some(w)) => format!("Init:{w}"),
            (None, None) => format!("Init:{i}/{}", specs.len()),
        };
        return true;
    }
    false
}

/// Walks regular container statuses (last to first, like kube).
fn scan_containers(pod: &Value, s: &mut Summary) {
    let mut has_running = false;
    for c in list(pod, "/status/containerStatuses").iter().rev() {
        s.restarts.add(c);
        let terminated = c.pointer("/state/terminated");
        if let Some(w) = non_empty(c, "/state/waiting/reason") {
            s.reason = w.to_string();
        } else if let Some(t) = terminated {
            s.reason = exit_reason(t, "");
        } else if flag(c, "/ready") && c.pointer("/state/running").is_some() {
            has_running = true;
            s.ready += 1;
        }
    }
    if s.reason == "Completed" && has_running {
        let ready = has_condition(pod, "Ready") == Some("True");
        s.reason = if ready { "Running" } else { "NotReady" }.to_string();
    }
}

fn summarize(pod: &Value) -> Summary {
    let restartable_inits = list(pod, "/spec/initContainers")
        .iter()
        .filter(|c| is_restartable(Some(c)))
        .count();
    let mut s = Summary {
        ready: 0,
        total: (list(pod, "/spec/containers").len() + restartable_inits) as i64,
        reason: initial_reason(pod),
        restarts: Restarts::default(),
    };
    let mut restartable = Restarts::default();
    let initializing = scan_init(pod, &mut s, &mut restartable);
    if !initializing || has_condition(pod, "Initialized") == Some("True") {
        s.restarts = restartable;
        scan_containers(pod, &mut s);
    }
    apply_deletion(pod, &mut s);
    s
}

fn apply_deletion(pod: &Value, s: &mut Summary) {
    if pod
        .pointer("/metadata/deletionTimestamp")
        .is_none_or(Value::is_null)
    {
        return;
    }
    let phase = text(pod, "/status/phase");
    if text(pod, "/status/reason") == "NodeLost" {
        s.reason = "Unknown".to_string();
    } else if phase != "Succeeded" && phase != "Failed" {
        s.reason = "Terminating".to_string();
    }
}

fn restarts_cell(r: &Restarts, now: DateTime<Utc>) -> String {
    match r.last {
        Some(last) if r.count != 0 => format!("{} ({} ago)", r.count, since(Some(last), now)),
        _ => r.count.to_string(),
    }
}

fn readiness_gates(pod: &Value) -> String {
    let gates = list(pod, "/spec/readinessGates");
    if gates.is_empty() {
        return "<none>".to_string();
    }
    let satisfied = gates
        .iter()
        .filter(|g| has_condition(pod, text(g, "/conditionType")) == Some("True"))
        .count();
    format!("{satisfied}/{}", gates.len())
}

fn wide_cells(pod: &Value) -> Vec<Value> {
    let ip = non_empty(pod, "/status/podIPs/0/ip").unwrap_or(text(pod, "/status/podIP"));
    vec![
        Value::from(or_none(ip)),
        Value::from(or_none(text(pod, "/spec/nodeName"))),
        Value::from(or_none(text(pod, "/status/nominatedNodeName"))),
        Value::from(readiness_gates(pod)),
    ]
}

/// All cells of a pod row (wide columns included).
pub(crate) fn pod_row(pod: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let s = summarize(pod);
    let mut cells = vec![
        name(pod),
        Value::from(format!("{}/{}", s.ready, s.total)),
        Value::from(s.reason.clone()),
        Value::from(restarts_cell(&s.restarts, now)),
        age(pod, now),
    ];
    cells.extend(wide_cells(pod));
    cells
}

/// The row conditions kube attaches to finished pods.
pub(crate) fn pod_row_conditions(pod: &Value) -> Option<Value> {
    let (reason, message) = match text(pod, "/status/phase") {
        "Succeeded" => ("Succeeded", "The pod has completed successfully."),
        "Failed" => ("Failed", "The pod failed."),
        _ => return None,
    };
    Some(serde_json::json!([{
        "type": "Completed",
        "status": "True",
        "reason": reason,
        "message": message,
    }]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2024-01-01T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    fn running(name: &str, ready: bool, restarts: i64) -> Value {
        json!({"name": name, "ready": ready, "restartCount": restarts,
               "state": {"running": {"startedAt": "2024-01-01T11:00:00Z"}}})
    }

    fn pod(statuses: Value) -> Value {
        json!({
            "metadata": {"name": "web", "creationTimestamp": "2024-01-01T11:00:00Z"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
            "status": {"phase": "Running", "containerStatuses": statuses,
                       "podIPs": [{"ip": "10.1.0.5"}]}
        })
    }

    #[test]
    fn one_of_two_ready() {
        let p = pod(json!([running("a", true, 0), running("b", false, 0)]));
        let cells = pod_row(&p, now());
        assert_eq!(
            cells[..5],
            [
                json!("web"),
                json!("1/2"),
                json!("Running"),
                json!("0"),
                json!("60m")
            ]
        );
        assert_eq!(
            cells[5..],
            [
                json!("10.1.0.5"),
                json!("n1"),
                json!("<none>"),
                json!("<none>")
            ]
        );
    }

    #[test]
    fn crash_loop_and_restart_age() {
        let crashing = json!({"name": "b", "ready": false, "restartCount": 4,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2024-01-01T11:55:00Z"}}});
        let p = pod(json!([running("a", true, 1), crashing]));
        let cells = pod_row(&p, now());
        assert_eq!(cells[2], json!("CrashLoopBackOff"));
        assert_eq!(cells[3], json!("5 (5m ago)"));
    }

    #[test]
    fn init_container_progress() {
        let mut p = pod(json!([]));
        p["spec"]["initContainers"] = json!([{"name": "i1"}, {"name": "i2"}]);
        p["status"]["phase"] = json!("Pending");
        p["status"]["initContainerStatuses"] = json!([
            {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
            {"name": "i2", "state": {"running": {}}}
        ]);
        assert_eq!(pod_row(&p, now())[2], json!("Init:1/2"));
        p["status"]["initContainerStatuses"][1] =
            json!({"name": "i2", "state": {"terminated": {"exitCode": 3}}});
        assert_eq!(pod_row(&p, now())[2], json!("Init:ExitCode:3"));
        p["status"]["initContainerStatuses"][1] =
            json!({"name": "i2", "state": {"waiting": {"reason": "ImagePullBackOff"}}});
        assert_eq!(pod_row(&p, now())[2], json!("Init:ImagePullBackOff"));
    }

    #[test]
    fn terminating_and_completed() {
        let mut p = pod(json!([running("a", true, 0), running("b", true, 0)]));
        p["metadata"]["deletionTimestamp"] = json!("2024-01-01T11:59:00Z");
        assert_eq!(pod_row(&p, now())[2], json!("Terminating"));
        let done =
            json!({"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}});
        let mut p = pod(json!([done]));
        p["status"]["phase"] = json!("Succeeded");
        assert_eq!(pod_row(&p, now())[2], json!("Completed"));
        assert_eq!(
            pod_row_conditions(&p).unwrap()[0]["reason"],
            json!("Succeeded")
        );
    }

    #[test]
    fn sidecar_counts_toward_ready_total() {
        let mut p = pod(json!([running("a", true, 0), running("b", true, 0)]));
        p["spec"]["initContainers"] = json!([{"name": "proxy", "restartPolicy": "Always"}]);
        p["status"]["initContainerStatuses"] = json!([
            {"name": "proxy", "ready": true, "started": true, "restartCount": 2,
             "state": {"running": {}}}
        ]);
        let cells = pod_row(&p, now());
        assert_eq!(cells[1], json!("3/3"));
        assert_eq!(cells[3], json!("2"));
    }

    #[test]
    fn scheduling_gated_and_readiness_gates() {
        let mut p = pod(json!([]));
        p["status"] = json!({"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"},
            {"type": "example.com/ok", "status": "True"}]});
        p["spec"]["readinessGates"] = json!([{"conditionType": "example.com/ok"},
                                             {"conditionType": "example.com/no"}]);
        let cells = pod_row(&p, now());
        assert_eq!(cells[2], json!("SchedulingGated"));
        assert_eq!(cells[8], json!("1/2"));
    }
}
