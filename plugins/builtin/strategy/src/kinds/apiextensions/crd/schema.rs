//! `ValidateCustomResourceDefinitionValidation` and
//! `ValidateCustomResourceDefinitionOpenAPISchema`: the OpenAPI v3 rules a
//! CRD's schema must follow (supported types and keywords, uniqueItems,
//! properties vs additionalProperties, the list/map extensions), after the
//! structural-schema rules of [`super::structural`]. Properties are visited
//! in name order (kube's map order is random).

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::structural;
use crate::common::{self, text};
use kube_rules::gofmt;

/// kube's `openapiV3Types`, as `sets.List` sorts them.
const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// The causes for a `CustomResourceValidation` at `at`.
pub fn validation(validation: Option<&Value>, status_enabled: bool, at: &str) -> Vec<Cause> {
    let Some(schema) = validation.and_then(|v| v.get("openAPIV3Schema")) else {
        return Vec::new();
    };
    if schema.is_null() {
        return Vec::new();
    }
    let path = format!("{at}.openAPIV3Schema");
    let mut causes = Vec::new();
    let root_type = text(schema, "type");
    if status_enabled && !root_type.is_empty() && root_type != "object" {
        causes.push(common::invalid_str(
            &format!("{path}.type"),
            root_type,
            "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
        ));
    }
    if schema.get("nullable").and_then(Value::as_bool) == Some(true) {
        let detail = "nullable cannot be true at the root";
        causes.push(common::forbidden(&format!("{path}.nullable"), detail));
    }
    causes.extend(structural::validate(schema, &path));
    open_api(schema, &path, &mut causes);
    // kube checks the rules of a schema free of structural and OpenAPI
    // problems (at and below each node; here: in the whole schema).
    if causes.is_empty() {
        causes.extend(super::rules::validate(schema, &path));
    }
    causes
}

/// `ValidateCustomResourceDefinitionOpenAPISchema` for one schema and below.
fn open_api(schema: &Value, at: &str, causes: &mut Vec<Cause>) {
    if !schema.is_object() {
        return;
    }
    standard(schema, at, causes);
    if schema.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
        let detail =
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic";
        causes.push(common::forbidden(&format!("{at}.uniqueItems"), detail));
    }
    if let Some(additional) = schema.get("additionalProperties") {
        let has_properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        if has_properties && additional != &Value::Bool(true) {
            let detail = "additionalProperties and properties are mutual exclusive";
            causes.push(common::forbidden(
                &format!("{at}.additionalProperties"),
                detail,
            ));
        }
        open_api(additional, &format!("{at}.additionalProperties"), causes);
    }
    for (name, child) in sorted(schema.get("properties")) {
        open_api(child, &format!("{at}.properties[{name}]"), causes);
    }
    if let Some(not) = schema.get("not") {
        open_api(not, &format!("{at}.not"), causes);
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        for (i, child) in common::list(schema, key).iter().enumerate() {
            open_api(child, &format!("{at}.{key}[{i}]"), causes);
        }
    }
    for (name, child) in sorted(schema.get("definitions")) {
        open_api(child, &format!("{at}.definitions[{name}]"), causes);
    }
    match schema.get("items") {
        Some(Value::Array(items)) => {
            for (i, child) in items.iter().enumerate() {
                open_api(child, &format!("{at}.items[{i}]"), causes);
            }
        }
        Some(items) => open_api(items, &format!("{at}.items"), causes),
        None => {}
    }
    extensions(schema, at, causes);
}

/// `specStandardValidatorV3.validate`: the keywords kube does not support.
fn standard(schema: &Value, at: &str, causes: &mut Vec<Cause>) {
    let ty = text(schema, "type");
    if !ty.is_empty() && !TYPES.contains(&ty) {
        causes.push(common::not_supported(&format!("{at}.type"), ty, &TYPES));
    }
    let present = |key: &str| schema.get(key).is_some_and(|v| !v.is_null());
    let unsupported = [
        ("id", "id is not supported"),
        ("additionalItems", "additionalItems is not supported"),
        ("patternProperties", "patternProperties is not supported"),
        ("definitions", "definitions is not supported"),
        ("dependencies", "dependencies is not supported"),
        ("$ref", "$ref is not supported"),
    ];
    for (key, detail) in unsupported {
        if present(key) {
            causes.push(common::forbidden(&format!("{at}.{key}"), detail));
        }
    }
    if ty == "null" {
        let detail = "type cannot be set to null, use nullable as an alternative";
        causes.push(common::forbidden(&format!("{at}.type"), detail));
    }
    if schema.get("items").is_some_and(Value::is_array) {
        let detail = "items must be a schema object and not an array";
        causes.push(common::forbidden(&format!("{at}.items"), detail));
    }
}

/// The x-kubernetes-preserve-unknown-fields, map-type and list-type rules.
fn extensions(schema: &Value, at: &str, causes: &mut Vec<Cause>) {
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        let field = format!("{at}.x-kubernetes-preserve-unknown-fields");
        causes.push(common::invalid(
            &field,
            "false",
            "must be true or undefined",
        ));
    }
    let ty = text(schema, "type");
    if let Some(map_type) = schema.get("x-kubernetes-map-type").and_then(Value::as_str) {
        needs_type(ty, "object", "x-kubernetes-map-type", at, causes);
        if !["atomic", "granular"].contains(&map_type) {
            let field = format!("{at}.x-kubernetes-map-type");
            causes.push(common::not_supported(
                &field,
                map_type,
                &["atomic", "granular"],
            ));
        }
    }
    if let Some(list_type) = schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
        needs_type(ty, "array", "x-kubernetes-list-type", at, causes);
        if !["atomic", "set", "map"].contains(&list_type) {
            let field = format!("{at}.x-kubernetes-list-type");
            causes.push(common::not_supported(
                &field,
                list_type,
                &["atomic", "set", "map"],
            ));
        }
    }
}

fn needs_type(ty: &str, wanted: &str, extension: &str, at: &str, causes: &mut Vec<Cause>) {
    if ty == wanted {
        return;
    }
    let field = format!("{at}.type");
    let detail = format!("must be {wanted} if {extension} is specified");
    if ty.is_empty() {
        causes.push(common::required(&field, &detail));
    } else {
        causes.push(common::invalid(&field, &gofmt::quote(ty), &detail));
    }
}

/// The entries of a JSON object in name order.
pub fn sorted(map: Option<&Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = map
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}
