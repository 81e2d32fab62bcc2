//! Field sets in kube's `FieldsV1` form, as managedFields records them: a
//! tree of `f:<field>` (object fields), `k:{"<merge key>":…}` (items of lists
//! merged by key, `.` marking the item itself), `v:<json>` (items of lists of
//! scalars merged as sets), with `{}` for a leaf. Lists without a merge
//! strategy are owned whole. Sets can be built from an object, combined,
//! compared, and removed from an object.

use serde_json::{json, Map, Value};

use super::strategic::schema::{Schema, Strategy};

/// A field set: a `FieldsV1` object.
pub type FieldSet = Map<String, Value>;

/// Fields the server owns, never part of a manager's set (kube's stripped fields).
const SERVER_META: [&str; 10] = [
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

/// The fields `object` sets, without apiVersion, kind, the server's
/// metadata and (when `skip_status`) status.
pub(in crate::patch) fn of_object(
    object: &Value,
    schema: Schema<'_>,
    skip_status: bool,
) -> FieldSet {
    let mut set = of_map(object, schema);
    set.remove("f:apiVersion");
    set.remove("f:kind");
    if skip_status {
        set.remove("f:status");
    }
    if let Some(Value::Object(meta)) = set.get_mut("f:metadata") {
        for field in SERVER_META {
            meta.remove(&format!("f:{field}"));
        }
        if meta.is_empty() {
            set.remove("f:metadata");
        }
    }
    set
}

fn of_map(value: &Value, schema: Schema<'_>) -> FieldSet {
    let mut set = FieldSet::new();
    let Some(map) = value.as_object() else {
        return set;
    };
    for (key, child) in map {
        let (child_schema, meta) = schema.field(key);
        let entry = match child {
            Value::Object(_) => Value::Object(of_map(child, child_schema)),
            Value::Array(items) if meta.strategy == Strategy::Merge => Value::Object(of_list(
                items,
                child_schema.items(),
                meta.merge_key.as_deref(),
            )),
            _ => json!({}),
        };
        set.insert(format!("f:{key}"), entry);
    }
    set
}

fn of_list(items: &[Value], schema: Schema<'_>, merge_key: Option<&str>) -> FieldSet {
    let mut set = FieldSet::new();
    for item in items {
        match item_key(item, merge_key) {
            Some(key) if item.is_object() => {
                let mut fields = of_map(item, schema);
                fields.insert(".".into(), json!({}));
                set.insert(key, Value::Object(fields));
            }
            Some(key) => {
                set.insert(key, json!({}));
            }
            None => {}
        }
    }
    set
}

/// `k:{"name":"c"}` for an object item with its merge key, `v:"x"` for a scalar.
fn item_key(item: &Value, merge_key: Option<&str>) -> Option<String> {
    match (item, merge_key) {
        (Value::Object(map), Some(key)) => {
            let id = map.get(key)?;
            Some(format!("k:{}", json!({ key: id })))
        }
        (Value::Object(_), None) | (Value::Array(_), _) => None,
        (scalar, _) => Some(format!("v:{scalar}")),
    }
}

/// The fields of `a` that are not in `b`.
pub fn difference(a: &FieldSet, b: &FieldSet) -> FieldSet {
    let mut out = FieldSet::new();
    for (key, child) in a {
        match (child.as_object(), b.get(key).and_then(Value::as_object)) {
            (_, None) => {
                out.insert(key.clone(), child.clone());
            }
            (Some(ca), Some(cb)) if !ca.is_empty() && !cb.is_empty() => {
                let rest = difference(ca, cb);
                if !rest.is_empty() {
                    out.insert(key.clone(), Value::Object(rest));
                }
            }
            _ => {}
        }
    }
    out
}

/// The fields in both `a` and `b`.
pub fn intersection(a: &FieldSet, b: &FieldSet) -> FieldSet {
    let mut out = FieldSet::new();
    for (key, child) in a {
        let Some(other) = b.get(key).and_then(Value::as_object) else {
            continue;
        };
        let mine = child.as_object().cloned().unwrap_or_default();
        if mine.is_empty() || other.is_empty() {
            out.insert(key.clone(), json!({}));
            continue;
        }
        let both = intersection(&mine, other);
        if !both.is_empty() {
            out.insert(key.clone(), Value::Object(both));
        }
    }
    out
}

/// The fields in `a` or `b`.
pub fn union(a: &FieldSet, b: &FieldSet) -> FieldSet {
    let mut out = a.clone();
    for (key, child) in b {
        match (out.get_mut(key), child.as_object()) {
            (Some(Value::Object(mine)), Some(theirs)) => {
                let merged = union(mine, theirs);
                *mine = merged;
            }
            (None, _) => {
                out.insert(key.clone(), child.clone());
            }
            _ => {}
        }
    }
    out
}

/// Removes the fields of `set` from `object` (list items by key or value;
/// an item whose `.` is in the set goes as a whole).
pub fn remove_from(object: &mut Value, set: &FieldSet) {
    match object {
        Value::Object(map) => {
            for (key, child) in set {
                let Some(field) = key.strip_prefix("f:") else {
                    continue;
                };
                let sub = child.as_object().cloned().unwrap_or_default();
                if sub.is_empty() {
                    map.remove(field);
                } else if let Some(value) = map.get_mut(field) {
                    remove_from(value, &sub);
                }
            }
        }
        Value::Array(items) => remove_items(items, set),
        _ => {}
    }
}

fn remove_items(items: &mut Vec<Value>, set: &FieldSet) {
    let merge_key = set.keys().find_map(|k| {
        let id: Value = serde_json::from_str(k.strip_prefix("k:")?).ok()?;
        id.as_object()?.keys().next().cloned()
    });
    items.retain_mut(|item| {
        let Some(key) = item_key(item, merge_key.as_deref()) else {
            return true;
        };
        let Some(sub) = set.get(&key).and_then(Value::as_object) else {
            return true;
        };
        if sub.is_empty() || sub.contains_key(".") {
            return false;
        }
        remove_from(item, sub);
        true
    });
}

/// Each leaf of `set` as a kube field path (`.data.k`, `.spec.containers[name="c"].image`)
/// with the value at that path in `object` (None when absent).
pub fn leaves<'a>(set: &FieldSet, object: Option<&'a Value>) -> Vec<(String, Option<&'a Value>)> {
    let mut out = Vec::new();
    walk(set, object, String::new(), &mut out);
    out
}

fn walk<'a>(
    set: &FieldSet,
    object: Option<&'a Value>,
    path: String,
    out: &mut Vec<(String, Option<&'a Value>)>,
) {
    for (key, child) in set {
        if key == "." {
            continue;
        }
        let (segment, value) = step(key, object);
        let sub = child.as_object().cloned().unwrap_or_default();
        let here = format!("{path}{segment}");
        if sub.is_empty() || sub.keys().all(|k| k == ".") {
            out.push((here, value));
        } else {
            walk(&sub, value, here, out);
        }
    }
}

/// One path segment and the value it leads to.
fn step<'a>(key: &str, object: Option<&'a Value>) -> (String, Option<&'a Value>) {
    if let Some(field) = key.strip_prefix("f:") {
        return (format!(".{field}"), object.and_then(|o| o.get(field)));
    }
    if let Some(id) = key.strip_prefix("k:") {
        let parsed: Map<String, Value> = serde_json::from_str(id).unwrap_or_default();
        let label: Vec<String> = parsed.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let found = object.and_then(Value::as_array).and_then(|items| {
            items
                .iter()
                .find(|item| parsed.iter().all(|(k, v)| item.get(k) == Some(v)))
        });
        return (format!("[{}]", label.join(",")), found);
    }
    let literal = key.strip_prefix("v:").unwrap_or(key);
    let wanted: Option<Value> = serde_json::from_str(literal).ok();
    let found = object
        .and_then(Value::as_array)
        .and_then(|items| items.iter().find(|item| Some(*item) == wanted.as_ref()));
    (format!("[={literal}]"), found)
}
