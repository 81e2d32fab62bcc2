//! x-kubernetes-embedded-resource objects: apiVersion and kind required
//! and well-formed, metadata validated as an ObjectMeta (kube's
//! schema/objectmeta Validate).

use super::node::Node;
use super::problems::invalid;
use crate::apimachinery::names::{self, NameRule};
use crate::apimachinery::status::Cause;
use kube_rules::gofmt::json_kind;
use serde_json::{Map, Value};

pub(super) fn validate(x: &Value, s: &Node, path: &str, out: &mut Vec<Cause>) {
    match x {
        Value::Object(map) => {
            if s.embedded {
                validate_resource(map, path, out);
            }
            for (key, value) in map {
                if let Some(prop) = s.properties.get(key) {
                    validate(value, prop, &child(path, key), out);
                } else if let Some(schema) = s.additional_schema() {
                    validate(value, schema, &format!("{path}[{key}]"), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.items.as_deref() {
                for (i, item) in items.iter().enumerate() {
                    validate(item, item_schema, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn validate_resource(x: &Map<String, Value>, path: &str, out: &mut Vec<Cause>) {
    for key in ["apiVersion", "kind"] {
        if !x.contains_key(key) {
            out.push(Cause::required(&child(path, key), ""));
        }
    }
    if let Some(v) = x.get("apiVersion") {
        out.extend(api_version(v, &child(path, "apiVersion")));
    }
    if let Some(v) = x.get("kind") {
        out.extend(kind(v, &child(path, "kind")));
    }
    if let Some(v) = x.get("metadata") {
        object_meta(v, &child(path, "metadata"), out);
    }
}

fn api_version(v: &Value, field: &str) -> Option<Cause> {
    let Some(s) = v.as_str() else {
        return Some(invalid(field, v, "must be a string"));
    };
    if s.is_empty() {
        return Some(invalid(field, v, "must not be empty"));
    }
    (s.matches('/').count() > 1 && s != "/")
        .then(|| invalid(field, v, &format!("unexpected GroupVersion string: {s}")))
}

fn kind(v: &Value, field: &str) -> Option<Cause> {
    let Some(s) = v.as_str() else {
        return Some(invalid(field, v, "must be a string"));
    };
    if s.is_empty() {
        return Some(invalid(field, v, "must not be empty"));
    }
    let problems = kube_rules::dns1035_label(&s.to_lowercase());
    (!problems.is_empty()).then(|| {
        let detail = format!(
            "may have mixed case, but should otherwise match: {}",
            problems.join(",")
        );
        invalid(field, v, &detail)
    })
}

/// ObjectMeta's string fields and its int64 field, for decode errors.
const STRING_FIELDS: [&str; 6] = [
    "generateName",
    "name",
    "namespace",
    "resourceVersion",
    "selfLink",
    "uid",
];

fn object_meta(v: &Value, field: &str, out: &mut Vec<Cause>) {
    let Some(meta) = v.as_object() else {
        let message = format!(
            "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
            json_kind(v)
        );
        out.push(invalid(field, v, &message));
        return;
    };
    if let Some(message) = decode_error(meta) {
        out.push(invalid(field, v, &message));
        return;
    }
    let text = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or_default();
    let generate_name = text("generateName");
    for bad in ["/", "%"].into_iter().filter(|b| generate_name.contains(b)) {
        let detail = format!("may not contain '{bad}'");
        out.push(Cause::invalid(
            &child(field, "generateName"),
            generate_name,
            &detail,
        ));
    }
    let name = Some(text("name"))
        .filter(|n| !n.is_empty())
        .unwrap_or("fakename");
    out.extend(names::validate(
        NameRule::PathSegment,
        name,
        &child(field, "name"),
    ));
    let namespace = text("namespace");
    if !namespace.is_empty() {
        out.extend(names::validate(
            NameRule::Label,
            namespace,
            &child(field, "namespace"),
        ));
    }
    if let Some(generation) = meta
        .get("generation")
        .filter(|g| g.as_i64().is_some_and(|g| g < 0))
    {
        let detail = "must be greater than or equal to 0";
        out.push(invalid(&child(field, "generation"), generation, detail));
    }
}

/// The first error Go's decoder meets in the sorted metadata (string
/// fields and generation).
fn decode_error(meta: &Map<String, Value>) -> Option<String> {
    let mut keys: Vec<&String> = meta.keys().collect();
    keys.sort();
    keys.into_iter().find_map(|k| {
        let v = &meta[k];
        let go_type = match k.as_str() {
            k if STRING_FIELDS.contains(&k) && !v.is_string() && !v.is_null() => "string",
            "generation" if !v.is_null() && v.as_i64().is_none() => "int64",
            _ => return None,
        };
        Some(format!(
            "json: cannot unmarshal {} into Go struct field ObjectMeta.{k} of type {go_type}",
            json_kind(v)
        ))
    })
}
