//! A webhook's `rules[j]` (`validateRuleWithOperations`, `validateRule`,
//! `validateResources`): operations, apiGroups, apiVersions, resources and
//! their subresources, scope.

use std::collections::HashSet;

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common::{self, list};
use kube_rules::gofmt;

const OPERATIONS: [&str; 5] = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const SCOPES: [&str; 3] = ["*", "Cluster", "Namespaced"];

/// The causes for one rule at `at` (`webhooks[i].rules[j]`).
pub fn validate(rule: &Value, at: &str) -> Vec<Cause> {
    let mut causes = operations(rule, at);
    for (key, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let field = format!("{at}.{key}");
        let items = strings(rule, key);
        if items.is_empty() {
            causes.push(common::required(&field, ""));
        }
        if items.len() > 1 && items.contains(&"*") {
            let detail = format!("if '*' is present, must not specify other {what}");
            let rendered = gofmt::string_slice(rule.get(key));
            causes.push(common::invalid(&field, &rendered, &detail));
        }
        if key == "apiVersions" {
            for (k, _) in items.iter().enumerate().filter(|(_, v)| v.is_empty()) {
                causes.push(common::required(&format!("{field}[{k}]"), ""));
            }
        }
    }
    causes.extend(resources(rule, &format!("{at}.resources")));
    if let Some(scope) = rule.get("scope").and_then(Value::as_str) {
        if !SCOPES.contains(&scope) {
            causes.push(common::not_supported(
                &format!("{at}.scope"),
                scope,
                &SCOPES,
            ));
        }
    }
    causes
}

fn strings<'a>(rule: &'a Value, key: &str) -> Vec<&'a str> {
    list(rule, key)
        .iter()
        .map(|v| v.as_str().unwrap_or_default())
        .collect()
}

fn operations(rule: &Value, at: &str) -> Vec<Cause> {
    let field = format!("{at}.operations");
    let ops = strings(rule, "operations");
    let mut causes = Vec::new();
    if ops.is_empty() {
        causes.push(common::required(&field, ""));
    }
    if ops.len() > 1 && ops.contains(&"*") {
        let quoted: Vec<String> = ops.iter().map(|o| gofmt::quote(o)).collect();
        let rendered = format!(
            "[]admissionregistration.OperationType{{{}}}",
            quoted.join(", ")
        );
        let detail = "if '*' is present, must not specify other operations";
        causes.push(common::invalid(&field, &rendered, detail));
    }
    for (k, op) in ops.iter().enumerate() {
        if !OPERATIONS.contains(op) {
            let at = format!("{field}[{k}]");
            causes.push(common::not_supported(&at, op, &OPERATIONS));
        }
    }
    causes
}

/// `validateResources`: `resource/subresource` entries, wildcards not
/// overlapping what they already cover.
fn resources(rule: &Value, field: &str) -> Vec<Cause> {
    let items = strings(rule, "resources");
    let mut causes = Vec::new();
    if items.is_empty() {
        causes.push(common::required(field, ""));
    }
    let mut with_any_sub: HashSet<&str> = HashSet::new();
    let mut sub_of_any: HashSet<&str> = HashSet::new();
    let (mut double_wildcard, mut single_wildcard, mut plain) = (false, false, false);
    for (i, item) in items.iter().enumerate() {
        let at = format!("{field}[{i}]");
        if item.is_empty() {
            causes.push(common::required(&at, ""));
            continue;
        }
        double_wildcard |= *item == "*/*";
        single_wildcard |= *item == "*";
        let Some((res, sub)) = item.split_once('/') else {
            // As kube: the last entry without a subresource decides.
            plain = *item != "*";
            continue;
        };
        if with_any_sub.contains(res) {
            let detail = format!("if '{res}/*' is present, must not specify {item}");
            causes.push(common::invalid_str(&at, item, &detail));
        }
        if sub_of_any.contains(sub) {
            let detail = format!("if '*/{sub}' is present, must not specify {item}");
            causes.push(common::invalid_str(&at, item, &detail));
        }
        if sub == "*" {
            with_any_sub.insert(res);
        }
        if res == "*" {
            sub_of_any.insert(sub);
        }
    }
    let rendered = || gofmt::string_slice(rule.get("resources"));
    if items.len() > 1 && double_wildcard {
        let detail = "if '*/*' is present, must not specify other resources";
        causes.push(common::invalid(field, &rendered(), detail));
    }
    if single_wildcard && plain {
        let detail = "if '*' is present, must not specify other resources without subresources";
        causes.push(common::invalid(field, &rendered(), detail));
    }
    causes
}
