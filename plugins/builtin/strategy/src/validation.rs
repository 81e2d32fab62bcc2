//! The Validate step: every kind's metadata, then the kind's own rules
//! (`KindRules::validate`: kube's `ValidatePod`, `ValidateDeployment`, ...
//! and on update the rules against the stored object), each "field:
//! message" once. A pod resize gets the pod's validation and the resize
//! rules; other subresource writes get no causes.

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::Cause;
use serde_json::Value;

use std::collections::HashSet;

use crate::kinds;
use crate::kinds::core::pods;
use crate::metadata;

/// The causes for writing `object` (over `old` on update) to `resource`.
pub fn validate(resource: &StrategyResource, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    if crate::kinds::core::pod_resize::applies(resource) {
        return pod_resize(object, old);
    }
    if !resource.subresource.is_empty() {
        return Vec::new();
    }
    let mut causes = metadata::validate(object);
    causes.extend(kinds::rules(resource).validate(object, old));
    deduplicated(causes)
}

/// kube's ValidatePodResize: the pod as any pod, then the resize itself.
fn pod_resize(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let Some(old) = old else {
        return Vec::new();
    };
    let mut causes = metadata::validate(object);
    let spec = object.get("spec").unwrap_or(&Value::Null);
    causes.extend(pods::validate_spec(spec, "spec"));
    causes.extend(crate::kinds::core::pod_resize::validate(object, old));
    deduplicated(causes)
}

/// kube's message lists each "field: message" once; so do the causes here.
fn deduplicated(causes: Vec<Cause>) -> Vec<Cause> {
    let mut seen: HashSet<(String, String)> = HashSet::with_capacity(causes.len());
    causes
        .into_iter()
        .filter(|c| seen.insert((c.field.clone(), c.message.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_causes_are_listed_once() {
        let cause = |field: &str, message: &str| Cause {
            cause_type: "FieldValueInvalid".into(),
            field: field.into(),
            message: message.into(),
        };
        let kept = deduplicated(vec![
            cause("spec.a", "Invalid value: 1"),
            cause("spec.b", "Invalid value: 1"),
            cause("spec.a", "Invalid value: 1"),
            cause("spec.a", "Invalid value: 2"),
        ]);
        let shown: Vec<String> = kept
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(
            shown,
            vec![
                "spec.a: Invalid value: 1",
                "spec.b: Invalid value: 1",
                "spec.a: Invalid value: 2"
            ]
        );
    }
}
