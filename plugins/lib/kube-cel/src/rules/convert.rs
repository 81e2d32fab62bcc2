//! A JSON value as `self` sees it (kube's `UnstructuredToVal`): objects
//! with declared properties under their CEL names (others dropped; at a
//! resource root apiVersion, kind and metadata.name/generateName), maps with
//! their keys as they are, `number`s as doubles, the rest as JSON maps to
//! CEL. `date-time`/`duration` strings stay strings (the `cel` crate is
//! built without timestamps).

use std::collections::HashMap;
use std::sync::Arc;

use cel::objects::{Key, Map};
use cel::Value as Cel;
use serde_json::Value;

use super::schema::{Kind, Node};

/// `value` typed by `node`.
pub(crate) fn to_cel(node: &Node, value: &Value) -> Cel {
    match (node.kind, value) {
        (_, Value::Null) => Cel::Null,
        (Kind::Object, Value::Object(fields)) => object(node, fields),
        (Kind::Map, Value::Object(fields)) => {
            let Some(values) = node.additional.as_deref() else {
                return dynamic(value);
            };
            map(fields.iter().map(|(k, v)| (k.clone(), to_cel(values, v))))
        }
        (Kind::List, Value::Array(items)) => match node.items.as_deref() {
            Some(item) => Cel::List(Arc::new(items.iter().map(|v| to_cel(item, v)).collect())),
            None => dynamic(value),
        },
        (Kind::Number, Value::Number(n)) => Cel::Float(n.as_f64().unwrap_or_default()),
        _ => dynamic(value),
    }
}

fn object(node: &Node, fields: &serde_json::Map<String, Value>) -> Cel {
    let mut out: Vec<(String, Cel)> = Vec::with_capacity(fields.len());
    for property in &node.properties {
        let Some(cel_name) = &property.cel_name else {
            continue;
        };
        if node.resource_root
            && matches!(property.name.as_str(), "apiVersion" | "kind" | "metadata")
        {
            continue;
        }
        if let Some(v) = fields.get(&property.name) {
            out.push((cel_name.clone(), to_cel(&property.node, v)));
        }
    }
    if node.resource_root {
        resource_meta(fields, &mut out);
    }
    map(out.into_iter())
}

/// What `self` shows of a resource's own fields.
fn resource_meta(fields: &serde_json::Map<String, Value>, out: &mut Vec<(String, Cel)>) {
    for key in ["apiVersion", "kind"] {
        if let Some(Value::String(s)) = fields.get(key) {
            out.push((key.to_string(), Cel::from(s.as_str())));
        }
    }
    let Some(Value::Object(meta)) = fields.get("metadata") else {
        return;
    };
    let kept = ["name", "generateName"]
        .into_iter()
        .filter_map(|k| match meta.get(k) {
            Some(Value::String(s)) => Some((k.to_string(), Cel::from(s.as_str()))),
            _ => None,
        });
    out.push(("metadata".to_string(), map(kept)));
}

fn map(entries: impl Iterator<Item = (String, Cel)>) -> Cel {
    let map: HashMap<Key, Cel> = entries
        .map(|(k, v)| (Key::String(Arc::new(k)), v))
        .collect();
    Cel::Map(Map { map: Arc::new(map) })
}

/// JSON as CEL, untyped: integers stay integers.
pub(crate) fn dynamic(value: &Value) -> Cel {
    match value {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Cel::Int(i),
            (None, Some(u)) => Cel::UInt(u),
            _ => Cel::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => Cel::from(s.as_str()),
        Value::Array(items) => Cel::List(Arc::new(items.iter().map(dynamic).collect())),
        Value::Object(fields) => map(fields.iter().map(|(k, v)| (k.clone(), dynamic(v)))),
    }
}
