//! The operations of a group-version as the `paths` of its OpenAPI v3
//! document.

use serde_json::{json, Map, Value};

use super::super::schemas::REF_PREFIX;
use super::{gv_operations, Body, In, Operation, Param, PathItem, Response};
use crate::catalogue::Catalogue;

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("{REF_PREFIX}{name}") })
}

fn param(p: &Param) -> Value {
    let schema = json!({ "type": p.kind, "uniqueItems": true });
    match p.location {
        In::Query => json!({
            "description": p.description,
            "in": "query",
            "name": p.name,
            "schema": schema
        }),
        In::Path => json!({
            "description": p.description,
            "in": "path",
            "name": p.name,
            "required": true,
            "schema": schema
        }),
    }
}

fn content(schema: &str, types: &[&str]) -> Value {
    let map: Map<String, Value> = types
        .iter()
        .map(|t| (t.to_string(), json!({ "schema": schema_ref(schema) })))
        .collect();
    Value::Object(map)
}

fn request_body(b: &Body) -> Value {
    let mut out = Map::new();
    out.insert("content".into(), content(&b.schema, b.types));
    if b.required {
        out.insert("required".into(), json!(true));
    }
    Value::Object(out)
}

fn responses(list: &[Response], produces: &[&str]) -> Value {
    let mut out = Map::new();
    for r in list {
        let body = match &r.schema {
            Some(schema) => json!({
                "content": content(schema, produces),
                "description": r.description
            }),
            None => json!({ "description": r.description }),
        };
        out.insert(r.code.to_string(), body);
    }
    Value::Object(out)
}

fn operation(op: &Operation) -> Value {
    let mut o = Map::new();
    o.insert("description".into(), json!(op.description));
    o.insert("operationId".into(), json!(op.id));
    if !op.params.is_empty() {
        let params = op.params.iter().map(param).collect();
        o.insert("parameters".into(), Value::Array(params));
    }
    if let Some(body) = &op.body {
        o.insert("requestBody".into(), request_body(body));
    }
    o.insert("responses".into(), responses(&op.responses, op.produces));
    o.insert("tags".into(), json!([op.tag]));
    o.insert("x-kubernetes-action".into(), json!(op.action));
    o.insert("x-kubernetes-group-version-kind".into(), op.gvk.clone());
    Value::Object(o)
}

fn path_item(item: &PathItem) -> Value {
    let mut out: Map<String, Value> = item
        .operations
        .iter()
        .map(|op| (op.method.to_string(), operation(op)))
        .collect();
    let parameters = item.parameters.iter().map(param).collect();
    out.insert("parameters".into(), Value::Array(parameters));
    Value::Object(out)
}

/// Every path of one group-version, sorted like kube's documents.
pub(in crate::catalogue) fn gv_paths(
    cat: &Catalogue,
    group: &str,
    version: &str,
) -> Map<String, Value> {
    gv_operations(cat, group, version)
        .iter()
        .map(|(path, item)| (path.clone(), path_item(item)))
        .collect()
}
