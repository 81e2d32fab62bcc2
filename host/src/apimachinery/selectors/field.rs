//! Field selectors: the `fieldSelector` query grammar (`f=v`, `f==v`,
//! `f!=v`, comma = AND, `\` escapes in values) from
//! k8s.io/apimachinery/pkg/fields, the per-resource support check, and
//! matching against served objects.

use std::fmt;

use serde_json::Value;

use super::field_rules::FieldLabels;
use super::field_values::{field_value, path_value};

/// `=`/`==` (must equal) or `!=` (must differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldOp {
    Equals,
    NotEquals,
}

/// One `field <op> value` term; `value` is unescaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldTerm {
    pub field: String,
    pub op: FieldOp,
    pub value: String,
}

/// A conjunction of terms, in kube's order (terms sorted as raw text).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct FieldSelector {
    terms: Vec<FieldTerm>,
}

/// Splits on commas that are not backslash-escaped (escapes are kept).
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&s[start..i]);
            start = i + 1;
        }
    }
    terms.push(&s[start..]);
    terms
}

/// Splits at the first operator occurrence, trying `!=`, `==`, `=` at each
/// position.
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for op in ["!=", "==", "="] {
            if let Some(value) = rest.strip_prefix(op) {
                return Some((&term[..i], op, value));
            }
        }
    }
    None
}

/// kube's `UnescapeValue`, with its (odd but exact) error texts.
fn unescape_value(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                ));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescapedRune character in value: {}",
                    c as u32
                ))
            }
            c => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

/// Parses a `fieldSelector` query parameter.
pub fn parse_field_selector(s: &str) -> Result<FieldSelector, String> {
    let mut parts = split_terms(s);
    parts.sort_unstable();
    let mut terms = Vec::new();
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        let Some((field, op, raw)) = split_term(part) else {
            return Err(format!(
                "invalid selector: '{s}'; can't understand '{part}'"
            ));
        };
        let op = if op == "!=" {
            FieldOp::NotEquals
        } else {
            FieldOp::Equals
        };
        terms.push(FieldTerm {
            field: field.to_string(),
            op,
            value: unescape_value(raw)?,
        });
    }
    Ok(FieldSelector { terms })
}

/// Checks every label against the resource's field label conversion; the
/// error is kube's message (to be returned as 400 BadRequest).
pub fn check_fields_supported(sel: &FieldSelector, labels: &FieldLabels) -> Result<(), String> {
    sel.terms
        .iter()
        .try_for_each(|t| labels.convert(&t.field).map(|_| ()))
}

/// The same check for a custom resource: `metadata.name`, then
/// `metadata.namespace` when namespaced, then the CRD's `selectableFields`
/// (given without the leading dot, e.g. `spec.color`).
pub fn check_custom_fields_supported(
    sel: &FieldSelector,
    cluster_scoped: bool,
    selectable: &[String],
) -> Result<(), String> {
    for t in &sel.terms {
        let f = t.field.as_str();
        let ok = f == "metadata.name"
            || (!cluster_scoped && f == "metadata.namespace")
            || selectable.iter().any(|s| s.trim_start_matches('.') == f);
        if !ok {
            return Err(format!("field label not supported: {f}"));
        }
    }
    Ok(())
}

impl FieldSelector {
    pub fn terms(&self) -> &[FieldTerm] {
        &self.terms
    }

    /// True when the selector has no terms (matches everything).
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether `obj` (served form of a kind with these field labels)
    /// satisfies every term.
    pub fn matches(&self, labels: &FieldLabels, obj: &Value) -> bool {
        self.terms.iter().all(|t| {
            let have = field_value(labels, obj, labels.canonical(&t.field));
            (have == t.value) == (t.op == FieldOp::Equals)
        })
    }

    /// Matching for custom resources: labels are read as JSON paths.
    pub fn matches_custom(&self, obj: &Value) -> bool {
        self.terms.iter().all(|t| {
            let have = path_value(obj, &t.field);
            (have == t.value) == (t.op == FieldOp::Equals)
        })
    }

    fn requires_exact(&self, field: &str) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| t.field == field && t.op == FieldOp::Equals)
            .map(|t| t.value.as_str())
    }

    /// The name an `metadata.name=` term pins, if any.
    pub fn exact_name(&self) -> Option<&str> {
        self.requires_exact("metadata.name")
    }

    /// The namespace a `metadata.namespace=` term pins, if any.
    pub fn exact_namespace(&self) -> Option<&str> {
        self.requires_exact("metadata.namespace")
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .terms
            .iter()
            .map(|t| match t.op {
                FieldOp::Equals => format!("{}={}", t.field, t.value),
                FieldOp::NotEquals => format!("{}!={}", t.field, t.value),
            })
            .collect();
        write!(f, "{}", parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::selectors::field_labels_for;
    use serde_json::json;

    #[test]
    fn pod_phase_selection() {
        let sel = parse_field_selector("status.phase=Running").unwrap();
        check_fields_supported(&sel, field_labels_for("", "pods")).unwrap();
        let running = json!({"status": {"phase": "Running"}});
        let pending = json!({"status": {"phase": "Pending"}});
        assert!(sel.matches(field_labels_for("", "pods"), &running));
        assert!(!sel.matches(field_labels_for("", "pods"), &pending));
        let not = parse_field_selector("status.phase!=Running").unwrap();
        assert!(not.matches(field_labels_for("", "pods"), &pending));
    }

    #[test]
    fn missing_values_compare_as_empty() {
        let sel = parse_field_selector("spec.nodeName=").unwrap();
        assert!(sel.matches(field_labels_for("", "pods"), &json!({"spec": {}})));
        assert!(!sel.matches(
            field_labels_for("", "pods"),
            &json!({"spec": {"nodeName": "n1"}})
        ));
        let legacy = parse_field_selector("spec.host==n1").unwrap();
        assert!(legacy.matches(
            field_labels_for("", "pods"),
            &json!({"spec": {"nodeName": "n1"}})
        ));
    }

    #[test]
    fn unsupported_field_messages() {
        let sel = parse_field_selector("spec.foo=bar").unwrap();
        assert_eq!(
            check_fields_supported(&sel, field_labels_for("", "pods")).unwrap_err(),
            "field label not supported: spec.foo"
        );
        assert_eq!(
            check_fields_supported(&sel, field_labels_for("", "configmaps")).unwrap_err(),
            "\"spec.foo\" is not a known field selector: only \"metadata.name\", \
             \"metadata.namespace\""
        );
        let ns = parse_field_selector("metadata.namespace=x").unwrap();
        assert!(check_fields_supported(&ns, field_labels_for("", "nodes")).is_err());
        assert!(check_fields_supported(&ns, field_labels_for("", "secrets")).is_ok());
    }

    #[test]
    fn parse_errors_and_escapes() {
        assert_eq!(
            parse_field_selector("a=b,c").unwrap_err(),
            "invalid selector: 'a=b,c'; can't understand 'c'"
        );
        let sel = parse_field_selector(r"metadata.name=a\,b\=c\\d").unwrap();
        assert_eq!(sel.exact_name(), Some(r"a,b=c\d"));
        assert_eq!(
            parse_field_selector(r"a=b\x").unwrap_err(),
            "invalid field selector: invalid escape sequence: \\x"
        );
        assert_eq!(
            parse_field_selector("a==b=c").unwrap_err(),
            "invalid field selector: unescapedRune character in value: 61"
        );
        assert!(parse_field_selector("").unwrap().is_empty());
    }

    #[test]
    fn exact_matches_and_order() {
        let sel = parse_field_selector("metadata.namespace=ns1,metadata.name!=x").unwrap();
        assert_eq!(sel.exact_namespace(), Some("ns1"));
        assert_eq!(sel.exact_name(), None);
        assert_eq!(sel.to_string(), "metadata.name!=x,metadata.namespace=ns1");
    }

    #[test]
    fn booleans_and_custom_resources() {
        let sel = parse_field_selector("spec.unschedulable=false").unwrap();
        assert!(sel.matches(field_labels_for("", "nodes"), &json!({"spec": {}})));
        let crd = parse_field_selector("spec.color=red").unwrap();
        let fields = vec![".spec.color".to_string()];
        assert!(check_custom_fields_supported(&crd, false, &fields).is_ok());
        assert!(check_custom_fields_supported(&crd, false, &[]).is_err());
        assert!(crd.matches_custom(&json!({"spec": {"color": "red"}})));
    }
}
