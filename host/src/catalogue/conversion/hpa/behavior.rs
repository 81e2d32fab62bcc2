//! `spec.behavior` in v1's `autoscaling.alpha.kubernetes.io/behavior`
//! annotation: kube encodes its internal type there, which has no JSON tags,
//! so the keys are Go's field names (`ScaleUp`, `StabilizationWindowSeconds`)
//! and an unset pointer is `null`; reading it back, Go matches keys without
//! regard to case.

use serde_json::{Map, Value};

/// (v2 key, internal key) of HorizontalPodAutoscalerBehavior.
const BEHAVIOR: [(&str, &str); 2] = [("scaleUp", "ScaleUp"), ("scaleDown", "ScaleDown")];
/// ... of HPAScalingRules.
const RULES: [(&str, &str); 3] = [
    ("stabilizationWindowSeconds", "StabilizationWindowSeconds"),
    ("selectPolicy", "SelectPolicy"),
    ("policies", "Policies"),
];
/// ... of HPAScalingPolicy (not pointers: never null).
const POLICY: [(&str, &str); 3] = [
    ("type", "Type"),
    ("value", "Value"),
    ("periodSeconds", "PeriodSeconds"),
];

/// `fields` of `from` under their other name (`to_go`: v2 → internal).
fn renamed(
    from: &Value,
    fields: &[(&str, &str)],
    to_go: bool,
    inner: fn(&Value, bool) -> Value,
) -> Value {
    let mut out = Map::new();
    for (v2, go) in fields {
        let (key, value) = match to_go {
            true => (go, from.get(*v2)),
            false => (v2, find(from, go)),
        };
        let value = value.map(|v| inner(v, to_go)).unwrap_or(Value::Null);
        if to_go || !value.is_null() {
            out.insert(key.to_string(), value);
        }
    }
    Value::Object(out)
}

/// The value under `key`, matched as Go's decoder does (case-insensitively).
fn find<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    let map = obj.as_object()?;
    map.get(key).or_else(|| {
        map.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    })
}

fn same(value: &Value, _: bool) -> Value {
    value.clone()
}

fn policy(value: &Value, to_go: bool) -> Value {
    renamed(value, &POLICY, to_go, same)
}

fn policies(value: &Value, to_go: bool) -> Value {
    match value {
        Value::Array(all) => all.iter().map(|p| policy(p, to_go)).collect(),
        other => other.clone(),
    }
}

fn rules(value: &Value, to_go: bool) -> Value {
    if value.is_null() {
        return Value::Null;
    }
    let mut out = Map::new();
    for (v2, go) in RULES {
        let (key, found) = match to_go {
            true => (go, value.get(v2)),
            false => (v2, find(value, go)),
        };
        let converted = match (v2, found) {
            ("policies", Some(list)) => policies(list, to_go),
            (_, Some(other)) => other.clone(),
            (_, None) => Value::Null,
        };
        if to_go || !converted.is_null() {
            out.insert(key.to_string(), converted);
        }
    }
    Value::Object(out)
}

/// The v2 behavior as the annotation holds it.
pub(super) fn to_internal(behavior: &Value) -> Value {
    renamed(behavior, &BEHAVIOR, true, rules)
}

/// The annotation's behavior in v2's form; None when it sets neither rule
/// (kube then leaves spec.behavior unset).
pub(super) fn to_v2(annotation: &Value) -> Option<Value> {
    let behavior = renamed(annotation, &BEHAVIOR, false, rules);
    match behavior.as_object() {
        Some(fields) if !fields.is_empty() => Some(behavior),
        _ => None,
    }
}
