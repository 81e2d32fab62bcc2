//! Structural defaulting as kube applies it to custom resources on write
//! and on read from storage: a missing field with a default gets a copy of
//! it, as does a null where the schema is not nullable; list items and map
//! values are defaulted by their schema too.

use super::node::Node;
use serde_json::Value;

fn non_nullable_null(x: &Value, s: &Node) -> bool {
    x.is_null() && !s.nullable
}

pub(super) fn apply(x: &mut Value, s: &Node) {
    match x {
        Value::Object(map) => {
            for (key, prop) in &s.properties {
                let Some(default) = &prop.default else {
                    continue;
                };
                match map.get_mut(key) {
                    Some(value) if !non_nullable_null(value, prop) => {}
                    Some(value) => *value = default.clone(),
                    None => {
                        map.insert(key.clone(), default.clone());
                    }
                }
            }
            for (key, value) in map.iter_mut() {
                if let Some(prop) = s.properties.get(key) {
                    apply(value, prop);
                } else if let Some(schema) = s.additional_schema() {
                    fill_null(value, schema);
                    apply(value, schema);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.items.as_deref() {
                for item in items {
                    fill_null(item, item_schema);
                    apply(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

/// A non-nullable null takes the schema's default (kube writes the default,
/// which may itself be null when there is none).
fn fill_null(value: &mut Value, s: &Node) {
    if non_nullable_null(value, s) {
        if let Some(default) = &s.default {
            *value = default.clone();
        }
    }
}
