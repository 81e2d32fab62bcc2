//! The structural-schema invariants of kube's `ValidateStructural`
//! (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/validation.go):
//! every specified field, array item and the root has a `type`, arrays have
//! `items`, the root is an object, `kind`/`apiVersion` at the root are
//! strings, embedded resources are objects, and value validations
//! (`allOf`, `anyOf`, `oneOf`, `not`) do not specify types. kube sorts these
//! errors by their text; so does this.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::schema::sorted;
use crate::common::{self, text};
use kube_rules::gofmt;

#[derive(Clone, Copy, PartialEq)]
enum Level {
    Root,
    Item,
    Field,
}

/// The structural errors of the root schema at `at`, sorted.
pub fn validate(schema: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    invariants(schema, Level::Root, at, &mut causes);
    causes.sort_by_key(|c| format!("{}: {}", c.field, c.message));
    causes
}

fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool) == Some(true)
}

fn invariants(s: &Value, level: Level, at: &str, causes: &mut Vec<Cause>) {
    if !s.is_object() {
        return;
    }
    let ty = text(s, "type");
    if ty == "array" && s.get("items").is_none_or(Value::is_null) {
        causes.push(common::required(
            &format!("{at}.items"),
            "must be specified",
        ));
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        invariants(items, Level::Item, &format!("{at}.items"), causes);
    }
    for (name, child) in sorted(s.get("properties")) {
        invariants(
            child,
            Level::Field,
            &format!("{at}.properties[{name}]"),
            causes,
        );
    }
    value_validations(s, at, causes);
    missing_type(s, ty, level, at, causes);
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        causes.push(common::invalid(
            &format!("{at}.type"),
            &gofmt::quote(ty),
            "must be object at the root",
        ));
    }
    if level == Level::Root || flag(s, "x-kubernetes-embedded-resource") {
        for key in ["kind", "apiVersion"] {
            if let Some(p) = s.get("properties").and_then(|p| p.get(key)) {
                let t = text(p, "type");
                if t != "string" {
                    let field = format!("{at}.properties[{key}].type");
                    causes.push(common::invalid(&field, &gofmt::quote(t), "must be string"));
                }
            }
        }
    }
}

/// The `type` rules: embedded resources are objects, everything else
/// specified needs a type (int-or-string excepted).
fn missing_type(s: &Value, ty: &str, level: Level, at: &str, causes: &mut Vec<Cause>) {
    let field = format!("{at}.type");
    let embedded = flag(s, "x-kubernetes-embedded-resource");
    if embedded && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        if ty.is_empty() {
            causes.push(common::required(&field, detail));
        } else {
            causes.push(common::invalid(&field, &gofmt::quote(ty), detail));
        }
    } else if ty.is_empty() && !embedded && !flag(s, "x-kubernetes-int-or-string") {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        causes.push(common::required(&field, detail));
    }
    if embedded && s.get("additionalProperties").is_some() {
        let field = format!("{at}.additionalProperties");
        causes.push(common::required(
            &field,
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
}

/// Types inside `allOf`/`anyOf`/`oneOf`/`not` (`validateValueValidation`),
/// except the two int-or-string patterns kube allows.
fn value_validations(s: &Value, at: &str, causes: &mut Vec<Cause>) {
    let int_or_string = flag(s, "x-kubernetes-int-or-string");
    for key in ["allOf", "anyOf", "oneOf"] {
        for (i, child) in common::list(s, key).iter().enumerate() {
            let allowed = int_or_string && matches!(key, "anyOf" | "allOf");
            nested(child, allowed, &format!("{at}.{key}[{i}]"), causes);
        }
    }
    if let Some(not) = s.get("not") {
        nested(not, false, &format!("{at}.not"), causes);
    }
}

fn nested(s: &Value, type_allowed: bool, at: &str, causes: &mut Vec<Cause>) {
    if !s.is_object() {
        return;
    }
    if !type_allowed && !text(s, "type").is_empty() {
        causes.push(common::forbidden(
            &format!("{at}.type"),
            "must be empty to be structural",
        ));
    }
    for (name, child) in sorted(s.get("properties")) {
        nested(child, false, &format!("{at}.properties[{name}]"), causes);
    }
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        nested(items, false, &format!("{at}.items"), causes);
    }
}
