//! `ValidateCustomResourceDefinitionNames` (spec.names and
//! status.acceptedNames).

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, text};
use kube_rules::dns1035_label;

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
