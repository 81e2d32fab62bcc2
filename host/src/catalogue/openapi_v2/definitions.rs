//! The catalogue's OpenAPI v3 component schemas as Swagger 2.0 definitions,
//! the way kube-apiserver's v2 differs from its v3: refs point into
//! `#/definitions/`, a ref wrapped in `allOf` (v3's way of giving a ref a
//! description) is a plain `$ref` with siblings, `oneOf` of bare types
//! (IntOrString, Quantity) is kube's v2 `type: string`, and what Swagger 2.0
//! cannot say is dropped as kube's `ToStructuralOpenAPIV2` drops it for
//! custom resources (apiextensions-apiserver controller/openapi/v2):
//! `allOf`/`oneOf`/`anyOf`/`not` value validations, `nullable` (with the
//! node's type, items and properties, and its name in the parent's
//! `required`), items and properties of nodes that preserve unknown fields
//! (and their `object` type), the `array` type of arrays left without items.

use crate::catalogue::Schemas;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::super::schemas::REF_PREFIX;

pub(super) const DEFINITIONS_PREFIX: &str = "#/definitions/";

const GVK: &str = "x-kubernetes-group-version-kind";
const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";
const INT_OR_STRING: &str = "x-kubernetes-int-or-string";

/// OpenAPI v3 schema keywords Swagger 2.0 does not have (or has otherwise).
const DROPPED: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "nullable",
    "deprecated",
    "writeOnly",
    "discriminator",
];

/// Every component schema as a definition, sorted by name, and kube's
/// definitions that only v2 has (`extra`).
pub(super) fn definitions(schemas: &Schemas, extra: &Map<String, Value>) -> Map<String, Value> {
    let mut sorted: BTreeMap<&String, Value> = schemas
        .iter()
        .map(|(name, schema)| (name, definition(schema, is_kubes(name))))
        .collect();
    sorted.extend(extra.iter().map(|(name, d)| (name, d.clone())));
    sorted
        .into_iter()
        .map(|(name, schema)| (name.clone(), schema))
        .collect()
}

/// One definition. A kind whose whole object preserves unknown fields (a
/// custom resource without a real schema) is, as kube publishes it for v2,
/// a bare object with its kind: kubectl would refuse any field not listed.
/// kube's own types: its v2 definitions have no `default`s (its v3 have).
fn is_kubes(name: &str) -> bool {
    name.starts_with("io.k8s.")
}

fn definition(schema: &Value, kubes: bool) -> Value {
    match schema.get(GVK) {
        Some(gvk) if flag(schema, PRESERVE) => {
            let mut out = Map::new();
            out.insert("type".into(), Value::from("object"));
            out.insert(GVK.into(), gvk.clone());
            Value::Object(out)
        }
        _ => convert(schema, kubes),
    }
}

fn flag(schema: &Value, name: &str) -> bool {
    schema.get(name).and_then(Value::as_bool) == Some(true)
}

fn v2_ref(value: &Value) -> Value {
    match value.as_str().and_then(|r| r.strip_prefix(REF_PREFIX)) {
        Some(name) => Value::from(format!("{DEFINITIONS_PREFIX}{name}")),
        None => value.clone(),
    }
}

/// The `$ref` of `allOf: [{"$ref": ...}]`, v3's wrapping of a ref that has
/// siblings.
fn lone_ref(all_of: &Value) -> Option<&Value> {
    match all_of.as_array()?.as_slice() {
        [Value::Object(only)] if only.len() == 1 => only.get("$ref"),
        _ => None,
    }
}

/// kube's v2 type of a type published in v3 as `oneOf` bare types
/// (IntOrString, Quantity): their OpenAPI v2 type is `string`.
fn one_of_type(obj: &Map<String, Value>) -> Option<Value> {
    let types: Vec<&str> = obj
        .get("oneOf")?
        .as_array()?
        .iter()
        .map(|alt| match alt.as_object() {
            Some(o) if o.len() == 1 => o.get("type").and_then(Value::as_str),
            _ => None,
        })
        .collect::<Option<_>>()?;
    types.contains(&"string").then(|| Value::from("string"))
}

fn convert_map(value: &Value, kubes: bool) -> Value {
    match value {
        Value::Object(props) => {
            let sorted: BTreeMap<&String, Value> = props
                .iter()
                .map(|(name, s)| (name, convert(s, kubes)))
                .collect();
            Value::Object(sorted.into_iter().map(|(n, s)| (n.clone(), s)).collect())
        }
        other => other.clone(),
    }
}

/// One schema node and everything below it (without `default`s for kube's
/// own types).
fn convert(schema: &Value, kubes: bool) -> Value {
    let Value::Object(obj) = schema else {
        return schema.clone();
    };
    let mut out: BTreeMap<String, Value> = BTreeMap::new();
    for (key, value) in obj {
        let converted = match key.as_str() {
            "$ref" => v2_ref(value),
            "allOf" => match lone_ref(value) {
                Some(r) => {
                    out.insert("$ref".into(), v2_ref(r));
                    continue;
                }
                None => continue,
            },
            "properties" => convert_map(value, kubes),
            "items" => match value {
                Value::Array(items) => {
                    Value::Array(items.iter().map(|i| convert(i, kubes)).collect())
                }
                single => convert(single, kubes),
            },
            "additionalProperties" if !value.is_boolean() => convert(value, kubes),
            "default" if kubes => continue,
            k if DROPPED.contains(&k) => continue,
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    if !obj.contains_key("type") && !flag(schema, INT_OR_STRING) {
        if let Some(t) = one_of_type(obj) {
            out.insert("type".into(), t);
        }
    }
    strip_for_v2(obj, &mut out);
    out.into_iter().collect()
}

/// kube's `ToStructuralOpenAPIV2` rules on one node (`src` is the v3 node).
fn strip_for_v2(src: &Map<String, Value>, out: &mut BTreeMap<String, Value>) {
    let is = |name: &str| src.get(name).and_then(Value::as_bool) == Some(true);
    if is("nullable") {
        out.remove("type");
        out.remove("items");
        out.remove("properties");
    }
    if is(PRESERVE) {
        out.remove("items");
        out.remove("properties");
    }
    let typed =
        |out: &BTreeMap<String, Value>, t: &str| out.get("type").and_then(Value::as_str) == Some(t);
    if typed(out, "array") && !out.contains_key("items") {
        out.remove("type");
    }
    if is(PRESERVE) && typed(out, "object") {
        out.remove("type");
    }
    drop_nullable_required(src, out);
}

/// A nullable property is not required in v2; nor is anything of a map
/// whose values are nullable.
fn drop_nullable_required(src: &Map<String, Value>, out: &mut BTreeMap<String, Value>) {
    if src
        .get("additionalProperties")
        .is_some_and(|a| flag(a, "nullable"))
    {
        out.remove("required");
        return;
    }
    let Some(props) = src.get("properties").and_then(Value::as_object) else {
        return;
    };
    if !out.contains_key("properties") {
        return;
    }
    let nullable: Vec<&String> = props
        .iter()
        .filter(|(_, p)| flag(p, "nullable"))
        .map(|(name, _)| name)
        .collect();
    if nullable.is_empty() {
        return;
    }
    if let Some(Value::Array(required)) = out.get_mut("required") {
        required.retain(|r| !r.as_str().is_some_and(|r| nullable.iter().any(|n| *n == r)));
        if required.is_empty() {
            out.remove("required");
        }
    }
}
