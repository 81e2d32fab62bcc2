//! kube's own messages, verbatim, for each construct of a CRD schema.

use super::CompiledSchema;
use serde_json::{json, Value};

fn compile(schema: Value) -> CompiledSchema {
    match CompiledSchema::new(&schema) {
        Ok(s) => s,
        Err(e) => panic!("schema did not compile: {e}"),
    }
}

/// `field: message` of each cause, as kube's Status message lists them.
fn errors(schema: Value, obj: Value) -> Vec<String> {
    compile(schema)
        .validate(&obj)
        .into_iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect()
}

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
