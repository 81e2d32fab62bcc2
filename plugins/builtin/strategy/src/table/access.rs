//! Small readers over served JSON objects shared by the table printers:
//! typed field access with kube's zero values, timestamps, ages, and the
//! common "containers / images / selector" cells.

use chrono::{DateTime, Datelike, Utc};
use serde_json::{Map, Value};

use crate::selector;

/// The string at a JSON pointer, or "" (Go's zero value).
pub(crate) fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The string at a pointer when present and non-empty.
pub(crate) fn non_empty<'a>(obj: &'a Value, pointer: &str) -> Option<&'a str> {
    Some(text(obj, pointer)).filter(|s| !s.is_empty())
}

/// The integer at a pointer, or 0.
pub(crate) fn int(obj: &Value, pointer: &str) -> i64 {
    obj.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// The integer at a pointer when present.
pub(crate) fn opt_int(obj: &Value, pointer: &str) -> Option<i64> {
    obj.pointer(pointer).and_then(Value::as_i64)
}

/// The boolean at a pointer, or false.
pub(crate) fn flag(obj: &Value, pointer: &str) -> bool {
    obj.pointer(pointer)
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The array at a pointer, or an empty slice.
pub(crate) fn list<'a>(obj: &'a Value, pointer: &str) -> &'a [Value] {
    obj.pointer(pointer)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The object at a pointer, if any.
pub(crate) fn map<'a>(obj: &'a Value, pointer: &str) -> Option<&'a Map<String, Value>> {
    obj.pointer(pointer).and_then(Value::as_object)
}

/// Number of entries of the object at a pointer (0 when absent).
pub(crate) fn map_len(obj: &Value, pointer: &str) -> i64 {
    map(obj, pointer).map_or(0, |m| m.len() as i64)
}

/// A quantity (string or number) rendered as text; absent reads "0".
pub(crate) fn quantity(obj: &Value, pointer: &str) -> String {
    match obj.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".to_string(),
    }
}

/// A timestamp at a pointer; the Go zero time counts as unset.
pub(crate) fn time(obj: &Value, pointer: &str) -> Option<DateTime<Utc>> {
    let raw = non_empty(obj, pointer)?;
    let parsed = DateTime::parse_from_rfc3339(raw).ok()?.with_timezone(&Utc);
    Some(parsed).filter(|t| t.year() > 1)
}

pub(crate) use kube_time::human_duration_of as human_duration;

/// kube's `translateTimestampSince`.
pub(crate) fn since(t: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    match t {
        Some(t) => human_duration(now - t),
        None => "<unknown>".to_string(),
    }
}

/// The AGE cell.
pub(crate) fn age(obj: &Value, now: DateTime<Utc>) -> Value {
    Value::from(since(time(obj, "/metadata/creationTimestamp"), now))
}

/// The NAME cell.
pub(crate) fn name(obj: &Value) -> Value {
    Value::from(text(obj, "/metadata/name"))
}

/// `layoutContainerCells`: comma-joined container names and images.
pub(crate) fn containers_and_images(obj: &Value, pointer: &str) -> (Value, Value) {
    let containers = list(obj, pointer);
    let names: Vec<&str> = containers.iter().map(|c| text(c, "/name")).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(c, "/image")).collect();
    (Value::from(names.join(",")), Value::from(images.join(",")))
}

/// `metav1.FormatLabelSelector`: `<none>` when empty, `<error>` if invalid.
pub(crate) fn format_label_selector(selector: Option<&Value>) -> String {
    match selector::to_text(selector.unwrap_or(&Value::Null)) {
        Some(s) if s.is_empty() => "<none>".to_string(),
        Some(s) => s,
        None => "<error>".to_string(),
    }
}

/// `labels.FormatLabels` of the string map at a pointer: `k=v` pairs
/// sorted by key, or `<none>`.
pub(crate) fn format_label_map(obj: &Value, pointer: &str) -> String {
    let mut pairs: Vec<(&String, &str)> = map(obj, pointer)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k, v.as_str().unwrap_or("")))
        .collect();
    if pairs.is_empty() {
        return "<none>".to_string();
    }
    pairs.sort();
    let parts: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.join(",")
}

/// `"<none>"` for an empty string.
pub(crate) fn or_none(s: &str) -> String {
    if s.is_empty() {
        "<none>".to_string()
    } else {
        s.to_string()
    }
}
