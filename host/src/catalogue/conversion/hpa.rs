//! HorizontalPodAutoscaler between autoscaling/v1 and autoscaling/v2, as
//! kube's `pkg/apis/autoscaling/v1/conversion.go`: v1's
//! `targetCPUUtilizationPercentage` is v2's Resource cpu Utilization metric;
//! what v1 cannot say (the other metrics, the current metrics, behavior and
//! conditions) travels in v1 as annotations, read back on the way to v2.

mod behavior;
mod metrics;

use serde_json::{json, Map, Value};

/// Other metrics than the cpu utilization, in v1's MetricSpec form.
const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// Every current metric, in v1's MetricStatus form.
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// The conditions.
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// spec.behavior, as kube's internal type encodes (Go field names).
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const ROUND_TRIP: [&str; 4] = [METRICS, CURRENT_METRICS, CONDITIONS, BEHAVIOR];

/// v1's implicit target when no metric is given (kube's DefaultCPUUtilization).
const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// An HPA in either version, in `version` ("v1" or "v2").
pub(super) fn convert(obj: Value, version: &str) -> Result<Value, String> {
    let from = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match (from.as_str(), version) {
        ("autoscaling/v1", "v2") => Ok(with_api_version(to_v2(obj), "autoscaling/v2")),
        ("autoscaling/v2", "v1") => Ok(with_api_version(to_v1(obj), "autoscaling/v1")),
        (from, to) => Err(format!("no conversion from {from} to autoscaling/{to}")),
    }
}

fn with_api_version(mut obj: Value, api_version: &str) -> Value {
    if let Some(fields) = obj.as_object_mut() {
        fields.insert("apiVersion".into(), json!(api_version));
    }
    obj
}

fn object(value: Option<&Value>) -> Map<String, Value> {
    value
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Copies `keys` present in `from` into `to`, in that order.
fn copy(to: &mut Map<String, Value>, from: &Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(value) = from.get(*key) {
            to.insert(key.to_string(), value.clone());
        }
    }
}

fn annotations_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    obj.pointer_mut("/metadata/annotations")?.as_object_mut()
}

/// Removes the round-trip annotations (and the map, if nothing else is in it).
fn drop_round_trip(obj: &mut Value) -> Map<String, Value> {
    let mut taken = Map::new();
    let Some(annotations) = annotations_mut(obj) else {
        return taken;
    };
    for key in ROUND_TRIP {
        if let Some(value) = annotations.remove(key) {
            taken.insert(key.to_string(), value);
        }
    }
    if annotations.is_empty() {
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("annotations");
        }
    }
    taken
}

/// An annotation's JSON text, parsed (kube ignores one that does not parse).
fn parsed(annotations: &Map<String, Value>, key: &str) -> Option<Value> {
    serde_json::from_str(annotations.get(key)?.as_str()?).ok()
}

fn is_cpu_utilization(metric: &Value) -> bool {
    metric["type"] == "Resource"
        && metric["resource"]["name"] == "cpu"
        && !metric["resource"]["target"]["averageUtilization"].is_null()
}

fn cpu_metric(utilization: Value) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
           "target": {"type": "Utilization", "averageUtilization": utilization}}})
}

fn to_v2(mut obj: Value) -> Value {
    let taken = drop_round_trip(&mut obj);
    let spec = spec_to_v2(&object(obj.get("spec")), &taken);
    let status = status_to_v2(&object(obj.get("status")), &taken);
    if let Some(fields) = obj.as_object_mut() {
        fields.insert("spec".into(), Value::Object(spec));
        fields.insert("status".into(), Value::Object(status));
    }
    obj
}

fn spec_to_v2(v1: &Map<String, Value>, taken: &Map<String, Value>) -> Map<String, Value> {
    let mut spec = Map::new();
    copy(
        &mut spec,
        v1,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    let mut all: Vec<Value> = match parsed(taken, METRICS) {
        Some(Value::Array(others)) => others.iter().map(metrics::spec_to_v2).collect(),
        _ => Vec::new(),
    };
    if let Some(cpu) = v1.get("targetCPUUtilizationPercentage") {
        all.push(cpu_metric(cpu.clone()));
    }
    if all.is_empty() {
        all.push(cpu_metric(json!(DEFAULT_CPU_UTILIZATION)));
    }
    spec.insert("metrics".into(), Value::Array(all));
    if let Some(behavior) = parsed(taken, BEHAVIOR).and_then(|b| behavior::to_v2(&b)) {
        spec.insert("behavior".into(), behavior);
    }
    spec
}

fn status_to_v2(v1: &Map<String, Value>, taken: &Map<String, Value>) -> Map<String, Value> {
    let mut status = Map::new();
    copy(&mut status, v1, &["observedGeneration", "lastScaleTime"]);
    if v1.get("currentReplicas").is_some_and(|n| n != 0) {
        copy(&mut status, v1, &["currentReplicas"]);
    }
    status.insert(
        "desiredReplicas".into(),
        v1.get("desiredReplicas").cloned().unwrap_or(json!(0)),
    );
    let current = match (
        parsed(taken, CURRENT_METRICS),
        v1.get("currentCPUUtilizationPercentage"),
    ) {
        (Some(Value::Array(all)), _) => Some(all.iter().map(metrics::status_to_v2).collect()),
        (_, Some(cpu)) => Some(vec![json!({"type": "Resource", "resource": {"name": "cpu",
                                   "current": {"averageUtilization": cpu}}})]),
        _ => None,
    };
    if let Some(current) = current {
        status.insert("currentMetrics".into(), Value::Array(current));
    }
    if let Some(Value::Array(conditions)) = parsed(taken, CONDITIONS) {
        status.insert("conditions".into(), Value::Array(conditions));
    }
    status
}

fn to_v1(mut obj: Value) -> Value {
    drop_round_trip(&mut obj);
    let spec = object(obj.get("spec"));
    let status = object(obj.get("status"));
    let mut annotations = Map::new();
    let metric_list = |key: &str, from: &Map<String, Value>| match from.get(key) {
        Some(Value::Array(all)) if !all.is_empty() => all.clone(),
        _ => Vec::new(),
    };
    let others: Vec<Value> = metric_list("metrics", &spec)
        .iter()
        .filter(|m| !is_cpu_utilization(m))
        .map(metrics::spec_to_v1)
        .collect();
    annotate(&mut annotations, METRICS, &others);
    let current: Vec<Value> = metric_list("currentMetrics", &status)
        .iter()
        .map(metrics::status_to_v1)
        .collect();
    annotate(&mut annotations, CURRENT_METRICS, &current);
    if let Some(behavior) = spec.get("behavior").filter(|b| b.is_object()) {
        annotations.insert(
            BEHAVIOR.into(),
            json!(behavior::to_internal(behavior).to_string()),
        );
    }
    annotate(
        &mut annotations,
        CONDITIONS,
        &metric_list("conditions", &status),
    );
    add_annotations(&mut obj, annotations);
    if let Some(fields) = obj.as_object_mut() {
        fields.insert("spec".into(), Value::Object(spec_to_v1(&spec)));
        fields.insert("status".into(), Value::Object(status_to_v1(&status)));
    }
    obj
}

/// Adds `key`: the list's JSON, when the list is not empty.
fn annotate(annotations: &mut Map<String, Value>, key: &str, list: &[Value]) {
    if !list.is_empty() {
        annotations.insert(key.into(), json!(Value::from(list.to_vec()).to_string()));
    }
}

/// Merges `added` into the object's annotations, sorted by key as Go
/// encodes a map.
fn add_annotations(obj: &mut Value, added: Map<String, Value>) {
    if added.is_empty() {
        return;
    }
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let mut all: Vec<(String, Value)> = object(meta.get("annotations")).into_iter().collect();
    all.extend(added);
    all.sort_by(|a, b| a.0.cmp(&b.0));
    meta.insert(
        "annotations".into(),
        Value::Object(all.into_iter().collect()),
    );
}

fn spec_to_v1(v2: &Map<String, Value>) -> Map<String, Value> {
    let mut spec = Map::new();
    copy(
        &mut spec,
        v2,
        &["scaleTargetRef", "minReplicas", "maxReplicas"],
    );
    let metrics = v2.get("metrics").and_then(Value::as_array);
    let cpu = metrics.and_then(|all| all.iter().find(|m| is_cpu_utilization(m)));
    if let Some(cpu) = cpu {
        let utilization = cpu["resource"]["target"]["averageUtilization"].clone();
        spec.insert("targetCPUUtilizationPercentage".into(), utilization);
    }
    spec
}

fn status_to_v1(v2: &Map<String, Value>) -> Map<String, Value> {
    let mut status = Map::new();
    copy(&mut status, v2, &["observedGeneration", "lastScaleTime"]);
    for key in ["currentReplicas", "desiredReplicas"] {
        status.insert(key.into(), v2.get(key).cloned().unwrap_or(json!(0)));
    }
    let current = v2.get("currentMetrics").and_then(Value::as_array);
    let cpu = current.into_iter().flatten().find(|m| {
        m["type"] == "Resource"
            && m["resource"]["name"] == "cpu"
            && !m["resource"]["current"]["averageUtilization"].is_null()
    });
    if let Some(cpu) = cpu {
        let utilization = cpu["resource"]["current"]["averageUtilization"].clone();
        status.insert("currentCPUUtilizationPercentage".into(), utilization);
    }
    status
}

#[cfg(test)]
mod tests;
