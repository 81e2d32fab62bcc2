//! `metav1.LabelSelector`s of workloads: checking their expressions
//! (`ValidateLabelSelectorRequirement`), matching them against labels
//! (`LabelSelectorAsSelector(...).Matches`) and printing them
//! (`LabelSelectorAsSelector(...).String()`).

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, list, text};

/// The problems of each `matchExpressions` entry; the bool is false when
/// the selector cannot be turned into a selector at all.
pub fn check(selector: &Value, field: &str) -> (Vec<Cause>, bool) {
    validate(selector, field, false)
}

/// `ValidateLabelSelector`, optionally allowing invalid label values in
/// expressions; the bool as in [`check`].
pub fn validate(selector: &Value, field: &str, allow_invalid_values: bool) -> (Vec<Cause>, bool) {
    let mut causes = labels(selector.get("matchLabels"), &format!("{field}.matchLabels"));
    let mut usable = true;
    for (i, req) in list(selector, "matchExpressions").iter().enumerate() {
        let at = format!("{field}.matchExpressions[{i}]");
        if let Some(cause) = requirement_problem(req, &at) {
            causes.push(cause);
            usable = false;
        }
        causes.extend(requirement_names(req, &at, allow_invalid_values));
    }
    (causes, usable)
}

/// `ValidateLabels`: each key a qualified name, each value a label value.
pub fn labels(map: Option<&Value>, field: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (key, value) in map.and_then(Value::as_object).into_iter().flatten() {
        common::invalid_each(&mut causes, field, key, kube_rules::qualified_name(key));
        let value = value.as_str().unwrap_or_default();
        common::invalid_each(&mut causes, field, value, kube_rules::label_value(value));
    }
    causes
}

/// A requirement's key and values (`ValidateLabelSelectorRequirement`).
fn requirement_names(req: &Value, at: &str, allow_invalid_values: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    let key = text(req, "key");
    let field = format!("{at}.key");
    common::invalid_each(&mut causes, &field, key, kube_rules::qualified_name(key));
    if allow_invalid_values {
        return causes;
    }
    for (i, value) in list(req, "values").iter().enumerate() {
        let value = value.as_str().unwrap_or_default();
        let field = format!("{at}.values[{i}]");
        common::invalid_each(&mut causes, &field, value, kube_rules::label_value(value));
    }
    causes
}

fn requirement_problem(req: &Value, at: &str) -> Option<Cause> {
    let has_values = !list(req, "values").is_empty();
    match text(req, "operator") {
        "In" | "NotIn" if !has_values => Some(common::required(
            &format!("{at}.values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if has_values => Some(common::forbidden(
            &format!("{at}.values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" => None,
        other => Some(common::invalid_str(
            &format!("{at}.operator"),
            other,
            "not a valid selector operator",
        )),
    }
}

/// True when the selector has neither matchLabels nor matchExpressions.
pub fn is_empty(selector: &Value) -> bool {
    let labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .map_or(0, |m| m.len());
    labels + list(selector, "matchExpressions").len() == 0
}

/// Whether `labels` (a JSON map, or nothing) satisfies the selector.
pub fn matches(selector: &Value, labels: Option<&Value>) -> bool {
    let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
    let by_labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k) == v.as_str());
    by_labels
        && list(selector, "matchExpressions")
            .iter()
            .all(|req| requirement_matches(req, label(text(req, "key"))))
}

fn requirement_matches(req: &Value, value: Option<&str>) -> bool {
    let listed = |v: &str| list(req, "values").iter().any(|x| x.as_str() == Some(v));
    match text(req, "operator") {
        "In" => value.is_some_and(listed),
        "NotIn" => !value.is_some_and(listed),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        _ => false,
    }
}

/// Whether every key=value of a plain map selector (RC) is among `labels`.
pub fn map_matches(selector: &Value, labels: Option<&Value>) -> bool {
    selector.as_object().into_iter().flatten().all(|(k, v)| {
        labels
            .and_then(|l| l.get(k))
            .is_some_and(|have| have.as_str() == v.as_str())
    })
}

/// `LabelSelectorAsSelector(selector).String()`: requirements sorted by
/// key, values sorted (`app=web,tier notin (db)`); "" for null (matches
/// nothing); `None` when the selector cannot be made a selector.
pub fn to_text(selector: &Value) -> Option<String> {
    let obj = match selector {
        Value::Null => return Some(String::new()),
        Value::Object(o) => o,
        _ => return None,
    };
    let mut parts: Vec<(&str, String)> = Vec::new();
    for (key, value) in obj
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let value = value.as_str().filter(|_| valid_key(key))?;
        parts.push((key, format!("{key}={value}")));
    }
    for req in list(selector, "matchExpressions") {
        parts.push((text(req, "key"), requirement_text(req)?));
    }
    parts.sort_by(|a, b| a.0.cmp(b.0));
    let texts: Vec<String> = parts.into_iter().map(|(_, t)| t).collect();
    Some(texts.join(","))
}

fn valid_key(key: &str) -> bool {
    kube_rules::qualified_name(key).is_empty()
}

/// One `matchExpressions` entry as kube prints its requirement.
fn requirement_text(req: &Value) -> Option<String> {
    let key = Some(text(req, "key")).filter(|k| valid_key(k))?;
    let mut values: Vec<&str> = list(req, "values")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    values.sort_unstable();
    match (text(req, "operator"), values.is_empty()) {
        ("In", false) => Some(format!("{key} in ({})", values.join(","))),
        ("NotIn", false) => Some(format!("{key} notin ({})", values.join(","))),
        ("Exists", true) => Some(key.to_string()),
        ("DoesNotExist", true) => Some(format!("!{key}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn match_labels_and_expressions() {
        let sel = json!({"matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]});
        assert!(matches(&sel, Some(&json!({"app": "web"}))));
        assert!(!matches(&sel, Some(&json!({"app": "web", "tier": "db"}))));
        assert!(!matches(&sel, None));
        let exists = json!({"matchExpressions": [{"key": "a", "operator": "Exists"}]});
        assert!(matches(&exists, Some(&json!({"a": ""}))));
    }

    #[test]
    fn bad_expressions_are_reported() {
        let sel = json!({"matchExpressions": [
            {"key": "a", "operator": "In"},
            {"key": "b", "operator": "Near", "values": ["x"]}]});
        let (causes, usable) = check(&sel, "spec.selector");
        assert!(!usable);
        assert_eq!(causes[0].field, "spec.selector.matchExpressions[0].values");
        assert_eq!(
            causes[0].message,
            "Required value: must be specified when `operator` is 'In' or 'NotIn'"
        );
        assert_eq!(
            causes[1].message,
            "Invalid value: \"Near\": not a valid selector operator"
        );
    }

    #[test]
    fn printed_as_kube_prints_a_selector() {
        let sel = json!({"matchLabels": {"tier": "web", "app": "x"},
            "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod", "dev"]},
                                 {"key": "zone", "operator": "DoesNotExist"}]});
        assert_eq!(
            to_text(&sel).as_deref(),
            Some("app=x,env notin (dev,prod),tier=web,!zone")
        );
        assert_eq!(to_text(&Value::Null).as_deref(), Some(""));
        assert_eq!(to_text(&json!({})).as_deref(), Some(""));
        let bad = json!({"matchExpressions": [{"key": "a", "operator": "In"}]});
        assert_eq!(to_text(&bad), None);
        assert_eq!(to_text(&json!({"matchLabels": {"a": 1}})), None);
        assert_eq!(to_text(&json!("app=x")), None);
    }
}
