//! x-kubernetes-list-type `set` and `map`: unique items, unique keys
//! (kube's listtype.ValidateListSetsAndMaps).

use super::node::{ListType, Node};
use super::problems::{duplicate, invalid};
use crate::apimachinery::status::Cause;
use serde_json::{Map, Value};
use std::collections::HashMap;

pub(super) fn validate(s: &Node, obj: &Map<String, Value>, path: &str, out: &mut Vec<Cause>) {
    if let Some(schema) = s.additional_schema() {
        for (key, value) in obj {
            check_value(schema, value, &format!("{path}[{key}]"), out);
        }
    }
    for (key, value) in obj {
        if let Some(prop) = s.properties.get(key) {
            check_value(prop, value, &child(path, key), out);
        }
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn check_value(s: &Node, value: &Value, path: &str, out: &mut Vec<Cause>) {
    match value {
        Value::Array(items) => check_array(s, items, path, out),
        Value::Object(map) => validate(s, map, path, out),
        _ => {}
    }
}

fn check_array(s: &Node, items: &[Value], path: &str, out: &mut Vec<Cause>) {
    match s.list_type {
        Some(ListType::Set) => {
            for i in non_unique(items.iter().map(Key::of)) {
                out.push(duplicate(&format!("{path}[{i}]"), &items[i]));
            }
        }
        Some(ListType::Map) => check_list_map(s, items, path, out),
        _ => {}
    }
    if let Some(item_schema) = s.items.as_deref() {
        for (i, item) in items.iter().enumerate() {
            check_value(item_schema, item, &format!("{path}[{i}]"), out);
        }
    }
}

/// A value compared as kube compares set items: scalars by Go type and
/// value, objects and arrays by their JSON encoding (where 1.0 and 1 meet).
#[derive(PartialEq, Eq, Hash)]
enum Key {
    Scalar(String),
    Compound(String),
    Unspecified,
}

impl Key {
    fn of(v: &Value) -> Key {
        match v {
            Value::Object(_) | Value::Array(_) => Key::Compound(canonical(v)),
            Value::Number(n) if n.as_i64().is_none() => Key::Scalar(format!("f{n}")),
            Value::Number(n) => Key::Scalar(format!("i{n}")),
            Value::String(s) => Key::Scalar(format!("s{s}")),
            other => Key::Scalar(other.to_string()),
        }
    }
}

/// JSON with sorted keys and integral floats written as integers.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::from(k.as_str()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.as_i64().is_none() && f.fract() == 0.0 && f.abs() < 1e21 => {
                format!("{f:.0}")
            }
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// The index of each item's second occurrence (kube reports every value
/// repeated once, at its first repetition).
fn non_unique(keys: impl Iterator<Item = Key>) -> Vec<usize> {
    let mut seen: HashMap<Key, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, key) in keys.enumerate() {
        let times = seen.entry(key).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

fn check_list_map(s: &Node, items: &[Value], path: &str, out: &mut Vec<Cause>) {
    if let Some(i) = items.iter().position(|x| !x.is_null() && !x.is_object()) {
        out.push(invalid(
            &format!("{path}[{i}]"),
            &items[i],
            "must be an object for an array of list-type map",
        ));
        return;
    }
    if items.len() <= 1 {
        return;
    }
    let key_values: Vec<Option<Value>> = items.iter().map(|x| map_key(s, x)).collect();
    let keys = key_values.iter().map(|k| match k {
        Some(k) if s.list_map_keys.len() == 1 => k
            .as_object()
            .and_then(|m| m.values().next())
            .map_or(Key::Unspecified, Key::of),
        Some(k) => Key::Compound(canonical(k)),
        None => Key::Unspecified,
    });
    for i in non_unique(keys) {
        let shown = key_values[i]
            .clone()
            .unwrap_or_else(|| Value::Object(Map::new()));
        out.push(duplicate(&format!("{path}[{i}]"), &shown));
    }
}

/// An item's key as kube reports it: `{key: value}` of the key fields the
/// item has; `None` for one key field the item lacks.
fn map_key(s: &Node, item: &Value) -> Option<Value> {
    let fields = item.as_object();
    if let [only] = s.list_map_keys.as_slice() {
        let value = fields.and_then(|f| f.get(only))?;
        return Some(Value::Object(Map::from_iter([(
            only.clone(),
            value.clone(),
        )])));
    }
    let mut key = Map::new();
    for field in &s.list_map_keys {
        if let Some(v) = fields.and_then(|f| f.get(field)) {
            key.insert(field.clone(), v.clone());
        }
    }
    Some(Value::Object(key))
}
