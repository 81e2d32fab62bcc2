//! What a converter may change in metadata, as kube's webhook converter
//! checks it: kind, name, namespace and uid must stay; everything but
//! labels and annotations is restored from the original
//! (validateConvertedObject, restoreObjectMeta), and changed labels and
//! annotations must be valid.

use crate::apimachinery::selectors::validation::invalid;
use kube_rules::gofmt::{aggregate, quote as go_quote};
use kube_rules::{label_value as label_value_errors, qualified_name as qualified_name_errors};
use serde_json::{Map, Value};

/// kube's `TotalAnnotationSizeLimitB`.
const ANNOTATIONS_SIZE_LIMIT: usize = 256 * 1024;

/// kube's validateConvertedObject.
pub(super) fn same_identity(original: &Value, converted: &Value) -> Result<(), String> {
    let fields = [
        ("kind", "/kind"),
        ("name", "/metadata/name"),
        ("namespace", "/metadata/namespace"),
        ("UID", "/metadata/uid"),
    ];
    for (what, pointer) in fields {
        let (a, b) = (text(original, pointer), text(converted, pointer));
        if a != b {
            return Err(format!("must have the same {what}: {a} != {b}"));
        }
    }
    Ok(())
}

/// kube's restoreObjectMeta: `converted` gets the original's metadata, with
/// the labels and annotations the converter answered.
pub(super) fn restore(original: &Value, converted: &mut Value) -> Result<(), String> {
    let answered = match converted.get("metadata") {
        None => return Err("missing metadata in converted object".into()),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                go_type(other)
            ))
        }
    };
    let mut restored = match original.get("metadata") {
        Some(Value::Object(m)) => m.clone(),
        None => Map::new(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in input object",
                go_type(other)
            ))
        }
    };
    for field in ["labels", "annotations"] {
        keep_answered(field, &answered, &mut restored)?;
    }
    if let Some(map) = converted.as_object_mut() {
        map.insert("metadata".into(), Value::Object(restored));
    }
    Ok(())
}

/// Labels or annotations as the converter answered them, checked when changed.
fn keep_answered(
    field: &str,
    answered: &Map<String, Value>,
    restored: &mut Map<String, Value>,
) -> Result<(), String> {
    let response = match answered.get(field) {
        None | Some(Value::Null) => {
            restored.remove(field);
            return Ok(());
        }
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(format!(
                "invalid metadata.{field} of type {} in converted object",
                go_type(other)
            ))
        }
    };
    let original = match restored.get(field) {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(other) => {
            return Err(format!(
                "invalid metadata.{field} of type {} in original object",
                go_type(other)
            ))
        }
    };
    let mut changed = original.map_or(0, Map::len) != response.len();
    for (k, v) in response {
        if !v.is_string() {
            return Err(format!(
                "metadata.{field}[{k}] must be a string, but is {} in converted object",
                go_type(v)
            ));
        }
        changed |= original.and_then(|o| o.get(k)) != Some(v);
    }
    if changed {
        let problems = match field {
            "labels" => label_errors(response),
            _ => annotation_errors(response),
        };
        let message = aggregate(&problems);
        if !message.is_empty() {
            return Err(message);
        }
    }
    restored.insert(field.into(), Value::Object(response.clone()));
    Ok(())
}

/// kube's ValidateLabels (`metadata.labels`).
fn label_errors(labels: &Map<String, Value>) -> Vec<String> {
    let path = "metadata.labels";
    let mut errs = Vec::new();
    for (k, v) in labels {
        let value = v.as_str().unwrap_or_default();
        let key_errs = qualified_name_errors(k).into_iter();
        errs.extend(key_errs.map(|m| invalid(path, &go_quote(k), &m)));
        let value_errs = label_value_errors(value).into_iter();
        errs.extend(value_errs.map(|m| invalid(path, &go_quote(value), &m)));
    }
    errs
}

/// kube's ValidateAnnotations, with the path kube's converter gives it
/// (`metadata.annotation`).
fn annotation_errors(annotations: &Map<String, Value>) -> Vec<String> {
    let path = "metadata.annotation";
    let mut errs = Vec::new();
    let mut size = 0;
    for (k, v) in annotations {
        size += k.len() + v.as_str().map_or(0, str::len);
        let key_errs = qualified_name_errors(&k.to_lowercase()).into_iter();
        errs.extend(key_errs.map(|m| invalid(path, &go_quote(k), &m)));
    }
    if size > ANNOTATIONS_SIZE_LIMIT {
        errs.push(format!(
            "{path}: Too long: may not be more than {ANNOTATIONS_SIZE_LIMIT} bytes"
        ));
    }
    errs
}

/// A string field as Unstructured's getters read it ("" when absent).
fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// What Go's `%T` prints for a decoded JSON value.
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}
