//! PriorityClasses (`scheduling.k8s.io`): kube's defaulting
//! (`preemptionPolicy: PreemptLowerPriority`) and `ValidatePriorityClass`
//! with its update rules: names with the `system-` prefix are only the
//! system classes with their own value, user classes stay at or below
//! 1000000000, and value and preemptionPolicy never change.

use capstan_plugin_sdk::Cause;
use serde_json::Value;

use crate::common;
use kube_rules::gofmt;

const SYSTEM_PREFIX: &str = "system-";
const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;
/// kube's `SystemPriorityClasses`: name and value (neither is globalDefault).
const SYSTEM_CLASSES: [(&str, i64); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];
const POLICIES: [&str; 2] = ["PreemptLowerPriority", "Never"];

pub fn validate(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let value = common::int(object, "value");
    if name.starts_with(SYSTEM_PREFIX) {
        if let Err(why) = known_system_class(name, value, global_default(object)) {
            let detail = format!("priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {why}");
            causes.push(common::forbidden("metadata.name", &detail));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        let detail = format!(
            "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
        );
        causes.push(common::forbidden("value", &detail));
    }
    if let Some(policy) = object.get("preemptionPolicy").and_then(Value::as_str) {
        causes.extend(preemption_policy(policy));
    }
    if let Some(old) = old {
        causes.extend(update(object, old));
    }
    causes
}

fn global_default(object: &Value) -> bool {
    object.get("globalDefault").and_then(Value::as_bool) == Some(true)
}

/// kube's `IsKnownSystemPriorityClass`.
fn known_system_class(name: &str, value: i64, global_default: bool) -> Result<(), String> {
    let Some((_, expected)) = SYSTEM_CLASSES.iter().find(|(known, _)| *known == name) else {
        return Err(format!("{name} is not a known system priority class"));
    };
    if value != *expected {
        return Err(format!("value of {name} PriorityClass must be {expected}"));
    }
    if global_default {
        return Err(format!(
            "globalDefault of {name} PriorityClass must be false"
        ));
    }
    Ok(())
}

fn preemption_policy(policy: &str) -> Option<Cause> {
    match policy {
        "" => Some(common::required("preemptionPolicy", "")),
        p if POLICIES.contains(&p) => None,
        p => Some(common::not_supported("preemptionPolicy", p, &POLICIES)),
    }
}

/// `ValidatePriorityClassUpdate`: value and preemptionPolicy are immutable.
fn update(object: &Value, old: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if common::int(object, "value") != common::int(old, "value") {
        causes.push(common::forbidden(
            "value",
            "may not be changed in an update.",
        ));
    }
    let policy = |o: &Value| {
        o.get("preemptionPolicy")
            .and_then(Value::as_str)
            .map(String::from)
    };
    if policy(object) != policy(old) {
        let rendered = match policy(object) {
            Some(p) => gofmt::quote(&p),
            None => "null".to_string(),
        };
        causes.push(common::immutable("preemptionPolicy", &rendered));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(object: Value, old: Option<Value>) -> Vec<String> {
        validate(&object, old.as_ref())
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    fn class(name: &str, value: i64) -> Value {
        json!({"metadata": {"name": name}, "value": value, "preemptionPolicy": "PreemptLowerPriority"})
    }

    #[test]
    fn system_names_are_reserved_for_the_system_classes() {
        assert!(messages(class("system-node-critical", 2_000_001_000), None).is_empty());
        assert_eq!(
            messages(class("system-mine", 10), None),
            ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"]
        );
        assert_eq!(
            messages(class("system-cluster-critical", 5), None),
            ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-cluster-critical PriorityClass must be 2000000000"]
        );
    }

    #[test]
    fn user_classes_are_bounded_and_their_value_and_policy_immutable() {
        assert_eq!(
            messages(class("huge", 1_000_000_001), None),
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
        );
        let mut never = class("c", 5);
        never["preemptionPolicy"] = json!("Sometimes");
        assert_eq!(
            messages(never, None),
            [
                r#"preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never""#
            ]
        );
        let mut changed = class("c", 6);
        changed["preemptionPolicy"] = json!("Never");
        assert_eq!(
            messages(changed, Some(class("c", 5))),
            [
                "value: Forbidden: may not be changed in an update.",
                r#"preemptionPolicy: Invalid value: "Never": field is immutable"#
            ]
        );
    }
}
