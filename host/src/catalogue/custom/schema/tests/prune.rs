//! Pruning: what kube's decoder drops and the paths it names.

use super::compile;
use serde_json::{json, Value};

fn crd_schema(spec: Value) -> Value {
    json!({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object"}, "spec": spec}})
}

fn prune(schema: Value, mut obj: Value) -> (Value, Vec<String>) {
    let dropped = compile(schema).prune(&mut obj);
    (obj, dropped)
}

#[test]
fn unknown_fields_are_dropped_and_named() {
    let schema = crd_schema(json!({"type": "object", "properties": {
        "replicas": {"type": "integer"},
        "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}}}));
    let obj = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n", "bogus": 1},
        "spec": {"replicas": 1, "zeta": true, "alpha": {"deep": 1},
            "list": [{"a": "x", "b": "y"}]}, "extra": 1});
    let (obj, dropped) = prune(schema, obj);
    assert_eq!(
        obj,
        json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"},
            "spec": {"replicas": 1, "list": [{"a": "x"}]}})
    );
    assert_eq!(
        dropped,
        vec![
            "metadata.bogus",
            "extra",
            "spec.alpha",
            "spec.list[0].b",
            "spec.zeta"
        ]
    );
}

#[test]
fn root_type_meta_survives_a_schema_without_it() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object"}}});
    let (obj, dropped) = prune(
        schema,
        json!({"apiVersion": "x/v1", "kind": "K", "metadata": {}, "spec": {}}),
    );
    assert_eq!(
        obj,
        json!({"apiVersion": "x/v1", "kind": "K", "metadata": {}, "spec": {}})
    );
    assert!(dropped.is_empty());
}

#[test]
fn metadata_keeps_object_meta_fields_only() {
    let schema = crd_schema(json!({"type": "object"}));
    let obj = json!({"metadata": {"name": "n", "labels": {"a": "b"}, "zz": 1,
        "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "u", "extra": 1}]}});
    let (obj, dropped) = prune(schema, obj);
    assert_eq!(
        obj["metadata"],
        json!({"name": "n", "labels": {"a": "b"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "u"}]})
    );
    assert_eq!(
        dropped,
        vec!["metadata.ownerReferences[0].extra", "metadata.zz"]
    );
}

#[test]
fn preserve_unknown_fields_keeps_unknowns_but_prunes_known_parts() {
    let schema = crd_schema(
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
        "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}}),
    );
    let (obj, dropped) = prune(
        schema,
        json!({"spec": {"other": {"x": 1}, "known": {"a": "x", "b": 1}}}),
    );
    assert_eq!(obj["spec"], json!({"other": {"x": 1}, "known": {"a": "x"}}));
    assert_eq!(dropped, vec!["spec.known.b"]);
}

#[test]
fn embedded_resources_keep_type_meta_and_prune_their_metadata() {
    let schema = crd_schema(json!({"type": "object", "properties": {"template": {
        "type": "object", "x-kubernetes-embedded-resource": true,
        "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}}}}));
    let obj = json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "junk": 1}, "spec": {"a": "x", "b": 1}, "other": 2}}});
    let (obj, dropped) = prune(schema, obj);
    assert_eq!(
        obj["spec"]["template"],
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"a": "x"}})
    );
    assert_eq!(
        dropped,
        vec![
            "spec.template.other",
            "spec.template.spec.b",
            "spec.template.metadata.junk"
        ]
    );
}

#[test]
fn map_values_are_pruned_by_their_schema() {
    let schema = crd_schema(
        json!({"type": "object", "properties": {"m": {"type": "object",
        "additionalProperties": {"type": "object", "properties": {"v": {"type": "integer"}}}}}}),
    );
    let (obj, dropped) = prune(schema, json!({"spec": {"m": {"k": {"v": 1, "w": 2}}}}));
    assert_eq!(obj["spec"], json!({"m": {"k": {"v": 1}}}));
    assert_eq!(dropped, vec!["spec.m.k.w"]);
}

#[test]
fn non_nullable_nulls_without_default_are_dropped() {
    let schema = crd_schema(json!({"type": "object", "properties": {
        "plain": {"type": "string"},
        "nullable": {"type": "string", "nullable": true},
        "defaulted": {"type": "string", "default": "d"}}}));
    let (obj, dropped) = prune(
        schema,
        json!({"spec": {"plain": null, "nullable": null, "defaulted": null}}),
    );
    assert_eq!(obj["spec"], json!({"nullable": null, "defaulted": null}));
    assert!(dropped.is_empty());
}
