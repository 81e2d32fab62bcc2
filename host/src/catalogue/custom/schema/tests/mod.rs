//! kube's own messages, verbatim, for each construct of a CRD schema.

mod defaults;
mod embedded;
mod formats;
mod list_types;
mod prune;
mod updates;
mod validation;

use super::CompiledSchema;
use serde_json::{json, Value};

pub(super) fn compile(schema: Value) -> CompiledSchema {
    match CompiledSchema::new(&schema) {
        Ok(s) => s,
        Err(e) => panic!("schema did not compile: {e}"),
    }
}

/// `field: message` of each cause, as kube's Status message lists them.
pub(super) fn errors(schema: Value, obj: Value) -> Vec<String> {
    compile(schema)
        .validate(&obj)
        .into_iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect()
}

/// `{"properties": {"field": <field>}}`: the shape of kube's own tests.
pub(super) fn field_schema(field: Value) -> Value {
    json!({"type": "object", "properties": {"field": field}})
}

pub(super) fn spec_schema(properties: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": properties}}})
}

pub(super) fn spec_errors(properties: Value, spec: Value) -> Vec<String> {
    errors(spec_schema(properties), json!({"spec": spec}))
}
