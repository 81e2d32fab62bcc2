//! Small writers over objects held as JSON: a field set only when absent,
//! and `metadata` made on demand. None of them panics on odd input: a path
//! through something that is not an object is left alone.

use serde_json::{Map, Value};

/// Sets the field at `pointer` ("/spec/replicas") to `value` unless it is
/// already there; nothing happens when its parent is missing or not an object.
pub fn set_default(object: &mut Value, pointer: &str, value: Value) {
    let Some((parent, field)) = pointer.rsplit_once('/') else {
        return;
    };
    if let Some(target) = object.pointer_mut(parent).and_then(Value::as_object_mut) {
        target.entry(field.to_string()).or_insert(value);
    }
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
        let mut not_object = json!({"spec": [1]});
        set_default(&mut not_object, "/spec/replicas", json!(1));
        assert_eq!(not_object, json!({"spec": [1]}));
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
