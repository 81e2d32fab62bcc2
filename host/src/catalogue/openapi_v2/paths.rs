//! The operations of every group-version as Swagger 2.0 paths: body
//! parameters instead of `requestBody`, `consumes`/`produces` instead of
//! `content`, parameter types inline, refs into `#/definitions/`.

use serde_json::{json, Map, Value};

use super::super::openapi_paths::{gv_operations, In, Operation, Param, PathItem};
use super::definitions::DEFINITIONS_PREFIX;
use crate::catalogue::Catalogue;

fn schema_ref(name: &str) -> Value {
    json!({ "$ref": format!("{DEFINITIONS_PREFIX}{name}") })
}

fn param(p: &Param) -> Value {
    match p.location {
        In::Query => json!({
            "description": p.description,
            "in": "query",
            "name": p.name,
            "type": p.kind,
            "uniqueItems": true
        }),
        In::Path => json!({
            "description": p.description,
            "in": "path",
            "name": p.name,
            "required": true,
            "type": p.kind,
            "uniqueItems": true
        }),
    }
}

/// The body parameter (first, as kube lists it), then the query parameters.
fn parameters(op: &Operation) -> Vec<Value> {
    let mut out = Vec::with_capacity(op.params.len() + 1);
    if let Some(body) = &op.body {
        let mut p = Map::new();
        p.insert("in".into(), json!("body"));
        p.insert("name".into(), json!("body"));
        if body.required {
            p.insert("required".into(), json!(true));
        }
        p.insert("schema".into(), schema_ref(&body.schema));
        out.push(Value::Object(p));
    }
    out.extend(op.params.iter().map(param));
    out
}

fn responses(op: &Operation) -> Value {
    let mut out = Map::new();
    for r in &op.responses {
        let body = match &r.schema {
            Some(schema) => json!({ "description": r.description, "schema": schema_ref(schema) }),
            None => json!({ "description": r.description }),
        };
        out.insert(r.code.to_string(), body);
    }
    Value::Object(out)
}

fn operation(op: &Operation) -> Value {
    let consumes: &[&str] = match &op.body {
        Some(body) => body.types,
        None => &["*/*"],
    };
    let mut o = Map::new();
    o.insert("consumes".into(), json!(consumes));
    o.insert("description".into(), json!(op.description));
    o.insert("operationId".into(), json!(op.id));
    let params = parameters(op);
    if !params.is_empty() {
        o.insert("parameters".into(), Value::Array(params));
    }
    o.insert("produces".into(), json!(op.produces));
    o.insert("responses".into(), responses(op));
    o.insert("schemes".into(), json!(["https"]));
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

/// The paths of every group-version the catalogue serves, sorted.
pub(super) fn all_paths(cat: &Catalogue) -> Map<String, Value> {
    let mut paths = std::collections::BTreeMap::new();
    for (group, versions) in cat.groups() {
        for version in versions {
            for (path, item) in gv_operations(cat, &group, &version) {
                paths.insert(path, path_item(&item));
            }
        }
    }
    paths.into_iter().collect()
}
