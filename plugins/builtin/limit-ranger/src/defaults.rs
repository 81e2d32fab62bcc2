//! Defaulting: containers and init containers without a request or limit for
//! a resource get the LimitRange's `defaultRequest` / `default` for type
//! Container, and the pod is annotated with what was set (kube's
//! `kubernetes.io/limit-ranger` annotation, same wording).

use capstan_plugin_sdk::{object, Value};
use serde_json::Map;

/// The annotation kube writes on defaulted pods.
pub const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// Applies one LimitRange's container defaults to `pod` in place; returns
/// true when something was set.
pub fn apply(limit_range: &Value, pod: &mut Value) -> bool {
    let (requests, limits) = container_defaults(limit_range);
    if requests.is_empty() && limits.is_empty() {
        return false;
    }
    let mut notes = Vec::new();
    for (field, prefix) in [
        ("containers", "container"),
        ("initContainers", "init container"),
    ] {
        let Some(list) = pod
            .pointer_mut(&format!("/spec/{field}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for container in list.iter_mut() {
            notes.extend(merge_container(container, &requests, &limits, prefix));
        }
    }
    if notes.is_empty() {
        return false;
    }
    annotate(pod, format!("LimitRanger plugin set: {}", notes.join("; ")));
    true
}

/// (defaultRequest, default) of every `type: Container` item, later items winning.
fn container_defaults(limit_range: &Value) -> (Map<String, Value>, Map<String, Value>) {
    let mut requests = Map::new();
    let mut limits = Map::new();
    for item in object::array(limit_range, &["spec", "limits"]) {
        if object::get_str(item, &["type"]) != Some("Container") {
            continue;
        }
        let copy = |key: &str, into: &mut Map<String, Value>| {
            if let Some(map) = item.get(key).and_then(Value::as_object) {
                into.extend(map.clone());
            }
        };
        copy("defaultRequest", &mut requests);
        copy("default", &mut limits);
    }
    (requests, limits)
}

/// Fills missing entries; returns kube's notes ("cpu, memory request for container web").
fn merge_container(
    container: &mut Value,
    requests: &Map<String, Value>,
    limits: &Map<String, Value>,
    prefix: &str,
) -> Vec<String> {
    let name = object::get_str(container, &["name"])
        .unwrap_or("")
        .to_string();
    let set_limits = fill(container, "limits", limits);
    let set_requests = fill(container, "requests", requests);
    let mut notes = Vec::new();
    if !set_requests.is_empty() {
        notes.push(format!(
            "{} request for {prefix} {name}",
            set_requests.join(", ")
        ));
    }
    if !set_limits.is_empty() {
        notes.push(format!(
            "{} limit for {prefix} {name}",
            set_limits.join(", ")
        ));
    }
    notes
}

/// Adds each default absent from `resources.<key>`; returns the sorted names set.
fn fill(container: &mut Value, key: &str, defaults: &Map<String, Value>) -> Vec<String> {
    let Some(target) = ensure_object(container, &["resources", key]) else {
        return Vec::new();
    };
    let mut set = Vec::new();
    for (name, value) in defaults {
        if !target.contains_key(name) {
            target.insert(name.clone(), value.clone());
            set.push(name.clone());
        }
    }
    set.sort();
    set
}

/// The object at `path`, created (as `{}`) where missing; None when a step is not an object.
fn ensure_object<'a>(value: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut current = value;
    for key in path {
        let map = current.as_object_mut()?;
        let next = map
            .entry(key.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if next.is_null() {
            *next = Value::Object(Map::new());
        }
        current = next;
    }
    current.as_object_mut()
}

fn annotate(pod: &mut Value, note: String) {
    if let Some(annotations) = ensure_object(pod, &["metadata", "annotations"]) {
        annotations.insert(ANNOTATION.to_string(), Value::String(note));
    }
}
