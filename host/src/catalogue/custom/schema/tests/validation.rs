//! Value validations: kube-openapi's checks as kube 1.33 reports them.

use super::{compile, errors, field_schema, spec_errors};
use serde_json::json;

#[test]
fn integer_field_given_a_string() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"replicas": {"type": "integer"}}}}});
    assert_eq!(
        errors(schema, json!({"spec": {"replicas": "3"}})),
        vec![
            r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
        ]
    );
}

#[test]
fn a_non_nullable_object_names_the_type_it_got() {
    let schema = field_schema(json!({"type": "object"}));
    for (value, got) in [
        (json!("foo"), "string"),
        (json!(42), "integer"),
        (json!(true), "boolean"),
        (json!(1.2), "number"),
        (json!([]), "array"),
        (json!(null), "null"),
    ] {
        assert_eq!(
            errors(schema.clone(), json!({ "field": value })),
            vec![format!(
                r#"field: Invalid value: "{got}": field in body must be of type object: "{got}""#
            )]
        );
    }
    assert!(errors(schema, json!({"field": {}})).is_empty());
}

#[test]
fn nullable_accepts_null_and_no_type_accepts_anything() {
    let nullable = field_schema(json!({"type": "object", "nullable": true}));
    assert!(errors(nullable, json!({"field": null})).is_empty());
    let untyped = field_schema(json!({"nullable": true}));
    for value in [json!(null), json!("foo"), json!(42), json!(1.2), json!([])] {
        assert!(errors(untyped.clone(), json!({ "field": value })).is_empty());
    }
}

#[test]
fn int_or_string_takes_integers_and_strings_only() {
    let schema = field_schema(json!({"x-kubernetes-int-or-string": true}));
    assert!(errors(schema.clone(), json!({"field": 42})).is_empty());
    assert!(errors(schema.clone(), json!({"field": "foo"})).is_empty());
    assert_eq!(
        errors(schema.clone(), json!({"field": null})),
        vec![
            r#"field: Invalid value: "null": field in body must be of type integer,string: "null""#
        ]
    );
    assert_eq!(
        errors(schema, json!({"field": 1.2})),
        vec![
            r#"field: Invalid value: "number": field in body must be of type integer,string: "number""#
        ]
    );
}

#[test]
fn any_of_reports_the_junctor_and_its_best_branch() {
    let schema = field_schema(json!({"nullable": true, "x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string"}]}));
    assert!(errors(schema.clone(), json!({"field": null})).is_empty());
    assert_eq!(
        errors(schema, json!({"field": true})),
        vec![
            r#"field: Invalid value: "boolean": field in body must be of type integer,string: "boolean""#,
            r#": Invalid value: "": "field" must validate at least one schema (anyOf)"#,
            r#"field: Invalid value: "boolean": field in body must be of type integer: "boolean""#,
        ]
    );
}

#[test]
fn all_of_reports_none_validated() {
    let schema = field_schema(json!({"nullable": true, "x-kubernetes-int-or-string": true,
        "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]}));
    assert_eq!(
        errors(schema, json!({"field": []})),
        vec![
            r#"field: Invalid value: "array": field in body must be of type integer,string: "array""#,
            r#": Invalid value: "": "field" must validate at least one schema (anyOf)"#,
            r#"field: Invalid value: "array": field in body must be of type integer: "array""#,
            r#": Invalid value: "": "field" must validate all the schemas (allOf). None validated"#,
        ]
    );
}

#[test]
fn one_of_needs_exactly_one_branch() {
    let props = json!({"x": {"type": "integer",
        "oneOf": [{"minimum": 0}, {"maximum": 10}]}});
    assert_eq!(
        spec_errors(props.clone(), json!({"x": 5})),
        vec![
            r#": Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
        ]
    );
    assert!(spec_errors(props, json!({"x": 20})).is_empty());
    let none = json!({"x": {"type": "string", "oneOf": [{"minLength": 5}, {"pattern": "^a"}]}});
    assert_eq!(
        spec_errors(none, json!({"x": "bcd"})),
        vec![
            r#": Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found none valid"#,
            r#"spec.x: Invalid value: "bcd": spec.x in body should be at least 5 chars long"#,
        ]
    );
}

#[test]
fn not_rejects_what_its_schema_accepts() {
    let props = json!({"x": {"type": "string", "not": {"enum": ["forbidden"]}}});
    assert_eq!(
        spec_errors(props.clone(), json!({"x": "forbidden"})),
        vec![r#": Invalid value: "": "spec.x" must not validate the schema (not)"#]
    );
    assert!(spec_errors(props, json!({"x": "fine"})).is_empty());
}

#[test]
fn required_fields_at_the_root_and_nested() {
    let schema = json!({"type": "object", "required": ["field"], "properties": {
        "field": {"type": "object", "required": ["nested"], "properties": {"nested": {}}}}});
    assert_eq!(
        errors(schema.clone(), json!({"test": "a"})),
        vec!["field: Required value"]
    );
    assert_eq!(
        errors(schema, json!({"field": {}})),
        vec!["field.nested: Required value"]
    );
}

#[test]
fn enum_failures_list_the_supported_values_quoted() {
    let schema = field_schema(
        json!({"type": "object", "required": ["nestedint", "nestedstring"],
        "properties": {
            "nestedint": {"type": "integer", "enum": [1, 2]},
            "nestedstring": {"type": "string", "enum": ["a", "b"]}}}),
    );
    assert_eq!(
        errors(schema.clone(), json!({"field": {}})),
        vec![
            "field.nestedint: Required value",
            "field.nestedstring: Required value"
        ]
    );
    assert_eq!(
        errors(
            schema,
            json!({"field": {"nestedint": "x", "nestedstring": true}})
        ),
        vec![
            r#"field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string""#,
            r#"field.nestedint: Unsupported value: "x": supported values: "1", "2""#,
            r#"field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean""#,
            r#"field.nestedstring: Unsupported value: true: supported values: "a", "b""#,
        ]
    );
}

#[test]
fn enum_of_a_nullable_field_still_rejects_null() {
    let props = json!({"mode": {"type": "string", "nullable": true, "enum": ["a", "b"]}});
    assert_eq!(
        spec_errors(props, json!({"mode": null})),
        vec![r#"spec.mode: Unsupported value: "null": supported values: "a", "b""#]
    );
}

#[test]
fn enum_values_compare_after_go_conversion() {
    let props = json!({"n": {"type": "number", "enum": [1, 2.5]}});
    assert!(spec_errors(props.clone(), json!({"n": 1.0})).is_empty());
    assert!(spec_errors(props.clone(), json!({"n": 2.5})).is_empty());
    assert_eq!(
        spec_errors(props, json!({"n": 3})),
        vec![r#"spec.n: Unsupported value: 3: supported values: "1", "2.5""#]
    );
}

#[test]
fn maximum_and_minimum_inclusive_and_exclusive() {
    let props = json!({"size": {"type": "integer", "maximum": 10, "minimum": 1}});
    assert_eq!(
        spec_errors(props.clone(), json!({"size": 12})),
        vec!["spec.size: Invalid value: 12: spec.size in body should be less than or equal to 10"]
    );
    assert_eq!(
        spec_errors(props, json!({"size": 0})),
        vec!["spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"]
    );
    let exclusive = json!({"size": {"type": "number", "maximum": 10, "exclusiveMaximum": true,
        "minimum": 0, "exclusiveMinimum": true}});
    assert_eq!(
        spec_errors(exclusive.clone(), json!({"size": 10})),
        vec!["spec.size: Invalid value: 10: spec.size in body should be less than 10"]
    );
    assert_eq!(
        spec_errors(exclusive.clone(), json!({"size": 0.0})),
        vec!["spec.size: Invalid value: 0: spec.size in body should be greater than 0"]
    );
    assert_eq!(
        spec_errors(exclusive, json!({"size": 10.5})),
        vec!["spec.size: Invalid value: 10.5: spec.size in body should be less than 10"]
    );
}

#[test]
fn multiple_of_for_integers_and_fractions() {
    let props = json!({"n": {"type": "integer", "multipleOf": 5}});
    assert_eq!(
        spec_errors(props.clone(), json!({"n": 7})),
        vec!["spec.n: Invalid value: 7: spec.n in body should be a multiple of 5"]
    );
    assert!(spec_errors(props, json!({"n": 15})).is_empty());
    let fraction = json!({"q": {"type": "number", "multipleOf": 0.25}});
    assert!(spec_errors(fraction.clone(), json!({"q": 0.75})).is_empty());
    assert_eq!(
        spec_errors(fraction, json!({"q": 0.3})),
        vec!["spec.q: Invalid value: 0.3: spec.q in body should be a multiple of 0.25"]
    );
}

#[test]
fn integer_accepts_integral_floats_and_number_accepts_integers() {
    let props = json!({"i": {"type": "integer"}, "n": {"type": "number"}});
    assert!(spec_errors(props.clone(), json!({"i": 3.0, "n": 3})).is_empty());
    assert_eq!(
        spec_errors(props, json!({"i": 3.5})),
        vec![
            r#"spec.i: Invalid value: "number": spec.i in body must be of type integer: "number""#
        ]
    );
}

#[test]
fn max_length_counts_runes_and_is_reported_as_too_long() {
    let props = json!({"s": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"},
        "t": {"type": "string", "maxLength": 5}});
    assert!(spec_errors(props.clone(), json!({"t": "ééééé"})).is_empty());
    assert_eq!(
        spec_errors(props.clone(), json!({"s": "ABCDEFG"})),
        vec!["spec.s: Too long: may not be more than 5 bytes"]
    );
    assert_eq!(
        spec_errors(props, json!({"s": "ABC"})),
        vec![r#"spec.s: Invalid value: "ABC": spec.s in body should match '^[a-z]+$'"#]
    );
}

#[test]
fn min_length_is_an_invalid_value() {
    let props = json!({"s": {"type": "string", "minLength": 3}});
    assert_eq!(
        spec_errors(props, json!({"s": "ab"})),
        vec![r#"spec.s: Invalid value: "ab": spec.s in body should be at least 3 chars long"#]
    );
}

#[test]
fn item_counts_and_unique_items() {
    let props = json!({"l": {"type": "array", "minItems": 2, "maxItems": 3, "uniqueItems": true,
        "items": {"type": "integer"}}});
    assert_eq!(
        spec_errors(props.clone(), json!({"l": [1]})),
        vec!["spec.l: Invalid value: 1: spec.l in body should have at least 2 items"]
    );
    assert_eq!(
        spec_errors(props.clone(), json!({"l": [1, 2, 3, 4]})),
        vec!["spec.l: Too many: 4: must have at most 3 items"]
    );
    assert_eq!(
        spec_errors(props.clone(), json!({"l": [1, 1]})),
        vec![r#"spec.l: Invalid value: "": spec.l in body shouldn't contain duplicates"#]
    );
    assert_eq!(
        spec_errors(props, json!({"l": [1, "x"]})),
        vec![
            r#"spec.l[1]: Invalid value: "string": spec.l[1] in body must be of type integer: "string""#
        ]
    );
}

#[test]
fn property_counts_stop_the_object_checks() {
    let props = json!({"m": {"type": "object", "minProperties": 2, "maxProperties": 3,
        "required": ["a"], "additionalProperties": {"type": "string"}}});
    assert_eq!(
        spec_errors(props.clone(), json!({"m": {"b": "x"}})),
        vec!["spec.m: Invalid value: 1: spec.m in body should have at least 2 properties"]
    );
    assert_eq!(
        spec_errors(
            props.clone(),
            json!({"m": {"a": "1", "b": "2", "c": "3", "d": "4"}})
        ),
        vec!["spec.m: Too many: 4: must have at most 3 items"]
    );
    assert_eq!(
        spec_errors(props, json!({"m": {"b": "x", "c": 1}})),
        vec![
            r#"spec.m.c: Invalid value: "integer": spec.m.c in body must be of type string: "integer""#,
            "spec.m.a: Required value",
        ]
    );
}

#[test]
fn additional_properties_false_forbids_other_keys() {
    let props = json!({"m": {"type": "object", "properties": {"a": {"type": "string"}},
        "additionalProperties": false}});
    assert_eq!(
        spec_errors(props, json!({"m": {"a": "x", "foo": 1}})),
        vec![r#"spec.m: Invalid value: "foo": spec.m.foo in body is a forbidden property"#]
    );
}

#[test]
fn errors_carry_kube_cause_reasons() {
    let props = json!({
        "a": {"type": "integer"},
        "b": {"type": "string", "enum": ["x"]},
        "c": {"type": "string", "maxLength": 1},
        "d": {"type": "array", "maxItems": 0},
        "e": {"type": "integer", "maximum": 0},
    });
    let schema = json!({"type": "object", "required": ["z"], "properties": {"spec": {
        "type": "object", "properties": props}}});
    let spec = json!({"a": "1", "b": "y", "c": "long", "d": [1], "e": 1});
    let reasons: Vec<(String, &str)> = compile(schema)
        .validate(&json!({ "spec": spec }))
        .into_iter()
        .map(|c| (c.field, c.reason))
        .collect();
    let expected = [
        ("spec.a", "FieldValueTypeInvalid"),
        ("spec.b", "FieldValueNotSupported"),
        ("spec.c", "FieldValueTooLong"),
        ("spec.d", "FieldValueTooMany"),
        ("spec.e", "FieldValueInvalid"),
        ("z", "FieldValueRequired"),
    ];
    let expected: Vec<(String, &str)> = expected.iter().map(|(f, r)| (f.to_string(), *r)).collect();
    assert_eq!(reasons, expected);
}

#[test]
fn metadata_constraints_in_the_schema_apply() {
    let schema = json!({"type": "object", "properties": {"metadata": {"type": "object",
        "properties": {"name": {"type": "string", "maxLength": 10, "pattern": "^[a-z-]+$"}}}}});
    assert_eq!(
        errors(
            schema.clone(),
            json!({"metadata": {"name": "much-too-long-name"}})
        ),
        vec!["metadata.name: Too long: may not be more than 10 bytes"]
    );
    assert_eq!(
        errors(schema, json!({"metadata": {"name": "abc1"}})),
        vec![
            r#"metadata.name: Invalid value: "abc1": metadata.name in body should match '^[a-z-]+$'"#
        ]
    );
}

#[test]
fn schemas_that_cannot_compile_are_refused() {
    let bad_pattern =
        json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "+"}}});
    assert!(super::CompiledSchema::new(&bad_pattern).is_err());
    assert!(super::CompiledSchema::new(&nested_schema(130)).is_err());
}

fn nested_schema(levels: usize) -> serde_json::Value {
    let mut schema = json!({"type": "integer", "maximum": 1});
    for _ in 0..levels {
        schema = json!({"type": "object", "properties": {"a": schema}});
    }
    schema
}

#[test]
fn deep_schemas_within_the_limit_validate_deep_objects() {
    let levels = 120;
    let mut obj = json!(2);
    for _ in 0..levels {
        obj = json!({ "a": obj });
    }
    let causes = compile(nested_schema(levels)).validate(&obj);
    assert_eq!(causes.len(), 1);
    assert!(causes[0]
        .message
        .ends_with("in body should be less than or equal to 1"));
}

#[test]
fn unique_items_compares_deeply_keeping_integers_and_floats_apart() {
    let props = json!({"l": {"type": "array", "uniqueItems": true,
        "items": {"x-kubernetes-preserve-unknown-fields": true}}});
    assert!(spec_errors(props.clone(), json!({"l": [1, 1.0]})).is_empty());
    assert_eq!(
        spec_errors(
            props,
            json!({"l": [{"a": 1, "b": [2]}, {"b": [2], "a": 1}]})
        ),
        vec![r#"spec.l: Invalid value: "": spec.l in body shouldn't contain duplicates"#]
    );
}
