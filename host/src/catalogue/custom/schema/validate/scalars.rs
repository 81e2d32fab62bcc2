//! String and number checks: maxLength/minLength (in runes) and pattern;
//! multipleOf, minimum and maximum, with Go's int64 and float64 paths.

use super::{is_json_integer, Kind, Outcome};
use crate::catalogue::custom::schema::node::Node;
use crate::catalogue::custom::schema::problems::{Code, Problem};
use kube_rules::gofmt::float as go_float;
use serde_json::Value;

/// maxLength, minLength (in runes), pattern: the first failure only.
pub(super) fn string_checks(node: &Node, s: &str, data: &Value, path: &str) -> Outcome {
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
pub(super) fn number_checks(node: &Node, kind: Kind, data: &Value, path: &str) -> Outcome {
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
