//! Updates: kube's validation ratcheting, and the status subresource.

use super::{compile, spec_schema};
use serde_json::{json, Value};

fn update_errors(schema: &Value, new: Value, old: Value) -> Vec<String> {
    compile(schema.clone())
        .validate_update(&new, &old)
        .into_iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect()
}

#[test]
fn an_unchanged_invalid_value_is_ratcheted() {
    let schema = spec_schema(json!({"size": {"type": "integer", "maximum": 10},
        "name": {"type": "string"}}));
    let old = json!({"spec": {"size": 12, "name": "a"}});
    assert!(update_errors(
        &schema,
        json!({"spec": {"size": 12, "name": "b"}}),
        old.clone()
    )
    .is_empty());
    assert_eq!(
        update_errors(&schema, json!({"spec": {"size": 13, "name": "a"}}), old),
        vec!["spec.size: Invalid value: 13: spec.size in body should be less than or equal to 10"]
    );
}

#[test]
fn list_map_items_are_correlated_by_key() {
    let schema = spec_schema(
        json!({"ports": {"type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "port": {"type": "integer", "maximum": 100}}}}}),
    );
    let old = json!({"spec": {"ports": [{"name": "a", "port": 500}, {"name": "b", "port": 1}]}});
    let reordered =
        json!({"spec": {"ports": [{"name": "b", "port": 1}, {"name": "a", "port": 500}]}});
    assert!(update_errors(&schema, reordered, old.clone()).is_empty());
    let changed =
        json!({"spec": {"ports": [{"name": "a", "port": 500}, {"name": "b", "port": 200}]}});
    assert_eq!(
        update_errors(&schema, changed, old),
        vec!["spec.ports[1].port: Invalid value: 200: spec.ports[1].port in body should be less than or equal to 100"]
    );
}

#[test]
fn root_kind_and_api_version_are_never_ratcheted() {
    let schema =
        json!({"type": "object", "properties": {"kind": {"type": "string", "pattern": "^A"}}});
    let old = json!({"kind": "Bad"});
    assert_eq!(
        update_errors(&schema, json!({"kind": "Bad", "spec": {}}), old),
        vec![r#"kind: Invalid value: "Bad": kind in body should match '^A'"#]
    );
}

#[test]
fn list_uniqueness_is_checked_only_when_the_old_object_passed_it() {
    let schema = spec_schema(
        json!({"s": {"type": "array", "x-kubernetes-list-type": "set",
        "items": {"type": "string"}}}),
    );
    let dup = json!({"spec": {"s": ["a", "a", "b"]}});
    assert!(update_errors(&schema, dup.clone(), json!({"spec": {"s": ["a", "a"]}})).is_empty());
    assert_eq!(
        update_errors(&schema, dup, json!({"spec": {"s": ["a"]}})),
        vec![r#"spec.s[1]: Duplicate value: "a""#]
    );
}

#[test]
fn status_errors_name_the_path_inside_status() {
    let schema = json!({"type": "object", "properties": {"status": {"type": "object",
        "required": ["phase"], "properties": {"replicas": {"type": "integer"},
            "phase": {"type": "string"}}}}});
    let new = json!({"spec": {}, "status": {"replicas": "x"}});
    let causes: Vec<String> = compile(schema)
        .validate_status_update(&new, &json!({}))
        .into_iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect();
    assert_eq!(
        causes,
        vec![
            r#"status.replicas: Invalid value: "string": replicas in body must be of type integer: "string""#,
            "status.phase: Required value",
        ]
    );
}
