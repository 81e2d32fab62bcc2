//! A webhook's `matchConditions` (`validateMatchConditions`): at most 64,
//! each with a unique qualified name and an expression that compiles in
//! the CEL environment the host evaluates them in (`kube-cel`).

use std::collections::HashSet;

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, text};
use crate::{gofmt, metadata};

/// kube's limit of conditions per webhook.
const MAX_CONDITIONS: usize = 64;

/// The causes for the conditions at `field` (`webhooks[i].matchConditions`).
pub fn validate(conditions: &[Value], field: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if conditions.len() > MAX_CONDITIONS {
        causes.push(common::too_many(field, conditions.len(), MAX_CONDITIONS));
        // Every one would be compiled: the count is refused first.
        return causes;
    }
    let mut names = HashSet::new();
    for (i, condition) in conditions.iter().enumerate() {
        let at = format!("{field}[{i}]");
        causes.extend(one(condition, &at));
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
fn one(condition: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let expression = text(condition, "expression");
    let field = format!("{at}.expression");
    if expression.trim().is_empty() {
        causes.push(common::required(&field, ""));
    } else if let Err(e) = kube_cel::compile(expression.trim()) {
        let detail = format!("compilation failed: {e}");
        causes.push(common::invalid_str(&field, expression.trim(), &detail));
    }
    let name = text(condition, "name");
    let field = format!("{at}.name");
    if name.is_empty() {
        causes.push(common::required(&field, ""));
    } else {
        common::invalid_each(&mut causes, &field, name, metadata::qualified_name(name));
    }
    causes
}
