//! A Job's podFailurePolicy and successPolicy (`validatePodFailurePolicy`,
//! `validateSuccessPolicy` of kube's batch validation) and which template
//! changes an update may make.

use std::collections::HashSet;

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use super::validation as batch;
use crate::common::{self, list, opt_int, same, text};
use kube_rules::gofmt;

const ACTIONS: [&str; 4] = ["Count", "FailIndex", "FailJob", "Ignore"];
const OPERATORS: [&str; 2] = ["In", "NotIn"];
const STATUSES: [&str; 3] = ["False", "True", "Unknown"];

/// `validatePodFailurePolicy` of the Job spec at `at`.
pub fn pod_failure_policy(spec: &Value, at: &str) -> Vec<Cause> {
    let policy = spec.get("podFailurePolicy").unwrap_or(&Value::Null);
    let rules_at = format!("{at}.podFailurePolicy.rules");
    let rules = list(policy, "rules");
    let mut causes = Vec::new();
    if rules.len() > 20 {
        causes.push(common::too_many(&rules_at, rules.len(), 20));
    }
    let names = batch::container_names(spec);
    for (i, rule) in rules.iter().enumerate() {
        causes.extend(rule_causes(spec, rule, &format!("{rules_at}[{i}]"), &names));
    }
    causes
}

fn rule_causes(spec: &Value, rule: &Value, at: &str, names: &[&str]) -> Vec<Cause> {
    let mut causes = Vec::new();
    let field = format!("{at}.action");
    match text(rule, "action") {
        "" => {
            let listed: Vec<String> = ACTIONS.iter().map(|a| gofmt::quote(a)).collect();
            let detail = format!("valid values: [{}]", listed.join(" "));
            causes.push(common::required(&field, &detail));
        }
        "FailIndex" if opt_int(spec, "backoffLimitPerIndex").is_none() => {
            let detail = "requires the backoffLimitPerIndex to be set";
            causes.push(common::invalid_str(&field, "FailIndex", detail));
        }
        action if !ACTIONS.contains(&action) => {
            causes.push(common::not_supported(&field, action, &ACTIONS))
        }
        _ => {}
    }
    let exit_codes = rule.get("onExitCodes").filter(|v| !v.is_null());
    let conditions = list(rule, "onPodConditions");
    if let Some(codes) = exit_codes {
        causes.extend(on_exit_codes(codes, &format!("{at}.onExitCodes"), names));
    }
    if !conditions.is_empty() {
        causes.extend(on_pod_conditions(
            conditions,
            &format!("{at}.onPodConditions"),
        ));
    }
    match (exit_codes.is_some(), conditions.is_empty()) {
        (true, false) => causes.push(omitted_value(
            at,
            "specifying both OnExitCodes and OnPodConditions is not supported",
        )),
        (false, true) => causes.push(omitted_value(
            at,
            "specifying one of OnExitCodes and OnPodConditions is required",
        )),
        _ => {}
    }
    causes
}

/// `field.Invalid` with `field.OmitValueType{}`: no value shown.
fn omitted_value(field: &str, detail: &str) -> Cause {
    let mut cause = common::invalid(field, "", detail);
    cause.message = format!("Invalid value: {detail}");
    cause
}

fn on_exit_codes(codes: &Value, at: &str, names: &[&str]) -> Vec<Cause> {
    let mut causes = Vec::new();
    let operator = text(codes, "operator");
    let field = format!("{at}.operator");
    if operator.is_empty() {
        let detail = "valid values: [\"In\" \"NotIn\"]";
        causes.push(common::required(&field, detail));
    } else if !OPERATORS.contains(&operator) {
        causes.push(common::not_supported(&field, operator, &OPERATORS));
    }
    if let Some(name) = codes.get("containerName").and_then(Value::as_str) {
        if !names.contains(&name) {
            let detail = "must be one of the container or initContainer names in the pod template";
            causes.push(common::invalid_str(
                &format!("{at}.containerName"),
                name,
                detail,
            ));
        }
    }
    let values: Vec<i64> = list(codes, "values")
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    let values_at = format!("{at}.values");
    let rendered = || {
        let items: Vec<String> = values.iter().map(i64::to_string).collect();
        format!("[]int32{{{}}}", items.join(", "))
    };
    if values.is_empty() {
        causes.push(common::invalid(
            &values_at,
            &rendered(),
            "at least one value is required",
        ));
    } else if values.len() > 255 {
        causes.push(common::too_many(&values_at, values.len(), 255));
    }
    let mut seen = HashSet::new();
    for (j, value) in values.iter().enumerate() {
        let field = format!("{values_at}[{j}]");
        if operator == "In" && *value == 0 {
            causes.push(common::invalid(
                &field,
                "0",
                "must not be 0 for the In operator",
            ));
        }
        if !seen.insert(*value) {
            causes.push(common::duplicate(&field, &value.to_string()));
        }
    }
    if values.windows(2).any(|w| w[0] > w[1]) {
        causes.push(common::invalid(&values_at, &rendered(), "must be ordered"));
    }
    causes
}

fn on_pod_conditions(patterns: &[Value], at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if patterns.len() > 20 {
        causes.push(common::too_many(at, patterns.len(), 20));
    }
    for (j, pattern) in patterns.iter().enumerate() {
        let kind = text(pattern, "type");
        let field = format!("{at}[{j}].type");
        common::invalid_each(&mut causes, &field, kind, kube_rules::qualified_name(kind));
        let field = format!("{at}[{j}].status");
        match text(pattern, "status") {
            "" => causes.push(common::required(
                &field,
                "valid values: [\"False\" \"True\" \"Unknown\"]",
            )),
            status if !STATUSES.contains(&status) => {
                causes.push(common::not_supported(&field, status, &STATUSES))
            }
            _ => {}
        }
    }
    causes
}

/// `validateSuccessPolicy` of an Indexed Job's spec at `at`.
pub fn success_policy(spec: &Value, at: &str) -> Vec<Cause> {
    let rules_at = format!("{at}.successPolicy.rules");
    let rules = spec
        .pointer("/successPolicy/rules")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut causes = Vec::new();
    if rules.is_empty() {
        let detail = "at least one rules must be specified when the successPolicy is specified";
        causes.push(common::required(&rules_at, detail));
    }
    if rules.len() > 20 {
        causes.push(common::too_many(&rules_at, rules.len(), 20));
    }
    let completions = opt_int(spec, "completions").unwrap_or(0);
    for (i, rule) in rules.iter().enumerate() {
        causes.extend(success_rule(rule, &format!("{rules_at}[{i}]"), completions));
    }
    causes
}

fn success_rule(rule: &Value, at: &str, completions: i64) -> Vec<Cause> {
    let mut causes = Vec::new();
    let indexes = rule.get("succeededIndexes").and_then(Value::as_str);
    let count = opt_int(rule, "succeededCount");
    if indexes.is_none() && count.is_none() {
        let detail = "at least one of succeededCount or succeededIndexes must be specified";
        causes.push(common::required(at, detail));
    }
    let mut total = 0;
    if let Some(indexes) = indexes {
        let field = format!("{at}.succeededIndexes");
        if indexes.len() > 64 * 1024 {
            causes.push(common::too_long(&field, 64 * 1024));
        }
        match index_count(indexes, completions) {
            Ok(n) => total = n,
            Err(err) => {
                let detail = format!("error parsing succeededIndexes: {err}");
                causes.push(common::invalid_str(&field, indexes, &detail));
            }
        }
    }
    if let Some(count) = count {
        let field = format!("{at}.succeededCount");
        causes.extend(common::non_negative(&field, count));
        if count > completions {
            let detail = format!(
                "must be less than or equal to {completions} (the number of specified completions)"
            );
            causes.push(common::invalid(&field, &count.to_string(), &detail));
        }
        if indexes.is_some() && count > total {
            let detail = format!(
                "must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"
            );
            causes.push(common::invalid(&field, &count.to_string(), &detail));
        }
    }
    causes
}

/// `validateIndexesFormat`: how many indexes "1,3-5" names, or the error.
fn index_count(indexes: &str, completions: i64) -> Result<i64, String> {
    if indexes.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total = 0;
    for interval in indexes.split(',') {
        let (x, y) = interval_bounds(interval, completions)?;
        if let Some(last) = last.filter(|l| *l >= x) {
            return Err(format!(
                "non-increasing order, previous: {last}, current: {x}"
            ));
        }
        total += y - x + 1;
        last = Some(y);
    }
    Ok(total)
}

fn interval_bounds(interval: &str, completions: i64) -> Result<(i64, i64), String> {
    let parts: Vec<&str> = interval.split('-').collect();
    if parts.len() > 2 {
        return Err(format!(
            "the fragment {} violates the requirement that an index interval can have at most two parts separated by '-'",
            gofmt::quote(interval)
        ));
    }
    let bound = |part: &str| -> Result<i64, String> {
        let n: i64 = part.parse().map_err(|_| {
            format!(
                "cannot convert string to integer for index: {}",
                gofmt::quote(part)
            )
        })?;
        if n >= completions {
            return Err(format!("too large index: {}", gofmt::quote(part)));
        }
        Ok(n)
    };
    let x = bound(parts[0])?;
    let Some(high) = parts.get(1) else {
        return Ok((x, x));
    };
    let y = bound(high)?;
    if x >= y {
        return Err(format!("non-increasing order, previous: {x}, current: {y}"));
    }
    Ok((x, y))
}

/// `batch.SuccessPolicy` as `%#v`.
pub fn render_success(policy: &Value) -> String {
    let rules: Vec<String> = list(policy, "rules")
        .iter()
        .map(|rule| {
            let indexes = rule.get("succeededIndexes").filter(|v| !v.is_null());
            let count = rule.get("succeededCount").filter(|v| !v.is_null());
            format!(
                "batch.SuccessPolicyRule{{SucceededIndexes:{}, SucceededCount:{}}}",
                if indexes.is_some() {
                    "(*string)(0xc000000000)"
                } else {
                    "(*string)(nil)"
                },
                if count.is_some() {
                    "(*int32)(0xc000000000)"
                } else {
                    "(*int32)(nil)"
                },
            )
        })
        .collect();
    let rules = if policy.get("rules").is_some_and(Value::is_array) {
        format!("[]batch.SuccessPolicyRule{{{}}}", rules.join(", "))
    } else {
        "[]batch.SuccessPolicyRule(nil)".to_string()
    };
    format!("batch.SuccessPolicy{{Rules:{rules}}}")
}

/// Whether an update leaves the template as it was; a suspended Job may
/// change its scheduling directives, labels and annotations.
pub fn template_unchanged(spec: &Value, old: &Value) -> bool {
    let (new_t, old_t) = (spec.get("template"), old.get("template"));
    if same(new_t, old_t) {
        return true;
    }
    if spec.get("suspend").and_then(Value::as_bool) != Some(true) {
        return false;
    }
    let strip = |t: Option<&Value>| {
        let mut t = t.cloned().unwrap_or(Value::Null);
        for pointer in ["/metadata", "/spec"] {
            if let Some(map) = t.pointer_mut(pointer).and_then(Value::as_object_mut) {
                for key in [
                    "labels",
                    "annotations",
                    "nodeSelector",
                    "tolerations",
                    "schedulingGates",
                ] {
                    map.remove(key);
                }
            }
        }
        if let Some(affinity) = t
            .pointer_mut("/spec/affinity")
            .and_then(Value::as_object_mut)
        {
            affinity.remove("nodeAffinity");
        }
        t
    };
    same(Some(&strip(new_t)), Some(&strip(old_t)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::messages;
    use serde_json::json;

    #[test]
    fn exit_code_rules() {
        let spec = json!({"podFailurePolicy": {"rules": [
            {"action": "Bogus", "onExitCodes": {"operator": "In", "values": [0, 3, 3, 1]}},
            {"action": "FailJob"}]},
            "template": {"spec": {"containers": [{"name": "c"}]}}});
        assert_eq!(
            messages(&pod_failure_policy(&spec, "spec")),
            vec![
                "spec.podFailurePolicy.rules[0].action: Unsupported value: \"Bogus\": supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\"",
                "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
                "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
                "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 3, 3, 1}: must be ordered",
                "spec.podFailurePolicy.rules[1]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
            ]
        );
    }

    #[test]
    fn succeeded_indexes() {
        let spec = json!({"completions": 3, "successPolicy": {"rules": [{"succeededIndexes": "0-9", "succeededCount": 5}]}});
        assert_eq!(
            messages(&success_policy(&spec, "spec")),
            vec![
                "spec.successPolicy.rules[0].succeededIndexes: Invalid value: \"0-9\": error parsing succeededIndexes: too large index: \"9\"",
                "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: must be less than or equal to 3 (the number of specified completions)",
                "spec.successPolicy.rules[0].succeededCount: Invalid value: 5: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)",
            ]
        );
    }
}
