//! Small writers over objects held as JSON: a field set only when absent,
//! and `metadata` made on demand. None of them panics on odd input: a path
//! through something that is not an object is left alone.

use serde_json::{Map, Value};

/// Sets the field at `pointer` ("/spec/replicas") to `value` unless it is
/// already there (a JSON null counts as absent, as Go decodes it to nil);
/// nothing happens when its parent is missing or not an object.
pub fn set_default(object: &mut Value, pointer: &str, value: Value) {
    set_when(object, pointer, value, Value::is_null);
}

/// Sets the field at `pointer` to `value` when it holds Go's zero value for
/// a plain (non-pointer) field: absent, null, `""`, `0` or `false`. The
/// defaulters written `if obj.X == ""` / `if obj.X == 0`.
pub fn set_if_zero(object: &mut Value, pointer: &str, value: Value) {
    set_when(object, pointer, value, is_zero);
}

fn set_when(object: &mut Value, pointer: &str, value: Value, replace: fn(&Value) -> bool) {
    let Some((parent, field)) = pointer.rsplit_once('/') else {
        return;
    };
    let Some(target) = object.pointer_mut(parent).and_then(Value::as_object_mut) else {
        return;
    };
    match target.get_mut(field) {
        Some(current) if !replace(current) => {}
        Some(current) => *current = value,
        None => {
            target.insert(field.to_string(), value);
        }
    }
}

/// Go's zero value of a scalar, as JSON: null, `""`, `0` or `false`.
pub fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        _ => false,
    }
}

/// Is `value` absent, null, or an empty object, array or string (Go's
/// `len(x) == 0` of a map, slice or string)?
pub fn is_empty(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    }
}

/// The items of the array at `key` of `value` (none when it is not an array).
pub fn items_mut<'a>(value: &'a mut Value, key: &str) -> impl Iterator<Item = &'a mut Value> {
    value
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// The object at `key` of `value`, when there is one (not made).
pub fn child_mut<'a>(value: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    value.get_mut(key).filter(|v| v.is_object())
}

/// The object at `key` of `value`, made `{}` first when absent or null;
/// None when `value` is not an object or `key` holds something else.
pub fn ensure_object<'a>(value: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    let entry = value
        .as_object_mut()?
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if entry.is_null() {
        *entry = Value::Object(Map::new());
    }
    Some(entry).filter(|v| v.is_object())
}

/// The array at `key` of `value`, made `[]` first when absent or null;
/// None when `value` is not an object or `key` holds something else.
pub fn ensure_array<'a>(value: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    let entry = value.as_object_mut()?.entry(key).or_insert(Value::Null);
    if entry.is_null() {
        *entry = Value::Array(Vec::new());
    }
    Some(entry).filter(|v| v.is_array())
}

/// The `metadata` map, made an empty object first when absent or not an
/// object; None when `object` itself is not an object.
pub fn metadata_mut(object: &mut Value) -> Option<&mut Map<String, Value>> {
    let metadata = object
        .as_object_mut()?
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    metadata.as_object_mut()
}

/// The map at `key` of `map`, made an empty object first when absent or not one.
pub fn object_at<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    let value = map.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    value.as_object_mut()
}

/// `metadata.name`, when it is a non-empty string.
pub fn name(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn set_default_fills_only_missing_fields_of_existing_parents() {
        let mut o = json!({"spec": {"replicas": 3}});
        set_default(&mut o, "/spec/replicas", json!(1));
        set_default(&mut o, "/spec/paused", json!(false));
        set_default(&mut o, "/status/phase", json!("Pending"));
        set_default(&mut o, "nopointer", json!(1));
        assert_eq!(o, json!({"spec": {"replicas": 3, "paused": false}}));
        let mut nulls = json!({"spec": {"replicas": null, "type": ""}});
        set_default(&mut nulls, "/spec/replicas", json!(1));
        set_default(&mut nulls, "/spec/type", json!("ClusterIP"));
        assert_eq!(nulls, json!({"spec": {"replicas": 1, "type": ""}}));
        let mut not_object = json!({"spec": [1]});
        set_default(&mut not_object, "/spec/replicas", json!(1));
        assert_eq!(not_object, json!({"spec": [1]}));
    }

    #[test]
    fn zero_values_are_replaced_only_by_set_if_zero() {
        let mut o = json!({"a": "", "b": 0, "c": false, "d": "x", "e": 3});
        for key in ["a", "b", "c", "d", "e", "f"] {
            set_if_zero(&mut o, &format!("/{key}"), json!("set"));
        }
        assert_eq!(
            o,
            json!({"a": "set", "b": "set", "c": "set", "d": "x", "e": 3, "f": "set"})
        );
    }

    #[test]
    fn objects_are_made_only_where_absent_or_null() {
        let mut o = json!({"a": null, "b": 1});
        assert!(ensure_object(&mut o, "a").is_some());
        assert!(ensure_object(&mut o, "b").is_none());
        assert!(ensure_object(&mut o, "c").is_some());
        assert_eq!(o, json!({"a": {}, "b": 1, "c": {}}));
        assert!(is_empty(Some(&json!({}))) && !is_empty(Some(&json!([1]))));
    }

    #[test]
    fn metadata_is_made_when_missing_or_malformed() {
        let mut o = json!({"metadata": "x"});
        metadata_mut(&mut o).map(|m| m.insert("generation".into(), json!(1)));
        assert_eq!(o, json!({"metadata": {"generation": 1}}));
        assert!(metadata_mut(&mut json!([])).is_none());
        assert_eq!(name(&json!({"metadata": {"name": ""}})), None);
        assert_eq!(name(&json!({"metadata": {"name": "a"}})), Some("a"));
    }
}
