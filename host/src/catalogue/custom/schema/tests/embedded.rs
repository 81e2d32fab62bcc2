//! x-kubernetes-embedded-resource: TypeMeta and ObjectMeta of the object.

use super::spec_errors;
use serde_json::json;

fn template() -> serde_json::Value {
    json!({"template": {"type": "object", "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true}})
}

#[test]
fn api_version_and_kind_are_required() {
    assert_eq!(
        spec_errors(template(), json!({"template": {"metadata": {"name": "x"}}})),
        vec![
            "spec.template.apiVersion: Required value",
            "spec.template.kind: Required value"
        ]
    );
}

#[test]
fn api_version_and_kind_must_be_well_formed() {
    assert_eq!(
        spec_errors(template(), json!({"template": {"apiVersion": "a/b/c", "kind": "Foo_Bar"}})),
        vec![
            r#"spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
            "spec.template.kind: Invalid value: \"Foo_Bar\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ]
    );
    assert_eq!(
        spec_errors(
            template(),
            json!({"template": {"apiVersion": 5, "kind": ""}})
        ),
        vec![
            "spec.template.apiVersion: Invalid value: 5: must be a string",
            r#"spec.template.kind: Invalid value: "": must not be empty"#,
        ]
    );
    assert!(spec_errors(
        template(),
        json!({"template": {"apiVersion": "v1", "kind": "ConfigMap"}})
    )
    .is_empty());
}

#[test]
fn metadata_is_validated_as_object_meta() {
    let obj = json!({"template": {"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "a/b", "generateName": "x%", "generation": -1}}});
    assert_eq!(
        spec_errors(template(), obj),
        vec![
            r#"spec.template.metadata.generateName: Invalid value: "x%": may not contain '%'"#,
            r#"spec.template.metadata.name: Invalid value: "a/b": may not contain '/'"#,
            "spec.template.metadata.generation: Invalid value: -1: must be greater than or equal to 0",
        ]
    );
    assert_eq!(
        spec_errors(
            template(),
            json!({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": "x"}})
        ),
        vec![
            r#"spec.template.metadata: Invalid value: "x": json: cannot unmarshal string into Go value of type v1.ObjectMeta"#
        ]
    );
    assert_eq!(
        spec_errors(
            template(),
            json!({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 5}}})
        ),
        vec![
            r#"spec.template.metadata: Invalid value: map[string]interface {}{"name":5}: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string"#
        ]
    );
}

#[test]
fn embedded_resources_in_lists_are_found() {
    let props = json!({"items": {"type": "array", "items": {"type": "object",
        "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}});
    assert_eq!(
        spec_errors(
            props,
            json!({"items": [{"apiVersion": "v1", "kind": "Pod"}, {"kind": "Pod"}]})
        ),
        vec!["spec.items[1].apiVersion: Required value"]
    );
}
