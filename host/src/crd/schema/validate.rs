//! kube-openapi's SchemaValidator over a compiled node: the same validators
//! in the same order (type, allOf/anyOf/oneOf/not, string, format, number,
//! array, enum, object), the same messages, and the same match counts that
//! pick which failing anyOf/oneOf branch is reported.
//!
//! On update, kube ratchets (CRDValidationRatcheting): `old` is the value
//! correlated with the one validated (same key; list-type map items by
//! their keys), and the problems of a value equal to its old value are
//! dropped.

use super::go_values::go_float;
use super::node::{Additional, ListType, Node};
use super::problems::{Code, Problem};
use crate::selectors::validation::go_quote;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The problems found and kube-openapi's MatchCount of the checks run.
#[derive(Default)]
pub(super) struct Outcome {
    pub problems: Vec<Problem>,
    count: u64,
}

impl Outcome {
    fn merge(&mut self, other: Outcome) {
        self.problems.extend(other.problems);
        self.count += other.count;
    }

    fn push(&mut self, problem: Problem) {
        self.problems.push(problem);
    }

    fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }

    /// A failing check's result: its problem and no match.
    fn failed(problem: Problem) -> Outcome {
        Outcome {
            problems: vec![problem],
            count: 0,
        }
    }
}

/// A JSON value's kind as Go decodes it: integers are int64, every other
/// number float64.
#[derive(Clone, Copy)]
enum Kind {
    Bool,
    Str,
    Int(i64),
    Float(f64),
    Array,
    Object,
}

fn kind_of(v: &Value) -> Option<Kind> {
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
fn validate_value(node: &Node, data: &Value, path: &str, old: Option<&Value>) -> Outcome {
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
fn is_json_integer(f: f64) -> bool {
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

/// The value and its correlated old value, as the junctors pass them on.
#[derive(Clone, Copy)]
struct Subject<'a> {
    data: &'a Value,
    path: &'a str,
    old: Option<&'a Value>,
}

impl Subject<'_> {
    fn against(&self, branch: &Node) -> Outcome {
        validate_value(branch, self.data, self.path, self.old)
    }
}

fn junctors(node: &Node, data: &Value, path: &str, old: Option<&Value>) -> Outcome {
    let mut main = Outcome::default();
    let subject = Subject { data, path, old };
    if !node.any_of.is_empty() {
        any_of(&node.any_of, subject, &mut main);
    }
    if !node.one_of.is_empty() {
        one_of(&node.one_of, subject, &mut main);
    }
    if !node.all_of.is_empty() {
        all_of(&node.all_of, subject, &mut main);
    }
    if let Some(not) = &node.not {
        if subject.against(not).is_valid() {
            main.push(Problem::composite(format!(
                "{} must not validate the schema (not)",
                go_quote(path)
            )));
        }
    }
    main.count += 1;
    main
}

fn any_of(branches: &[Node], subject: Subject, main: &mut Outcome) {
    let path = subject.path;
    let mut best: Option<Outcome> = None;
    for branch in branches {
        let result = subject.against(branch);
        if result.is_valid() {
            main.merge(result);
            return;
        }
        if best.as_ref().is_none_or(|b| result.count > b.count) {
            best = Some(result);
        }
    }
    main.push(Problem::composite(format!(
        "{} must validate at least one schema (anyOf)",
        go_quote(path)
    )));
    if let Some(best) = best {
        main.merge(best);
    }
}

fn one_of(branches: &[Node], subject: Subject, main: &mut Outcome) {
    let path = subject.path;
    let mut best: Option<Outcome> = None;
    let mut first_success: Option<Outcome> = None;
    let mut validated = 0;
    for branch in branches {
        let result = subject.against(branch);
        if result.is_valid() {
            validated += 1;
            best = None;
            first_success.get_or_insert(result);
            continue;
        }
        if validated == 0 && best.as_ref().is_none_or(|b| result.count > b.count) {
            best = Some(result);
        }
    }
    if validated == 1 {
        if let Some(success) = first_success {
            main.merge(success);
        }
        return;
    }
    let found = if validated == 0 {
        "Found none valid".to_string()
    } else {
        format!("Found {validated} valid alternatives")
    };
    main.push(Problem::composite(format!(
        "{} must validate one and only one schema (oneOf). {found}",
        go_quote(path)
    )));
    if let Some(best) = best {
        main.merge(best);
    }
}

fn all_of(branches: &[Node], subject: Subject, main: &mut Outcome) {
    let path = subject.path;
    let mut validated = 0;
    for branch in branches {
        let result = subject.against(branch);
        if result.is_valid() {
            validated += 1;
        }
        main.merge(result);
    }
    if validated != branches.len() {
        let extra = if validated == 0 {
            ". None validated"
        } else {
            ""
        };
        main.push(Problem::composite(format!(
            "{} must validate all the schemas (allOf){extra}",
            go_quote(path)
        )));
    }
}

/// maxLength, minLength (in runes), pattern: the first failure only.
fn string_checks(node: &Node, s: &str, data: &Value, path: &str) -> Outcome {
    let runes = s.chars().count() as i64;
    let value = || Some(data.clone());
    let problem = if let Some(max) = node.max_length.filter(|m| runes > *m) {
        let message = format!("{path} in body should be at most {max} chars long");
        Some(Problem::new(Code::TooLong(max), path, value(), message))
    } else if let Some(min) = node.min_length.filter(|m| runes < *m) {
        let message = format!("{path} in body should be at least {min} chars long");
        Some(Problem::new(Code::Other, path, value(), message))
    } else {
        node.pattern
            .as_ref()
            .filter(|p| !p.regex.is_match(s))
            .map(|p| {
                let message = format!("{path} in body should match '{}'", p.source);
                Problem::new(Code::Other, path, value(), message)
            })
    };
    problem.map(Outcome::failed).unwrap_or_default()
}

/// multipleOf, minimum, maximum (reported in that order); integers are
/// compared as int64 against the truncated bound, as kube does.
fn number_checks(node: &Node, kind: Kind, data: &Value, path: &str) -> Outcome {
    let mut out = Outcome {
        problems: Vec::new(),
        count: 1,
    };
    let value = || Some(data.clone());
    let problem = |message: String| Problem::new(Code::Other, path, value(), message);
    if let Some(factor) = node.multiple_of {
        if let Some(message) = multiple_of(kind, factor, path) {
            let value = if factor < 0.0 {
                Some(factor_value(kind, factor))
            } else {
                value()
            };
            out.push(Problem::new(Code::Other, path, value, message));
        }
    }
    if let Some(min) = node.minimum {
        if let Some(message) = bound(kind, min, node.exclusive_minimum, path, false) {
            out.push(problem(message));
        }
    }
    if let Some(max) = node.maximum {
        if let Some(message) = bound(kind, max, node.exclusive_maximum, path, true) {
            out.push(problem(message));
        }
    }
    out
}

fn factor_value(kind: Kind, factor: f64) -> Value {
    match kind {
        Kind::Int(_) if factor as i64 != 0 => Value::from(factor as i64),
        _ => serde_json::Number::from_f64(factor).map_or(Value::Null, Value::Number),
    }
}

fn multiple_of(kind: Kind, factor: f64, path: &str) -> Option<String> {
    let int_factor = factor as i64;
    if let (Kind::Int(i), true) = (kind, int_factor != 0) {
        if int_factor < 0 {
            return Some(format!(
                "factor MultipleOf declared for {path} must be positive: {int_factor}"
            ));
        }
        return (i % int_factor != 0)
            .then(|| format!("{path} in body should be a multiple of {int_factor}"));
    }
    let data = match kind {
        Kind::Int(i) => i as f64,
        Kind::Float(f) => f,
        _ => return None,
    };
    if factor < 0.0 {
        return Some(format!(
            "factor MultipleOf declared for {path} must be positive: {}",
            go_float(factor)
        ));
    }
    let mult = if factor < 1.0 {
        1.0 / factor * data
    } else {
        data / factor
    };
    (!is_json_integer(mult)).then(|| {
        format!(
            "{path} in body should be a multiple of {}",
            go_float(factor)
        )
    })
}

fn bound(kind: Kind, limit: f64, exclusive: bool, path: &str, upper: bool) -> Option<String> {
    let (fails, shown) = match kind {
        Kind::Int(i) => {
            let l = limit as i64;
            let fails = match (upper, exclusive) {
                (true, false) => i > l,
                (true, true) => i >= l,
                (false, false) => i < l,
                (false, true) => i <= l,
            };
            (fails, l.to_string())
        }
        Kind::Float(f) => {
            let fails = match (upper, exclusive) {
                (true, false) => f > limit,
                (true, true) => f >= limit,
                (false, false) => f < limit,
                (false, true) => f <= limit,
            };
            (fails, go_float(limit))
        }
        _ => (false, String::new()),
    };
    let relation = match (upper, exclusive) {
        (true, false) => "less than or equal to",
        (true, true) => "less than",
        (false, false) => "greater than or equal to",
        (false, true) => "greater than",
    };
    fails.then(|| format!("{path} in body should be {relation} {shown}"))
}

fn array_checks(node: &Node, items: &[Value], path: &str, old: Option<&Value>) -> Outcome {
    let mut out = Outcome::default();
    if let Some(item_schema) = &node.items {
        let old_items = correlate_items(node, old);
        for (i, item) in items.iter().enumerate() {
            let old_item = old_items.as_ref().and_then(|o| o.find(node, item));
            out.merge(validate(
                item_schema,
                item,
                &format!("{path}[{i}]"),
                old_item,
            ));
        }
    }
    let size = items.len() as i64;
    if let Some(min) = node.min_items.filter(|m| size < *m) {
        let message = format!("{path} in body should have at least {min} items");
        out.push(Problem::new(Code::Other, path, Some(size.into()), message));
    }
    if let Some(max) = node.max_items.filter(|m| size > *m) {
        let message = format!("{path} in body should have at most {max} items");
        let code = Code::TooMany(size, max);
        out.push(Problem::new(code, path, Some(size.into()), message));
    }
    if node.unique_items && has_duplicates(items) {
        let message = format!("{path} in body shouldn't contain duplicates");
        out.push(Problem::new(Code::Other, path, None, message));
    }
    out.count += 1;
    out
}

/// reflect.DeepEqual between any two items, in one pass: each item's
/// canonical form (sorted keys, integers and floats apart) hashed.
fn has_duplicates(items: &[Value]) -> bool {
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    items.iter().any(|item| {
        let mut key = String::new();
        deep_key(item, &mut key);
        !seen.insert(key)
    })
}

fn deep_key(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for k in keys {
                out.push_str(&Value::from(k.as_str()).to_string());
                out.push(':');
                deep_key(&map[k], out);
                out.push(',');
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                deep_key(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Number(n) if n.as_i64().is_some() => out.push_str(&format!("i{n}")),
        Value::Number(n) => out.push_str(&format!("f{n}")),
        other => out.push_str(&other.to_string()),
    }
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

fn object_checks(
    node: &Node,
    map: &Map<String, Value>,
    path: &str,
    old: Option<&Value>,
) -> Outcome {
    let keys = map.len() as i64;
    if let Some(min) = node.min_properties.filter(|m| keys < *m) {
        let message = format!("{path} in body should have at least {min} properties");
        return Outcome::failed(Problem::new(Code::Other, path, Some(keys.into()), message));
    }
    if let Some(max) = node.max_properties.filter(|m| keys > *m) {
        let message = format!("{path} in body should have at most {max} properties");
        let code = Code::TooMany(keys, max);
        return Outcome::failed(Problem::new(code, path, Some(keys.into()), message));
    }
    let mut out = Outcome::default();
    let old_of = |key: &str| {
        let type_meta = path.is_empty() && (key == "kind" || key == "apiVersion");
        old.and_then(Value::as_object)
            .and_then(|o| o.get(key))
            .filter(|_| !type_meta)
    };
    unknown_keys(node, map, path, &old_of, &mut out);
    for (name, prop) in &node.properties {
        if let Some(v) = map.get(name) {
            let child = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            out.merge(validate(prop, v, &child, old_of(name)));
        }
    }
    for key in &node.required {
        if !map.contains_key(key) {
            let name = format!("{path}.{key}");
            let message = format!("{name} in body is required");
            out.push(Problem::new(Code::Required, &name, None, message));
        }
    }
    out
}

/// Keys outside `properties`: forbidden by `additionalProperties: false`,
/// validated by an additionalProperties schema, otherwise allowed.
fn unknown_keys<'a>(
    node: &Node,
    map: &Map<String, Value>,
    path: &str,
    old_of: &dyn Fn(&str) -> Option<&'a Value>,
    out: &mut Outcome,
) {
    let unknown = map
        .iter()
        .filter(|(k, _)| !node.properties.contains_key(*k));
    match &node.additional {
        Some(Additional::Allows(false)) => {
            for (key, _) in unknown {
                let message = format!("{path}.{key} in body is a forbidden property");
                out.push(Problem::new(
                    Code::Other,
                    path,
                    Some(key.as_str().into()),
                    message,
                ));
            }
        }
        Some(Additional::Schema(schema)) => {
            for (key, value) in unknown {
                out.merge(validate(
                    schema,
                    value,
                    &format!("{path}.{key}"),
                    old_of(key),
                ));
            }
        }
        _ => {}
    }
}

/// The old items of a list-type map, by their keys; other lists do not
/// correlate their items.
struct OldItems<'a> {
    by_key: HashMap<String, &'a Value>,
}

impl<'a> OldItems<'a> {
    fn find(&self, node: &Node, item: &Value) -> Option<&'a Value> {
        self.by_key.get(&list_map_key(node, item)).copied()
    }
}

fn correlate_items<'a>(node: &Node, old: Option<&'a Value>) -> Option<OldItems<'a>> {
    if node.list_type != Some(ListType::Map) {
        return None;
    }
    let old_items = old?.as_array()?;
    let by_key = old_items
        .iter()
        .map(|item| (list_map_key(node, item), item))
        .collect();
    Some(OldItems { by_key })
}

/// An item's key fields, compared as JSON.
fn list_map_key(node: &Node, item: &Value) -> String {
    let keys: Vec<Value> = node
        .list_map_keys
        .iter()
        .map(|k| item.get(k).cloned().unwrap_or(Value::Null))
        .collect();
    Value::Array(keys).to_string()
}
