//! The scale subresource: an autoscaling/v1 Scale view of `spec.replicas`.

use super::meta;
use serde_json::{json, Map, Value};

/// The Scale object for a scalable resource.
pub fn to_scale(obj: &Value) -> Value {
    let m = meta::metadata(obj).cloned().unwrap_or_default();
    let mut md = Map::new();
    for f in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = m.get(f) {
            md.insert(f.into(), v.clone());
        }
    }
    let replicas = obj
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let current = obj
        .pointer("/status/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let mut status = json!({"replicas": current});
    let selector = obj
        .pointer("/spec/selector")
        .map(selector_string)
        .unwrap_or_default();
    if !selector.is_empty() {
        status["selector"] = json!(selector);
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": md, "spec": {"replicas": replicas}, "status": status})
}

/// Writes a Scale's desired replicas (and its resourceVersion, a precondition) into the object.
pub fn apply_scale(mut obj: Value, scale: &Value) -> Result<Value, String> {
    let replicas = match scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_i64().ok_or("spec.replicas must be an integer")?,
    };
    if replicas < 0 {
        return Err(format!(
            "spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"
        ));
    }
    obj["spec"]["replicas"] = json!(replicas);
    let m = meta::metadata_mut(&mut obj);
    match meta::resource_version(scale) {
        Some(rv) => m.insert("resourceVersion".into(), json!(rv)),
        None => m.remove("resourceVersion"),
    };
    Ok(obj)
}

/// A selector as a string: a LabelSelector object or a plain map (ReplicationController).
pub fn selector_string(sel: &Value) -> String {
    let Some(o) = sel.as_object() else {
        return String::new();
    };
    if !o.contains_key("matchLabels") && !o.contains_key("matchExpressions") {
        return pairs(o);
    }
    let mut parts = Vec::new();
    if let Some(ml) = o.get("matchLabels").and_then(Value::as_object) {
        if !ml.is_empty() {
            parts.push(pairs(ml));
        }
    }
    for e in o
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        parts.push(expression(e));
    }
    parts.join(",")
}

fn pairs(m: &Map<String, Value>) -> String {
    let mut kv: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    kv.sort();
    kv.join(",")
}

fn expression(e: &Value) -> String {
    let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
    let mut values: Vec<&str> = e
        .get("values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    values.sort();
    match e
        .get("operator")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "In" => format!("{key} in ({})", values.join(",")),
        "NotIn" => format!("{key} notin ({})", values.join(",")),
        "Exists" => key.to_string(),
        "DoesNotExist" => format!("!{key}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_reflects_replicas_and_selector() {
        let d = json!({"metadata": {"name": "web", "resourceVersion": "7"}, "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}}, "status": {"replicas": 2}});
        let s = to_scale(&d);
        assert_eq!(s["spec"]["replicas"], 3);
        assert_eq!(s["status"]["replicas"], 2);
        assert_eq!(s["status"]["selector"], "app=web");
        let updated = apply_scale(d, &json!({"spec": {"replicas": 5}})).unwrap();
        assert_eq!(updated["spec"]["replicas"], 5);
        assert!(apply_scale(updated, &json!({"spec": {"replicas": -1}})).is_err());
    }
}
