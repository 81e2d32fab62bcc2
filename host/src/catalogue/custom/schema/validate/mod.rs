//! kube-openapi's SchemaValidator over a compiled node: the same validators
//! in the same order (type, allOf/anyOf/oneOf/not, string, format, number,
//! array, enum, object), the same messages, and the same match counts that
//! pick which failing anyOf/oneOf branch is reported.
//!
//! On update, kube ratchets (CRDValidationRatcheting): `old` is the value
//! correlated with the one validated (same key; list-type map items by
//! their keys), and the problems of a value equal to its old value are
//! dropped.

mod collections;
mod junctors;
mod scalars;

use super::node::Node;
use super::problems::{Code, Problem};
use collections::{array_checks, object_checks};
use junctors::junctors;
use scalars::{number_checks, string_checks};
use serde_json::Value;

/// The problems found and kube-openapi's MatchCount of the checks run.
#[derive(Default)]
pub(super) struct Outcome {
    pub problems: Vec<Problem>,
    count: u64,
}

impl Outcome {
    pub(super) fn merge(&mut self, other: Outcome) {
        self.problems.extend(other.problems);
        self.count += other.count;
    }

    pub(super) fn push(&mut self, problem: Problem) {
        self.problems.push(problem);
    }

    pub(super) fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }

    /// A failing check's result: its problem and no match.
    pub(super) fn failed(problem: Problem) -> Outcome {
        Outcome {
            problems: vec![problem],
            count: 0,
        }
    }
}

/// A JSON value's kind as Go decodes it: integers are int64, every other
/// number float64.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Bool,
    Str,
    Int(i64),
    Float(f64),
    Array,
    Object,
}

pub(super) fn kind_of(v: &Value) -> Option<Kind> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(_) => Kind::Bool,
        Value::String(_) => Kind::Str,
        Value::Number(n) => match n.as_i64() {
            Some(i) => Kind::Int(i),
            None => Kind::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::Array(_) => Kind::Array,
        Value::Object(_) => Kind::Object,
    })
}

/// Validates `data` at `path` (`""` for the root) against `node`; `old`,
/// on update, is the correlated old value.
pub(super) fn validate(node: &Node, data: &Value, path: &str, old: Option<&Value>) -> Outcome {
    let out = validate_value(node, data, path, old);
    if !out.is_valid() && old == Some(data) {
        return Outcome {
            problems: Vec::new(),
            count: out.count,
        };
    }
    out
}

/// One value against one schema, without ratcheting at this level (as a
/// junctor's branch is validated).
pub(super) fn validate_value(
    node: &Node,
    data: &Value,
    path: &str,
    old: Option<&Value>,
) -> Outcome {
    let mut out = Outcome::default();
    let Some(kind) = kind_of(data) else {
        out.merge(null_type(node, path));
        out.merge(enumeration(node, data, path));
        return out;
    };
    if !node.types.is_empty() || node.format.is_some() {
        step(&mut out, type_check(node, kind, path));
    }
    step(&mut out, junctors(node, data, path, old));
    if let Value::String(s) = data {
        step(&mut out, string_checks(node, s, data, path));
        if let Some(format) = &node.format {
            let result = if format.accepts(s) {
                Outcome::default()
            } else {
                Outcome::failed(Problem::invalid_type(path, &format.name, s))
            };
            step(&mut out, result);
        }
    }
    if matches!(kind, Kind::Int(_) | Kind::Float(_)) {
        step(&mut out, number_checks(node, kind, data, path));
    }
    if let Value::Array(items) = data {
        step(&mut out, array_checks(node, items, path, old));
    }
    step(&mut out, enumeration(node, data, path));
    if let Value::Object(map) = data {
        step(&mut out, object_checks(node, map, path, old));
    }
    out.count += 1;
    out
}

/// One validator that applied: its result and one more match.
fn step(out: &mut Outcome, result: Outcome) {
    out.merge(result);
    out.count += 1;
}

fn null_type(node: &Node, path: &str) -> Outcome {
    if !node.types.is_empty() && !node.types.iter().any(|t| t == "null") && !node.nullable {
        return Outcome::failed(Problem::invalid_type(path, &node.types.join(","), "null"));
    }
    Outcome {
        problems: Vec::new(),
        count: 1,
    }
}

/// The JSON type name and the format Go's type inference gives a value.
fn type_info(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Bool => ("boolean", ""),
        Kind::Str => ("string", ""),
        Kind::Int(_) => ("integer", "int64"),
        Kind::Float(_) => ("number", "float64"),
        Kind::Array => ("array", ""),
        Kind::Object => ("object", ""),
    }
}

fn type_check(node: &Node, kind: Kind, path: &str) -> Outcome {
    let (sch_type, data_format) = type_info(kind);
    let has = |t: &str| node.types.iter().any(|x| x == t);
    let float_int = matches!(kind, Kind::Float(f) if is_json_integer(f)) && has("integer");
    let int_float = matches!(kind, Kind::Int(_)) && has("number");
    let stringish = matches!(kind, Kind::Str | Kind::Array);
    let format = node.format.as_ref().map_or("", |f| f.name.as_str());
    let type_matches = has(sch_type) || float_int || int_float;
    if !stringish && !format.is_empty() && !type_matches && data_format != format {
        return Outcome::failed(Problem::invalid_type(path, format, data_format));
    }
    let numeric = has("number") || has("integer");
    if !numeric && !format.is_empty() && stringish {
        return Outcome {
            problems: Vec::new(),
            count: 1,
        };
    }
    if !type_matches {
        let expected = node.types.join(",");
        return Outcome::failed(Problem::invalid_type(path, &expected, sch_type));
    }
    Outcome {
        problems: Vec::new(),
        count: 1,
    }
}

/// swag.IsFloat64AJSONInteger: integral within ±2^53, or a positive value
/// within a relative 1e-9 of its integer part.
pub(super) fn is_json_integer(f: f64) -> bool {
    let limit = 9_007_199_254_740_992.0;
    if !f.is_finite() || !(-limit..=limit).contains(&f) {
        return false;
    }
    if f == f.trunc() {
        return true;
    }
    if f < 0.0 {
        return false;
    }
    let g = f.trunc();
    if g == 0.0 {
        return false;
    }
    (f - g).abs() / (f + g) < 1e-9
}

/// The enum check: a value matches an entry equal to it after Go's
/// conversion to the entry's type (so 1.5 matches 1, and 65 matches "A").
fn enumeration(node: &Node, data: &Value, path: &str) -> Outcome {
    if node.enumeration.is_empty() || node.enumeration.iter().any(|e| enum_match(data, e)) {
        return Outcome::default();
    }
    let values = node.enumeration.clone();
    let message = format!("{path} in body should be one of {}", go_list(&values));
    Outcome::failed(Problem::new(
        Code::Enum(values),
        path,
        Some(data.clone()),
        message,
    ))
}

fn go_list(values: &[Value]) -> String {
    let parts: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("[{}]", parts.join(" "))
}

fn enum_match(data: &Value, entry: &Value) -> bool {
    match (kind_of(data), kind_of(entry)) {
        (Some(Kind::Int(i)), Some(Kind::Float(e))) => i as f64 == e,
        (Some(Kind::Float(f)), Some(Kind::Int(e))) => f as i64 == e,
        (Some(Kind::Int(i)), Some(Kind::Str)) => {
            let c = u32::try_from(i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{fffd}');
            entry.as_str() == Some(c.to_string().as_str())
        }
        (Some(_), Some(_)) => data == entry,
        _ => false,
    }
}
