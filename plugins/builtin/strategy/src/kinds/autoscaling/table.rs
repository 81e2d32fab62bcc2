//! HorizontalPodAutoscaler's printer (kube's printHorizontalPodAutoscaler and formatHPAMetrics):
//! the target reference, each metric as `current/target` (two at most, then "+ N more..."), the
//! replica bounds.

use crate::table::access::{age, list, name, opt_int, text};
use crate::table::columns::{text as column, AGE, NAME};
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

pub(crate) fn hpa_columns() -> Vec<Column> {
    vec![
        NAME,
        column("Reference", "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count."),
        column("Targets", "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond."),
        column("MinPods", "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available."),
        column("MaxPods", "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas."),
        column("Replicas", "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler."),
        AGE,
    ]
}

pub(crate) fn hpa_row(hpa: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let reference = format!(
        "{}/{}",
        text(hpa, "/spec/scaleTargetRef/kind"),
        text(hpa, "/spec/scaleTargetRef/name")
    );
    let (specs, statuses) = metrics(hpa);
    let min_pods =
        opt_int(hpa, "/spec/minReplicas").map_or("<unset>".to_string(), |n| n.to_string());
    vec![
        name(hpa),
        Value::from(reference),
        Value::from(format_metrics(&specs, &statuses)),
        Value::from(min_pods),
        Value::from(opt_int(hpa, "/spec/maxReplicas").unwrap_or(0)),
        Value::from(opt_int(hpa, "/status/currentReplicas").unwrap_or(0)),
        age(hpa, now),
    ]
}

/// The spec and status metrics, in v2's form (a v1 object's cpu target and
/// current utilization read as the v2 metrics kube converts them to).
fn metrics(hpa: &Value) -> (Vec<Value>, Vec<Value>) {
    if hpa.get("apiVersion").and_then(Value::as_str) != Some("autoscaling/v1") {
        let specs = list(hpa, "/spec/metrics").to_vec();
        return (specs, list(hpa, "/status/currentMetrics").to_vec());
    }
    let target = opt_int(hpa, "/spec/targetCPUUtilizationPercentage").unwrap_or(80);
    let spec = json!({"type": "Resource", "resource": {"name": "cpu",
                      "target": {"type": "Utilization", "averageUtilization": target}}});
    let status = opt_int(hpa, "/status/currentCPUUtilizationPercentage").map(|current| {
        json!({"type": "Resource", "resource": {"name": "cpu",
               "current": {"averageUtilization": current}}})
    });
    (vec![spec], status.into_iter().collect())
}

/// A quantity at `pointer` of `metric`, as written.
fn quantity(metric: &Value, pointer: &str) -> Option<String> {
    match metric.pointer(pointer)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The `i`th status's quantity at `pointer`, `<unknown>` when absent.
fn current(statuses: &[Value], i: usize, pointer: &str) -> String {
    statuses
        .get(i)
        .and_then(|s| quantity(s, pointer))
        .unwrap_or_else(|| "<unknown>".to_string())
}

/// One metric as kube's formatHPAMetrics writes it.
fn format_metric(spec: &Value, statuses: &[Value], i: usize) -> String {
    let zero = || "0".to_string();
    let kind = spec["type"].as_str().unwrap_or_default();
    let field = match kind {
        "External" => "external",
        "Pods" => "pods",
        "Object" => "object",
        "Resource" => "resource",
        "ContainerResource" => "containerResource",
        _ => return "<unknown type>".to_string(),
    };
    let target = |key: &str| quantity(spec, &format!("/{field}/target/{key}"));
    let now = |key: &str| current(statuses, i, &format!("/{field}/current/{key}"));
    match kind {
        "Pods" => format!(
            "{}/{}",
            now("averageValue"),
            target("averageValue").unwrap_or_else(zero)
        ),
        "External" | "Object" => match target("averageValue") {
            Some(average) => format!("{}/{average} (avg)", now("averageValue")),
            None => format!("{}/{}", now("value"), target("value").unwrap_or_else(zero)),
        },
        _ => {
            let resource = text(spec, &format!("/{field}/name"));
            match target("averageValue") {
                Some(average) => format!("{resource}: {}/{average}", now("averageValue")),
                None => {
                    let percent = |s: String| {
                        if s.starts_with('<') {
                            s
                        } else {
                            format!("{s}%")
                        }
                    };
                    let target = target("averageUtilization")
                        .map_or("<auto>".to_string(), |t| format!("{t}%"));
                    format!(
                        "{resource}: {}/{target}",
                        percent(now("averageUtilization"))
                    )
                }
            }
        }
    }
}

/// Every metric, two at most then "+ N more...", `<none>` without any.
fn format_metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".to_string();
    }
    let all: Vec<String> = (0..specs.len())
        .map(|i| format_metric(&specs[i], statuses, i))
        .collect();
    match all.len() {
        n if n > 2 => format!("{} + {} more...", all[..2].join(", "), n - 2),
        _ => all.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        crate::table::at("2024-01-01T00:01:00Z")
    }

    #[test]
    fn targets_show_current_over_target() {
        let hpa = json!({"apiVersion": "autoscaling/v2",
            "metadata": {"name": "web", "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
                     "minReplicas": 1, "maxReplicas": 10, "metrics": [
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 50}}},
                {"type": "Resource", "resource": {"name": "memory",
                    "target": {"type": "AverageValue", "averageValue": "100Mi"}}},
                {"type": "Pods", "pods": {"metric": {"name": "qps"},
                    "target": {"type": "AverageValue", "averageValue": "1k"}}}]},
            "status": {"currentReplicas": 2, "currentMetrics": [
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 20}}}]}});
        let row = hpa_row(&hpa, now());
        assert_eq!(
            row,
            vec![
                json!("web"),
                json!("Deployment/web"),
                json!("cpu: 20%/50%, memory: <unknown>/100Mi + 1 more..."),
                json!("1"),
                json!(10),
                json!(2),
                json!("60s")
            ]
        );
    }

    #[test]
    fn a_v1_object_shows_its_cpu_target() {
        let hpa = json!({"apiVersion": "autoscaling/v1", "metadata": {"name": "web"},
                         "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
                                  "maxReplicas": 3, "targetCPUUtilizationPercentage": 70}});
        let row = hpa_row(&hpa, now());
        assert_eq!(row[2], "cpu: <unknown>/70%");
        assert_eq!(row[3], "<unset>");
    }
}
