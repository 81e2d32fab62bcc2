//! The v2 document as gnostic's `openapi.v2.Document` protobuf message
//! (github.com/google/gnostic-models, openapiv2/OpenAPIv2.proto), what
//! kubectl ≤ 1.28 asks for with
//! `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`.
//! Encoded from the JSON document, covering what it contains: info, paths
//! (operations, body/query/path parameters, responses), definitions
//! (schemas) and security. Vendor extensions and `default`/`enum`/`example`
//! values are gnostic's `Any` with the value as YAML text; we write it in
//! YAML's flow form (the value's JSON), which every YAML parser reads back
//! to the same value (and never reads a string such as "on" as a boolean).

use serde_json::{Map, Value};

use super::wire::Msg;

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn strings<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    match v.get(key) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(s)) => vec![s.as_str()],
        _ => Vec::new(),
    }
}

fn entries(v: &Value) -> impl Iterator<Item = (&String, &Value)> + '_ {
    v.as_object().into_iter().flat_map(Map::iter)
}

/// gnostic's `Any`: the value as YAML text.
fn any(v: &Value) -> Msg {
    let mut m = Msg::new();
    m.string(2, &format!("{v}\n"));
    m
}

/// `NamedAny` vendor extensions: every `x-` key of `v`, in field `field`.
fn extensions(m: &mut Msg, field: u32, v: &Value) {
    for (name, value) in entries(v).filter(|(k, _)| k.starts_with("x-")) {
        let mut named = Msg::new();
        named.string(1, name);
        named.message(2, any(value));
        m.message(field, named);
    }
}

/// A `repeated NamedX` map message whose entries are `{1: name, 2: value}`.
fn named(field: u32, v: &Value, value: fn(&Value) -> Msg) -> Msg {
    let mut m = Msg::new();
    for (name, item) in entries(v) {
        let mut entry = Msg::new();
        entry.string(1, name);
        entry.message(2, value(item));
        m.message(field, entry);
    }
    m
}

fn int(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

fn number(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn schema_validations(m: &mut Msg, s: &Value) {
    m.double(6, number(s, "multipleOf"));
    m.double(7, number(s, "maximum"));
    m.bool(8, flag(s, "exclusiveMaximum"));
    m.double(9, number(s, "minimum"));
    m.bool(10, flag(s, "exclusiveMinimum"));
    m.int64(11, int(s, "maxLength"));
    m.int64(12, int(s, "minLength"));
    m.string(13, text(s, "pattern"));
    m.int64(14, int(s, "maxItems"));
    m.int64(15, int(s, "minItems"));
    m.bool(16, flag(s, "uniqueItems"));
    m.int64(17, int(s, "maxProperties"));
    m.int64(18, int(s, "minProperties"));
    m.strings(19, strings(s, "required"));
    for value in s
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(20, any(value));
    }
}

fn additional_properties(v: &Value) -> Msg {
    let mut m = Msg::new();
    match v {
        Value::Bool(b) => m.bool_present(2, *b),
        other => m.message(1, schema(other)),
    }
    m
}

fn items(v: &Value) -> Msg {
    let mut m = Msg::new();
    match v {
        Value::Array(list) => list.iter().for_each(|s| m.message(1, schema(s))),
        single => m.message(1, schema(single)),
    }
    m
}

/// One `Schema`.
fn schema(s: &Value) -> Msg {
    let mut m = Msg::new();
    m.string(1, text(s, "$ref"));
    m.string(2, text(s, "format"));
    m.string(3, text(s, "title"));
    m.string(4, text(s, "description"));
    if let Some(default) = s.get("default") {
        m.message(5, any(default));
    }
    schema_validations(&mut m, s);
    if let Some(a) = s.get("additionalProperties") {
        m.message(21, additional_properties(a));
    }
    if s.get("type").is_some() {
        let mut t = Msg::new();
        t.strings(1, strings(s, "type"));
        m.message(22, t);
    }
    if let Some(i) = s.get("items") {
        m.message(23, items(i));
    }
    for sub in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(24, schema(sub));
    }
    if let Some(props) = s.get("properties") {
        m.message(25, named(1, props, schema));
    }
    m.bool(27, flag(s, "readOnly"));
    if let Some(example) = s.get("example") {
        m.message(30, any(example));
    }
    extensions(&mut m, 31, s);
    m
}

/// A query or path parameter's sub-schema (their fields differ by one:
/// query parameters have `allowEmptyValue` as field 5).
fn non_body_parameter(p: &Value, query: bool) -> Msg {
    let shift = u32::from(query);
    let mut m = Msg::new();
    m.bool(1, flag(p, "required"));
    m.string(2, text(p, "in"));
    m.string(3, text(p, "description"));
    m.string(4, text(p, "name"));
    m.string(5 + shift, text(p, "type"));
    m.string(6 + shift, text(p, "format"));
    m.bool(19 + shift, flag(p, "uniqueItems"));
    extensions(&mut m, 22 + shift, p);
    m
}

fn body_parameter(p: &Value) -> Msg {
    let mut m = Msg::new();
    m.string(1, text(p, "description"));
    m.string(2, text(p, "name"));
    m.string(3, text(p, "in"));
    m.bool(4, flag(p, "required"));
    if let Some(s) = p.get("schema") {
        m.message(5, schema(s));
    }
    extensions(&mut m, 6, p);
    m
}

/// One `Parameter`: a body parameter or a non-body one.
fn parameter_value(p: &Value) -> Msg {
    let mut param = Msg::new();
    match text(p, "in") {
        "body" => param.message(1, body_parameter(p)),
        location => {
            let mut non_body = Msg::new();
            match location {
                "query" => non_body.message(3, non_body_parameter(p, true)),
                _ => non_body.message(4, non_body_parameter(p, false)),
            }
            param.message(2, non_body);
        }
    }
    param
}

/// One `ParametersItem`: a parameter or a reference to a shared one.
fn parameter(p: &Value) -> Msg {
    let mut item = Msg::new();
    if let Some(r) = p.get("$ref").and_then(Value::as_str) {
        let mut reference = Msg::new();
        reference.string(1, r);
        item.message(2, reference);
        return item;
    }
    item.message(1, parameter_value(p));
    item
}

fn parameters(m: &mut Msg, field: u32, v: &Value) {
    for p in v
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(field, parameter(p));
    }
}

/// One `ResponseValue` (always a `Response` here).
fn response(r: &Value) -> Msg {
    let mut resp = Msg::new();
    resp.string(1, text(r, "description"));
    if let Some(s) = r.get("schema") {
        let mut item = Msg::new();
        item.message(1, schema(s));
        resp.message(2, item);
    }
    extensions(&mut resp, 5, r);
    let mut value = Msg::new();
    value.message(1, resp);
    value
}

fn operation(op: &Value) -> Msg {
    let mut m = Msg::new();
    m.strings(1, strings(op, "tags"));
    m.string(2, text(op, "summary"));
    m.string(3, text(op, "description"));
    m.string(5, text(op, "operationId"));
    m.strings(6, strings(op, "produces"));
    m.strings(7, strings(op, "consumes"));
    parameters(&mut m, 8, op);
    if let Some(r) = op.get("responses") {
        let mut responses = named(1, r, response);
        extensions(&mut responses, 2, r);
        m.message(9, responses);
    }
    m.strings(10, strings(op, "schemes"));
    m.bool(11, flag(op, "deprecated"));
    extensions(&mut m, 13, op);
    m
}

const METHODS: &[(&str, u32)] = &[
    ("get", 2),
    ("put", 3),
    ("post", 4),
    ("delete", 5),
    ("options", 6),
    ("head", 7),
    ("patch", 8),
];

fn path_item(item: &Value) -> Msg {
    let mut m = Msg::new();
    for (method, field) in METHODS {
        if let Some(op) = item.get(*method) {
            m.message(*field, operation(op));
        }
    }
    parameters(&mut m, 9, item);
    extensions(&mut m, 10, item);
    m
}

fn info(v: &Value) -> Msg {
    let mut m = Msg::new();
    m.string(1, text(v, "title"));
    m.string(2, text(v, "version"));
    m.string(3, text(v, "description"));
    extensions(&mut m, 7, v);
    m
}

/// `SecurityRequirement`: names → scopes.
fn security_requirement(v: &Value) -> Msg {
    named(1, v, |scopes| {
        let mut list = Msg::new();
        list.strings(
            1,
            scopes
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str),
        );
        list
    })
}

/// `SecurityDefinitionsItem` (API keys, the only scheme kube publishes).
fn security_definition(v: &Value) -> Msg {
    let mut key = Msg::new();
    key.string(1, text(v, "type"));
    key.string(2, text(v, "name"));
    key.string(3, text(v, "in"));
    key.string(4, text(v, "description"));
    extensions(&mut key, 5, v);
    let mut item = Msg::new();
    item.message(2, key);
    item
}

/// The whole document as `openapi.v2.Document`.
pub(super) fn encode_document(doc: &Value) -> Vec<u8> {
    let mut m = Msg::new();
    m.string(1, text(doc, "swagger"));
    m.message(2, info(&doc["info"]));
    let mut paths = named(2, &doc["paths"], path_item);
    extensions(&mut paths, 1, &doc["paths"]);
    m.message(8, paths);
    m.message(9, named(1, &doc["definitions"], schema));
    if let Some(shared) = doc.get("parameters") {
        m.message(10, named(1, shared, parameter_value));
    }
    for req in doc["security"].as_array().into_iter().flatten() {
        m.message(12, security_requirement(req));
    }
    if let Some(defs) = doc.get("securityDefinitions") {
        m.message(13, named(1, defs, security_definition));
    }
    extensions(&mut m, 16, doc);
    m.into_bytes()
}
