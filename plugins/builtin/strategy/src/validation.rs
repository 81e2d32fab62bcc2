//! Built-in strategy plugin `strategy-validation`: kube-apiserver's per-kind
//! Validate step (`ValidatePod`, `ValidateDeployment`, `ValidateService`,
//! `ValidateConfigMap`, ...) for the common kinds. The host calls it before
//! every create and update and turns the causes into a 422 Invalid.
//!
//! Answers: `{"causes": [...]}` for "validate" (empty = valid; subresource
//! writes and other kinds always get none), the object unchanged
//! (`{"object": ...}`) for the prepare phases, and `{"causes": []}` for "table".

mod common;
mod config;
mod gofmt;
mod pod_update;
mod pods;
mod selector;
mod services;
mod workloads;

use capstan_plugin_sdk::strategy::StrategyResource;
use capstan_plugin_sdk::{Cause, Phase, StrategyAnswer, StrategyCall, StrategyPlugin};
use serde_json::Value;

/// The plugin.
pub struct StrategyValidation;

impl StrategyPlugin for StrategyValidation {
    fn call(call: &StrategyCall) -> Result<StrategyAnswer, String> {
        Ok(match call.phase {
            Phase::Validate => StrategyAnswer::Causes(validate(
                &call.resource,
                &call.object,
                call.old_object.as_ref(),
            )),
            Phase::PrepareForCreate | Phase::PrepareForUpdate => {
                StrategyAnswer::Object(call.object.clone())
            }
            Phase::Table => StrategyAnswer::Causes(Vec::new()),
        })
    }
}

capstan_plugin_sdk::strategy_plugin!(StrategyValidation);

/// The causes for writing `object` (over `old` on update) to `resource`.
pub fn validate(resource: &StrategyResource, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    if !resource.subresource.is_empty() {
        return Vec::new();
    }
    let causes = match (resource.group.as_str(), resource.resource.as_str()) {
        ("", "pods") => pods::validate(object, old),
        ("apps", plural @ ("deployments" | "replicasets" | "statefulsets"))
        | ("", plural @ "replicationcontrollers") => workloads::validate(plural, object, old),
        ("", "services") => services::validate(object, old),
        ("", "configmaps") => config::configmap(object, old),
        ("", "secrets") => config::secret(object, old),
        _ => Vec::new(),
    };
    deduplicated(causes)
}

/// kube's message lists each "field: message" once; so do the causes here.
fn deduplicated(causes: Vec<Cause>) -> Vec<Cause> {
    let mut kept: Vec<Cause> = Vec::with_capacity(causes.len());
    for cause in causes {
        if !kept
            .iter()
            .any(|k| k.field == cause.field && k.message == cause.message)
        {
            kept.push(cause);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use capstan_plugin_sdk::{json, run_strategy};
    use serde_json::Value;

    use super::{deduplicated, Cause, StrategyValidation};

    fn call(input: Value) -> Value {
        let out = run_strategy::<StrategyValidation>(&input.to_string()).unwrap();
        serde_json::from_str(&out).unwrap()
    }

    fn pods() -> Value {
        json!({"group": "", "version": "v1", "resource": "pods", "kind": "Pod", "subresource": ""})
    }

    #[test]
    fn validate_answers_with_kube_shaped_causes() {
        let out = call(json!({"phase": "validate", "resource": pods(),
            "object": {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}}));
        assert_eq!(
            out,
            json!({"causes": [{"type": "FieldValueRequired",
                "field": "spec.containers[0].image", "message": "Required value"}]})
        );
    }

    #[test]
    fn subresources_other_kinds_and_valid_objects_get_no_causes() {
        let mut status = pods();
        status["subresource"] = json!("status");
        let empty = json!({"causes": []});
        assert_eq!(
            call(json!({"phase": "validate", "resource": status, "object": {"spec": {}}})),
            empty
        );
        let ns =
            json!({"group": "", "version": "v1", "resource": "namespaces", "kind": "Namespace"});
        assert_eq!(
            call(
                json!({"phase": "validate", "resource": ns, "object": {"metadata": {"name": "x"}}})
            ),
            empty
        );
        let pod = json!({"spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        assert_eq!(
            call(json!({"phase": "validate", "resource": pods(), "object": pod})),
            empty
        );
    }

    #[test]
    fn prepare_phases_return_the_object_unchanged() {
        let obj = json!({"metadata": {"name": "p"}, "spec": {}});
        assert_eq!(
            call(
                json!({"phase": "prepare-for-update", "resource": pods(), "object": obj.clone(),
                        "oldObject": obj.clone()})
            ),
            json!({"object": obj})
        );
    }

    #[test]
    fn update_carries_old_object() {
        let old = json!({"spec": {"containers": [{"name": "c", "image": "a"}]}});
        let new = json!({"spec": {"containers": [{"name": "c", "image": "a"}, {"name": "d", "image": "b"}]}});
        let out =
            call(json!({"phase": "validate", "resource": pods(), "object": new, "oldObject": old}));
        assert_eq!(
            out["causes"][0]["message"],
            "Forbidden: pod updates may not add or remove containers"
        );
        assert_eq!(out["causes"][0]["type"], "FieldValueForbidden");
    }

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
