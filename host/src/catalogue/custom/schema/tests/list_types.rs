//! x-kubernetes-list-type set and map.

use super::spec_errors;
use serde_json::json;

#[test]
fn a_set_reports_each_repeated_value_once() {
    let props = json!({"s": {"type": "array", "x-kubernetes-list-type": "set",
        "items": {"type": "string"}}});
    assert_eq!(
        spec_errors(props.clone(), json!({"s": ["a", "b", "a", "a", "b"]})),
        vec![
            r#"spec.s[2]: Duplicate value: "a""#,
            r#"spec.s[4]: Duplicate value: "b""#
        ]
    );
    assert!(spec_errors(props, json!({"s": ["a", "b"]})).is_empty());
}

#[test]
fn a_set_of_objects_compares_whole_items() {
    let props = json!({"s": {"type": "array", "x-kubernetes-list-type": "set",
        "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    assert_eq!(
        spec_errors(props, json!({"s": [{"a": 1, "b": 2}, {"b": 2, "a": 1}]})),
        vec![r#"spec.s[1]: Duplicate value: map[string]interface {}{"a":1, "b":2}"#]
    );
}

#[test]
fn a_map_list_reports_duplicate_keys() {
    let props = json!({"m": {"type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "v": {"type": "integer"}}}}});
    assert_eq!(
        spec_errors(
            props,
            json!({"m": [{"name": "a"}, {"name": "b"}, {"name": "a", "v": 1}]})
        ),
        vec![r#"spec.m[2]: Duplicate value: map[string]interface {}{"name":"a"}"#]
    );
}

#[test]
fn a_map_list_with_several_keys() {
    let props = json!({"ports": {"type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["port", "protocol"],
        "items": {"type": "object", "properties": {
            "port": {"type": "integer"}, "protocol": {"type": "string"}}}}});
    let spec = json!({"ports": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"},
        {"port": 80, "protocol": "TCP"}]});
    assert_eq!(
        spec_errors(props, spec),
        vec![
            r#"spec.ports[2]: Duplicate value: map[string]interface {}{"port":80, "protocol":"TCP"}"#
        ]
    );
}

#[test]
fn a_map_list_item_must_be_an_object() {
    let props = json!({"m": {"type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {"x-kubernetes-preserve-unknown-fields": true}}});
    assert_eq!(
        spec_errors(props, json!({"m": ["x"]})),
        vec![r#"spec.m[0]: Invalid value: "x": must be an object for an array of list-type map"#]
    );
}

#[test]
fn list_types_inside_map_values_use_key_paths() {
    let props = json!({"groups": {"type": "object", "additionalProperties": {"type": "array",
        "x-kubernetes-list-type": "set", "items": {"type": "integer"}}}});
    assert_eq!(
        spec_errors(props, json!({"groups": {"g1": [1, 2, 1]}})),
        vec!["spec.groups[g1][2]: Duplicate value: 1"]
    );
}
