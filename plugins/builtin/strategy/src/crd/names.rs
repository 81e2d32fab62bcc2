//! `ValidateCustomResourceDefinitionNames` (spec.names and
//! status.acceptedNames) and `validation.IsDNS1035Label`.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, max_len_error, regex_error, text};

/// `validation.IsDNS1035Label`: the problems with `value`, if any.
pub fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    let inner = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    let ok = value.starts_with(|c: char| c.is_ascii_lowercase())
        && value.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && value.chars().all(inner);
    if !ok {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', \
             start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// The causes for a names object at `at` ("spec.names", "status.acceptedNames").
pub fn validate(names: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for key in ["plural", "singular"] {
        label(&mut causes, &format!("{at}.{key}"), text(names, key));
    }
    let mixed = "may have mixed case, but should otherwise match: ";
    for key in ["kind", "listKind"] {
        let value = text(names, key);
        let errs = dns1035_label(&value.to_lowercase());
        if !value.is_empty() && !errs.is_empty() {
            let detail = format!("{mixed}{}", errs.join(","));
            causes.push(common::invalid_str(&format!("{at}.{key}"), value, &detail));
        }
    }
    each(&mut causes, names, at, "shortNames");
    let kind = text(names, "kind");
    if !kind.is_empty() && kind == text(names, "listKind") {
        let field = format!("{at}.listKind");
        causes.push(common::invalid_str(
            &field,
            kind,
            "kind and listKind may not be the same",
        ));
    }
    each(&mut causes, names, at, "categories");
    causes
}

fn each(causes: &mut Vec<Cause>, names: &Value, at: &str, key: &str) {
    for (i, item) in common::list(names, key).iter().enumerate() {
        let value = item.as_str().unwrap_or_default();
        let errs = dns1035_label(value);
        if !errs.is_empty() {
            let field = format!("{at}.{key}[{i}]");
            causes.push(common::invalid_str(&field, value, &errs.join(",")));
        }
    }
}

/// A non-empty `value` that is not a DNS-1035 label.
fn label(causes: &mut Vec<Cause>, field: &str, value: &str) {
    let errs = dns1035_label(value);
    if !value.is_empty() && !errs.is_empty() {
        causes.push(common::invalid_str(field, value, &errs.join(",")));
    }
}
