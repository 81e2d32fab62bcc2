//! Label selectors: the parsed form of a `labelSelector` query string or of a
//! `metav1.LabelSelector` object, and matching against an object's labels
//! (k8s.io/apimachinery/pkg/labels semantics).

use std::fmt;

use serde_json::{Map, Value};

use super::label_parse;
use super::validation::invalid;
use kube_rules::gofmt::quote as go_quote;
use kube_rules::{label_value as label_value_errors, qualified_name as qualified_name_errors};

/// A requirement's operator, as in `k8s.io/apimachinery/pkg/selection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    In,
    NotIn,
    Equals,
    DoubleEquals,
    NotEquals,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

/// One `key <op> values` term of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

/// A conjunction of requirements. `nothing` is the selector built from a
/// null `metav1.LabelSelector`: it matches no object at all.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
    nothing: bool,
}

impl Requirement {
    /// Builds a requirement after kube's `NewRequirement` validation; the
    /// error is kube's aggregated field-error message.
    pub fn new(key: &str, operator: Operator, values: Vec<String>) -> Result<Self, String> {
        let mut errs = Vec::new();
        let key_errs = qualified_name_errors(key);
        if !key_errs.is_empty() {
            errs.push(invalid("key", &go_quote(key), &key_errs.join("; ")));
        }
        errs.extend(operator_arity_errors(operator, &values));
        for (i, v) in values.iter().enumerate() {
            let v_errs = label_value_errors(v);
            if !v_errs.is_empty() {
                let path = format!("values[{i}][{key}]");
                errs.push(invalid(&path, &go_quote(v), &v_errs.join("; ")));
            }
        }
        match Some(kube_rules::gofmt::aggregate(&errs)).filter(|a| !a.is_empty()) {
            Some(e) => Err(e),
            None => Ok(Requirement {
                key: key.to_string(),
                operator,
                values,
            }),
        }
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    pub fn operator(&self) -> Operator {
        self.operator
    }

    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Whether the labels satisfy this requirement (missing key semantics
    /// follow kube: `!=`/`notin` match, `=`/`in`/`>`/`<` do not).
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        let value = labels.get(&self.key).map(|v| v.as_str().unwrap_or(""));
        match (self.operator, value) {
            (Operator::Exists, v) => v.is_some(),
            (Operator::DoesNotExist, v) => v.is_none(),
            (Operator::In | Operator::Equals | Operator::DoubleEquals, Some(v)) => self.has(v),
            (Operator::NotIn | Operator::NotEquals, Some(v)) => !self.has(v),
            (Operator::NotIn | Operator::NotEquals, None) => true,
            (Operator::GreaterThan | Operator::LessThan, Some(v)) => self.compare(v),
            _ => false,
        }
    }

    fn has(&self, v: &str) -> bool {
        self.values.iter().any(|x| x == v)
    }

    fn compare(&self, v: &str) -> bool {
        let (Ok(have), [want]) = (v.parse::<i64>(), self.values.as_slice()) else {
            return false;
        };
        match (want.parse::<i64>(), self.operator) {
            (Ok(w), Operator::GreaterThan) => have > w,
            (Ok(w), Operator::LessThan) => have < w,
            _ => false,
        }
    }
}

/// The operator-specific checks of `NewRequirement`.
fn operator_arity_errors(op: Operator, values: &[String]) -> Vec<String> {
    let shown = || serde_json::to_string(values).unwrap_or_default();
    let shown_or_null = || {
        if values.is_empty() {
            "null".to_string()
        } else {
            shown()
        }
    };
    match op {
        Operator::In | Operator::NotIn if values.is_empty() => vec![invalid(
            "values",
            &shown_or_null(),
            "for 'in', 'notin' operators, values set can't be empty",
        )],
        Operator::Equals | Operator::DoubleEquals | Operator::NotEquals if values.len() != 1 => {
            vec![invalid(
                "values",
                &shown_or_null(),
                "exact-match compatibility requires one single value",
            )]
        }
        Operator::Exists | Operator::DoesNotExist if !values.is_empty() => vec![invalid(
            "values",
            &shown(),
            "values set must be empty for exists and does not exist",
        )],
        Operator::GreaterThan | Operator::LessThan => integer_value_errors(values),
        _ => Vec::new(),
    }
}

fn integer_value_errors(values: &[String]) -> Vec<String> {
    let mut errs = Vec::new();
    if values.len() != 1 {
        errs.push(invalid(
            "values",
            &serde_json::to_string(values).unwrap_or_default(),
            "for 'Gt', 'Lt' operators, exactly one value is required",
        ));
    }
    for (i, v) in values.iter().enumerate() {
        if v.parse::<i64>().is_err() {
            errs.push(invalid(
                &format!("values[{i}]"),
                &go_quote(v),
                "for 'Gt', 'Lt' operators, the value must be an integer",
            ));
        }
    }
    errs
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.operator {
            Operator::DoesNotExist => return write!(f, "!{}", self.key),
            Operator::Exists => return write!(f, "{}", self.key),
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
            Operator::In => " in ",
            Operator::NotIn => " notin ",
        };
        let mut values = self.values.clone();
        values.sort();
        let joined = values.join(",");
        match self.operator {
            Operator::In | Operator::NotIn => write!(f, "{}{op}({joined})", self.key),
            _ => write!(f, "{}{op}{joined}", self.key),
        }
    }
}

impl LabelSelector {
    /// The selector that matches every object.
    pub fn everything() -> Self {
        LabelSelector::default()
    }

    /// The selector that matches no object (a null `metav1.LabelSelector`).
    pub fn nothing() -> Self {
        LabelSelector {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// Parses a `labelSelector` query string (kube's grammar and messages).
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut requirements = label_parse::parse(s)?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector {
            requirements,
            nothing: false,
        })
    }

    /// Builds a selector from already-validated requirements (sorted by key).
    pub fn from_requirements(mut requirements: Vec<Requirement>) -> Self {
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        LabelSelector {
            requirements,
            nothing: false,
        }
    }

    /// Whether the given label map satisfies every requirement.
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Matches against `metadata.labels` of an object (absent = no labels).
    pub fn matches_object(&self, obj: &Value) -> bool {
        let empty = Map::new();
        let labels = obj
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        self.matches(labels)
    }

    /// True when the selector does not restrict anything.
    pub fn is_empty(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// True for the match-nothing selector.
    pub fn is_nothing(&self) -> bool {
        self.nothing
    }

    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// kube's `RequiresExactMatch`: the single value a key must have, if any.
    pub fn requires_exact_match(&self, key: &str) -> Option<&str> {
        let r = self.requirements.iter().find(|r| r.key == key)?;
        match (r.operator, r.values.as_slice()) {
            (Operator::Equals | Operator::DoubleEquals | Operator::In, [v]) => Some(v),
            _ => None,
        }
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.requirements.iter().map(|r| r.to_string()).collect();
        write!(f, "{}", parts.join(","))
    }
}

/// Parses a `labelSelector` query parameter.
pub fn parse_label_selector(s: &str) -> Result<LabelSelector, String> {
    LabelSelector::parse(s)
}

/// kube's `LabelSelectorAsSelector` for a `metav1.LabelSelector` JSON value:
/// null matches nothing, `{}` matches everything.
pub fn from_label_selector_object(v: &Value) -> Result<LabelSelector, String> {
    let obj = match v {
        Value::Null => return Ok(LabelSelector::nothing()),
        Value::Object(o) => o,
        _ => return Err("label selector must be an object".to_string()),
    };
    let mut requirements = match_labels_requirements(obj.get("matchLabels"))?;
    requirements.extend(match_expressions_requirements(obj.get("matchExpressions"))?);
    Ok(LabelSelector::from_requirements(requirements))
}

fn match_labels_requirements(v: Option<&Value>) -> Result<Vec<Requirement>, String> {
    let Some(Value::Object(map)) = v else {
        return Ok(Vec::new());
    };
    map.iter()
        .map(|(k, val)| {
            let s = val
                .as_str()
                .ok_or_else(|| format!("matchLabels value for {} must be a string", go_quote(k)))?;
            Requirement::new(k, Operator::Equals, vec![s.to_string()])
        })
        .collect()
}

fn match_expressions_requirements(v: Option<&Value>) -> Result<Vec<Requirement>, String> {
    let Some(Value::Array(items)) = v else {
        return Ok(Vec::new());
    };
    items.iter().map(expression_requirement).collect()
}

fn expression_requirement(expr: &Value) -> Result<Requirement, String> {
    let key = expr.get("key").and_then(Value::as_str).unwrap_or("");
    let op_name = expr.get("operator").and_then(Value::as_str).unwrap_or("");
    let op = match op_name {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        other => {
            return Err(format!(
                "{} is not a valid label selector operator",
                go_quote(other)
            ))
        }
    };
    let values = expr
        .get("values")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    Requirement::new(key, op, values)
}

/// kube's `labels.FormatLabels`: `k=v` pairs sorted by key, or `<none>`.
pub fn format_labels(labels: Option<&Map<String, Value>>) -> String {
    let mut pairs: Vec<(&String, &str)> = labels
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k, v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    if pairs.is_empty() {
        return "<none>".to_string();
    }
    pairs.sort();
    let parts: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn set_based_and_negation() {
        let sel = parse_label_selector("env in (a,b),!beta").unwrap();
        assert!(sel.matches(&labels(json!({"env": "a"}))));
        assert!(sel.matches(&labels(json!({"env": "b", "tier": "x"}))));
        assert!(!sel.matches(&labels(json!({"env": "c"}))));
        assert!(!sel.matches(&labels(json!({"env": "a", "beta": ""}))));
        assert!(!sel.matches(&Map::new()));
    }

    #[test]
    fn equality_forms() {
        let l = labels(json!({"a": "b"}));
        assert!(parse_label_selector("a=b").unwrap().matches(&l));
        assert!(parse_label_selector("a==b").unwrap().matches(&l));
        assert!(!parse_label_selector("a!=b").unwrap().matches(&l));
        assert!(parse_label_selector("x!=y").unwrap().matches(&l));
        assert!(parse_label_selector("a notin (c)").unwrap().matches(&l));
        assert!(parse_label_selector("  a ,  x notin ( y )  ")
            .unwrap()
            .matches(&l));
        assert!(parse_label_selector("").unwrap().is_empty());
    }

    #[test]
    fn numeric_comparisons() {
        let l = labels(json!({"n": "5"}));
        assert!(parse_label_selector("n>3").unwrap().matches(&l));
        assert!(!parse_label_selector("n<3").unwrap().matches(&l));
        assert!(!parse_label_selector("m>3").unwrap().matches(&l));
    }

    #[test]
    fn string_form_is_sorted_like_kube() {
        let sel = parse_label_selector("z=1,a in (y,x),!b,c").unwrap();
        assert_eq!(sel.to_string(), "a in (x,y),!b,c,z=1");
    }

    #[test]
    fn metav1_selector_object() {
        let sel = from_label_selector_object(&json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["fe", "be"]},
                {"key": "canary", "operator": "DoesNotExist"}
            ]
        }))
        .unwrap();
        assert_eq!(sel.to_string(), "app=web,!canary,tier in (be,fe)");
        assert!(sel.matches(&labels(json!({"app": "web", "tier": "fe"}))));
        assert!(!sel.matches(&labels(json!({"app": "web", "tier": "fe", "canary": "1"}))));
        assert!(from_label_selector_object(&json!({}))
            .unwrap()
            .matches(&Map::new()));
        assert!(!from_label_selector_object(&Value::Null)
            .unwrap()
            .matches(&Map::new()));
    }

    #[test]
    fn metav1_selector_errors() {
        let bad_op = json!({"matchExpressions": [{"key": "a", "operator": "Foo"}]});
        assert_eq!(
            from_label_selector_object(&bad_op).unwrap_err(),
            "\"Foo\" is not a valid label selector operator"
        );
        let empty_in = json!({"matchExpressions": [{"key": "a", "operator": "In"}]});
        assert_eq!(
            from_label_selector_object(&empty_in).unwrap_err(),
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
        );
        let bad_key = json!({"matchLabels": {"a b": "c"}});
        assert!(from_label_selector_object(&bad_key)
            .unwrap_err()
            .starts_with("key: Invalid value: \"a b\": name part must consist"));
    }

    #[test]
    fn exact_match_and_object_labels() {
        let sel = parse_label_selector("app=web,env in (prod)").unwrap();
        assert_eq!(sel.requires_exact_match("app"), Some("web"));
        assert_eq!(sel.requires_exact_match("env"), Some("prod"));
        assert_eq!(sel.requires_exact_match("x"), None);
        assert!(!sel.matches_object(&json!({"metadata": {}})));
        assert!(sel.matches_object(&json!({"metadata": {"labels": {"app": "web", "env": "prod"}}})));
    }

    #[test]
    fn format_labels_like_kube() {
        assert_eq!(format_labels(None), "<none>");
        let l = labels(json!({"b": "2", "a": "1"}));
        assert_eq!(format_labels(Some(&l)), "a=1,b=2");
    }
}
