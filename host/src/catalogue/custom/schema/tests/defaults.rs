//! Defaulting, on write and on read.

use super::compile;
use serde_json::{json, Value};

fn defaulted(schema: Value, mut obj: Value) -> Value {
    compile(schema).apply_defaults(&mut obj);
    obj
}

#[test]
fn missing_fields_get_their_defaults_recursively() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "default": {},
        "properties": {"replicas": {"type": "integer", "default": 1},
            "mode": {"type": "string", "default": "auto"}}}}});
    assert_eq!(
        defaulted(schema.clone(), json!({})),
        json!({"spec": {"replicas": 1, "mode": "auto"}})
    );
    assert_eq!(
        defaulted(schema, json!({"spec": {"replicas": 3}})),
        json!({"spec": {"replicas": 3, "mode": "auto"}})
    );
}

#[test]
fn list_items_and_map_values_are_defaulted() {
    let item =
        json!({"type": "object", "properties": {"port": {"type": "integer", "default": 80}}});
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "list": {"type": "array", "items": item.clone()},
        "map": {"type": "object", "additionalProperties": item}}}}});
    assert_eq!(
        defaulted(
            schema,
            json!({"spec": {"list": [{}, {"port": 1}], "map": {"a": {}}}})
        ),
        json!({"spec": {"list": [{"port": 80}, {"port": 1}], "map": {"a": {"port": 80}}}})
    );
}

#[test]
fn a_non_nullable_null_takes_the_default_and_a_nullable_null_stays() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "a": {"type": "string", "default": "x"},
        "b": {"type": "string", "default": "y", "nullable": true}}}}});
    assert_eq!(
        defaulted(schema, json!({"spec": {"a": null, "b": null}})),
        json!({"spec": {"a": "x", "b": null}})
    );
}

#[test]
fn defaults_are_pruned_by_their_schema() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "default": {"known": 1, "unknown": 2}, "properties": {"known": {"type": "integer"}}}}});
    assert_eq!(defaulted(schema, json!({})), json!({"spec": {"known": 1}}));
}
