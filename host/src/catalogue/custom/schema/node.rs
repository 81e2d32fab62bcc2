//! One CRD schema node compiled once: the value validations kube-openapi
//! checks, the structural parts pruning and defaulting walk, and the
//! Kubernetes extensions. The schema is a tree (no `$ref`), so every walk
//! over it is bounded by its size; its depth is bounded here.

use super::formats::Format;
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Deeper schemas are refused: every walk recurses once per level (a
/// schema decoded from JSON, 128 levels deep at most, nests about half).
const MAX_DEPTH: usize = 128;

/// A `pattern`, kept as written for kube's message.
pub(super) struct Pattern {
    pub source: String,
    pub regex: Regex,
}

/// `additionalProperties`: a boolean or a schema.
pub(super) enum Additional {
    Allows(bool),
    Schema(Box<Node>),
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum ListType {
    Atomic,
    Set,
    Map,
}

#[derive(Default)]
pub(super) struct Node {
    /// `type` (`integer,string` for x-kubernetes-int-or-string).
    pub types: Vec<String>,
    pub nullable: bool,
    /// A format kube validates (others are stripped, as kube does).
    pub format: Option<Format>,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub multiple_of: Option<f64>,
    pub max_length: Option<i64>,
    pub min_length: Option<i64>,
    pub pattern: Option<Pattern>,
    pub max_items: Option<i64>,
    pub min_items: Option<i64>,
    pub unique_items: bool,
    pub max_properties: Option<i64>,
    pub min_properties: Option<i64>,
    pub required: Vec<String>,
    pub enumeration: Vec<Value>,
    /// Sorted by name: kube walks a Go map here, in no fixed order.
    pub properties: BTreeMap<String, Node>,
    pub additional: Option<Additional>,
    pub items: Option<Box<Node>>,
    pub all_of: Vec<Node>,
    pub any_of: Vec<Node>,
    pub one_of: Vec<Node>,
    pub not: Option<Box<Node>>,
    pub default: Option<Value>,
    pub preserve_unknown: bool,
    pub embedded: bool,
    pub list_type: Option<ListType>,
    pub list_map_keys: Vec<String>,
}

impl Node {
    /// The schema of additionalProperties, when it is one.
    pub fn additional_schema(&self) -> Option<&Node> {
        match &self.additional {
            Some(Additional::Schema(node)) => Some(node),
            _ => None,
        }
    }

    /// The schema pruning, defaulting and the list-type checks use for
    /// `key` (properties first, then additionalProperties).
    pub fn field(&self, key: &str) -> Option<&Node> {
        self.properties
            .get(key)
            .or_else(|| self.additional_schema())
    }
}

pub(super) fn compile(schema: &Value) -> Result<Node, String> {
    compile_at(schema, 0)
}

fn compile_at(schema: &Value, depth: usize) -> Result<Node, String> {
    if depth > MAX_DEPTH {
        return Err(format!("schema nesting exceeds {MAX_DEPTH} levels"));
    }
    let Some(s) = schema.as_object() else {
        return Ok(Node::default());
    };
    let mut node = Node {
        nullable: flag(s, "nullable"),
        format: s
            .get("format")
            .and_then(Value::as_str)
            .and_then(Format::supported),
        maximum: s.get("maximum").and_then(Value::as_f64),
        exclusive_maximum: flag(s, "exclusiveMaximum"),
        minimum: s.get("minimum").and_then(Value::as_f64),
        exclusive_minimum: flag(s, "exclusiveMinimum"),
        multiple_of: s.get("multipleOf").and_then(Value::as_f64),
        max_length: int(s, "maxLength"),
        min_length: int(s, "minLength"),
        pattern: pattern(s)?,
        max_items: int(s, "maxItems"),
        min_items: int(s, "minItems"),
        unique_items: flag(s, "uniqueItems"),
        max_properties: int(s, "maxProperties"),
        min_properties: int(s, "minProperties"),
        required: strings(s, "required"),
        enumeration: s
            .get("enum")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        default: s.get("default").cloned(),
        preserve_unknown: flag(s, "x-kubernetes-preserve-unknown-fields"),
        embedded: flag(s, "x-kubernetes-embedded-resource"),
        list_type: list_type(s),
        list_map_keys: strings(s, "x-kubernetes-list-map-keys"),
        ..Node::default()
    };
    node.types = types(s);
    compile_children(s, &mut node, depth + 1)?;
    Ok(node)
}

fn compile_children(s: &Map<String, Value>, node: &mut Node, depth: usize) -> Result<(), String> {
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            node.properties
                .insert(name.clone(), compile_at(sub, depth)?);
        }
    }
    node.additional = match s.get("additionalProperties") {
        Some(Value::Bool(b)) => Some(Additional::Allows(*b)),
        Some(sub @ Value::Object(_)) => Some(Additional::Schema(Box::new(compile_at(sub, depth)?))),
        _ => None,
    };
    if let Some(items) = s.get("items").filter(|i| i.is_object()) {
        node.items = Some(Box::new(compile_at(items, depth)?));
    }
    node.all_of = compile_list(s, "allOf", depth)?;
    node.any_of = compile_list(s, "anyOf", depth)?;
    node.one_of = compile_list(s, "oneOf", depth)?;
    if let Some(not) = s.get("not").filter(|n| n.is_object()) {
        node.not = Some(Box::new(compile_at(not, depth)?));
    }
    Ok(())
}

fn compile_list(s: &Map<String, Value>, key: &str, depth: usize) -> Result<Vec<Node>, String> {
    s.get(key)
        .and_then(Value::as_array)
        .map(|list| list.iter().map(|sub| compile_at(sub, depth)).collect())
        .unwrap_or_else(|| Ok(Vec::new()))
}

fn types(s: &Map<String, Value>) -> Vec<String> {
    if flag(s, "x-kubernetes-int-or-string") {
        return vec!["integer".into(), "string".into()];
    }
    match s.get("type").and_then(Value::as_str) {
        Some(t) if !t.is_empty() => vec![t.to_string()],
        _ => Vec::new(),
    }
}

fn pattern(s: &Map<String, Value>) -> Result<Option<Pattern>, String> {
    let Some(source) = s.get("pattern").and_then(Value::as_str) else {
        return Ok(None);
    };
    if source.is_empty() {
        return Ok(None);
    }
    let regex = Regex::new(source).map_err(|e| format!("pattern {source:?}: {e}"))?;
    Ok(Some(Pattern {
        source: source.to_string(),
        regex,
    }))
}

fn list_type(s: &Map<String, Value>) -> Option<ListType> {
    match s.get("x-kubernetes-list-type").and_then(Value::as_str)? {
        "atomic" => Some(ListType::Atomic),
        "set" => Some(ListType::Set),
        "map" => Some(ListType::Map),
        _ => None,
    }
}

fn flag(s: &Map<String, Value>, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn int(s: &Map<String, Value>, key: &str) -> Option<i64> {
    s.get(key).and_then(Value::as_i64)
}

fn strings(s: &Map<String, Value>, key: &str) -> Vec<String> {
    s.get(key)
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}
