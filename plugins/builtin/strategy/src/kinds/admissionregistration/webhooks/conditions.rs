//! A webhook's `matchConditions` (`validateMatchConditions`): at most 64,
//! each with a unique qualified name and an expression that compiles in
//! the CEL environment the host evaluates them in (`kube-cel`).

use std::collections::HashSet;

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, text};
use kube_rules::gofmt;

/// kube's limit of conditions per webhook.
const MAX_CONDITIONS: usize = 64;

/// What a webhook's conditions may read.
pub const WEBHOOK_VARIABLES: [&str; 4] = ["object", "oldObject", "request", "authorizer"];

/// The causes for the conditions at `field` (`webhooks[i].matchConditions`),
/// which may read `declared`.
pub fn validate(conditions: &[Value], field: &str, declared: &[&str]) -> Vec<Cause> {
    let mut causes = Vec::new();
    if conditions.len() > MAX_CONDITIONS {
        causes.push(common::too_many(field, conditions.len(), MAX_CONDITIONS));
        // Every one would be compiled: the count is refused first.
        return causes;
    }
    let mut names = HashSet::new();
    for (i, condition) in conditions.iter().enumerate() {
        let at = format!("{field}[{i}]");
        causes.extend(one(condition, &at, declared));
        let name = text(condition, "name");
        if !name.is_empty() && !names.insert(name) {
            causes.push(common::duplicate(
                &format!("{at}.name"),
                &gofmt::quote(name),
            ));
        }
    }
    causes
}

/// `validateMatchCondition`: the expression, then the name.
fn one(condition: &Value, at: &str, declared: &[&str]) -> Vec<Cause> {
    let mut causes = Vec::new();
    let expression = text(condition, "expression");
    let field = format!("{at}.expression");
    if expression.trim().is_empty() {
        causes.push(common::required(&field, ""));
    } else {
        let bool = kube_cel::policy_types::Type::Bool;
        let checked = kube_cel::policy_types::check_admission_expression(
            expression.trim(),
            declared,
            None,
            Some(&bool),
        );
        if let Err(detail) = checked {
            causes.push(common::invalid_str(&field, expression.trim(), &detail));
        }
    }
    let name = text(condition, "name");
    let field = format!("{at}.name");
    if name.is_empty() {
        causes.push(common::required(&field, ""));
    } else {
        common::invalid_each(&mut causes, &field, name, kube_rules::qualified_name(name));
    }
    causes
}
