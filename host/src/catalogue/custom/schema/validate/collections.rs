//! Arrays and objects: items, item counts, uniqueItems; property counts,
//! additionalProperties, properties, required; and, on update, the old
//! value each child is correlated with.

use super::{validate, Outcome};
use crate::catalogue::custom::schema::node::{Additional, ListType, Node};
use crate::catalogue::custom::schema::problems::{Code, Problem};
use serde_json::{Map, Value};
use std::collections::HashMap;

pub(super) fn array_checks(
    node: &Node,
    items: &[Value],
    path: &str,
    old: Option<&Value>,
) -> Outcome {
    let mut out = Outcome::default();
    if let Some(item_schema) = &node.items {
        let old_items = correlate_items(node, old);
        for (i, item) in items.iter().enumerate() {
            let old_item = old_items.as_ref().and_then(|o| o.find(node, item));
            out.merge(validate(
                item_schema,
                item,
                &format!("{path}[{i}]"),
                old_item,
            ));
        }
    }
    let size = items.len() as i64;
    if let Some(min) = node.min_items.filter(|m| size < *m) {
        let message = format!("{path} in body should have at least {min} items");
        out.push(Problem::new(Code::Other, path, Some(size.into()), message));
    }
    if let Some(max) = node.max_items.filter(|m| size > *m) {
        let message = format!("{path} in body should have at most {max} items");
        let code = Code::TooMany(size, max);
        out.push(Problem::new(code, path, Some(size.into()), message));
    }
    if node.unique_items && has_duplicates(items) {
        let message = format!("{path} in body shouldn't contain duplicates");
        out.push(Problem::new(Code::Other, path, None, message));
    }
    out.count += 1;
    out
}

/// reflect.DeepEqual between any two items, in one pass: each item's
/// canonical form (sorted keys, integers and floats apart) hashed.
fn has_duplicates(items: &[Value]) -> bool {
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    items.iter().any(|item| {
        let mut key = String::new();
        deep_key(item, &mut key);
        !seen.insert(key)
    })
}

fn deep_key(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for k in keys {
                out.push_str(&Value::from(k.as_str()).to_string());
                out.push(':');
                deep_key(&map[k], out);
                out.push(',');
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                deep_key(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Number(n) if n.as_i64().is_some() => out.push_str(&format!("i{n}")),
        Value::Number(n) => out.push_str(&format!("f{n}")),
        other => out.push_str(&other.to_string()),
    }
}

pub(super) fn object_checks(
    node: &Node,
    map: &Map<String, Value>,
    path: &str,
    old: Option<&Value>,
) -> Outcome {
    let keys = map.len() as i64;
    if let Some(min) = node.min_properties.filter(|m| keys < *m) {
        let message = format!("{path} in body should have at least {min} properties");
        return Outcome::failed(Problem::new(Code::Other, path, Some(keys.into()), message));
    }
    if let Some(max) = node.max_properties.filter(|m| keys > *m) {
        let message = format!("{path} in body should have at most {max} properties");
        let code = Code::TooMany(keys, max);
        return Outcome::failed(Problem::new(code, path, Some(keys.into()), message));
    }
    let mut out = Outcome::default();
    let old_of = |key: &str| {
        let type_meta = path.is_empty() && (key == "kind" || key == "apiVersion");
        old.and_then(Value::as_object)
            .and_then(|o| o.get(key))
            .filter(|_| !type_meta)
    };
    unknown_keys(node, map, path, &old_of, &mut out);
    for (name, prop) in &node.properties {
        if let Some(v) = map.get(name) {
            let child = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            out.merge(validate(prop, v, &child, old_of(name)));
        }
    }
    for key in &node.required {
        if !map.contains_key(key) {
            let name = format!("{path}.{key}");
            let message = format!("{name} in body is required");
            out.push(Problem::new(Code::Required, &name, None, message));
        }
    }
    out
}

/// Keys outside `properties`: forbidden by `additionalProperties: false`,
/// validated by an additionalProperties schema, otherwise allowed.
fn unknown_keys<'a>(
    node: &Node,
    map: &Map<String, Value>,
    path: &str,
    old_of: &dyn Fn(&str) -> Option<&'a Value>,
    out: &mut Outcome,
) {
    let unknown = map
        .iter()
        .filter(|(k, _)| !node.properties.contains_key(*k));
    match &node.additional {
        Some(Additional::Allows(false)) => {
            for (key, _) in unknown {
                let message = format!("{path}.{key} in body is a forbidden property");
                out.push(Problem::new(
                    Code::Other,
                    path,
                    Some(key.as_str().into()),
                    message,
                ));
            }
        }
        Some(Additional::Schema(schema)) => {
            for (key, value) in unknown {
                out.merge(validate(
                    schema,
                    value,
                    &format!("{path}.{key}"),
                    old_of(key),
                ));
            }
        }
        _ => {}
    }
}

/// The old items of a list-type map, by their keys; other lists do not
/// correlate their items.
struct OldItems<'a> {
    by_key: HashMap<String, &'a Value>,
}

impl<'a> OldItems<'a> {
    fn find(&self, node: &Node, item: &Value) -> Option<&'a Value> {
        self.by_key.get(&list_map_key(node, item)).copied()
    }
}

fn correlate_items<'a>(node: &Node, old: Option<&'a Value>) -> Option<OldItems<'a>> {
    if node.list_type != Some(ListType::Map) {
        return None;
    }
    let old_items = old?.as_array()?;
    let by_key = old_items
        .iter()
        .map(|item| (list_map_key(node, item), item))
        .collect();
    Some(OldItems { by_key })
}

/// An item's key fields, compared as JSON.
fn list_map_key(node: &Node, item: &Value) -> String {
    let keys: Vec<Value> = node
        .list_map_keys
        .iter()
        .map(|k| item.get(k).cloned().unwrap_or(Value::Null))
        .collect();
    Value::Array(keys).to_string()
}
