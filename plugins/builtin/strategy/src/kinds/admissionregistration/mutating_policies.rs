//! MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding
//! (admissionregistration.k8s.io v1beta1 and v1alpha1): kube's defaults
//! (those of the validating kinds, and a paramRef's
//! `parameterNotFoundAction: Deny`) and the rules of
//! `validateMutatingAdmissionPolicySpec` and
//! `validateMutatingAdmissionPolicyBindingSpec`, with kube's messages;
//! each mutation's expression is compiled and must have exactly its
//! patch type's type (`Object`, `list(JSONPatch)`). The host applies the
//! policies (`admission/cel_policy/mutating`).

use capstan_plugin_sdk::Cause;
use kube_cel::policy_types::Type;
use serde_json::{json, Value};

use super::admission_policies::{
    common_binding, common_spec, match_resources_defaults, variables, Env,
};
use super::webhooks;
use crate::common::{self, list, text};
use crate::json::set_default;

/// kube's `supportedMutatingOperations` (no DELETE: nothing to mutate).
const OPERATIONS: [&str; 4] = ["*", "CONNECT", "CREATE", "UPDATE"];
const PATCH_TYPES: [&str; 2] = ["ApplyConfiguration", "JSONPatch"];
const REINVOCATION_POLICIES: [&str; 2] = ["IfNeeded", "Never"];

/// A policy's defaults.
pub fn policy_defaults(object: &mut Value) {
    set_default(object, "/spec/failurePolicy", json!("Fail"));
    if let Some(constraints) = object.pointer_mut("/spec/matchConstraints") {
        match_resources_defaults(constraints);
    }
}

/// A binding's defaults.
pub fn binding_defaults(object: &mut Value) {
    if let Some(resources) = object.pointer_mut("/spec/matchResources") {
        match_resources_defaults(resources);
    }
    if let Some(param) = object
        .pointer_mut("/spec/paramRef")
        .filter(|p| p.is_object())
    {
        set_default(param, "/parameterNotFoundAction", json!("Deny"));
    }
}

/// `validateMutatingAdmissionPolicySpec` (metadata is checked apart).
pub fn validate_policy(object: &Value) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut causes = common_spec(spec);
    if let Some(constraints) = spec.get("matchConstraints").filter(|m| m.is_object()) {
        causes.extend(operations(constraints, "spec.matchConstraints"));
    }
    let mut env = Env::mutating(spec);
    causes.extend(webhooks::conditions::validate(
        list(spec, "matchConditions"),
        "spec.matchConditions",
        &env.declared,
    ));
    causes.extend(variables(spec, &mut env));
    let mutations = list(spec, "mutations");
    if mutations.is_empty() {
        let detail = "mutations must contain at least one item";
        causes.push(common::required("spec.mutations", detail));
    }
    for (i, mutation) in mutations.iter().enumerate() {
        causes.extend(one_mutation(
            mutation,
            &format!("spec.mutations[{i}]"),
            &env,
        ));
    }
    let field = "spec.reinvocationPolicy";
    match text(spec, "reinvocationPolicy") {
        "" => causes.push(common::required(field, "")),
        p if !REINVOCATION_POLICIES.contains(&p) => {
            causes.push(common::not_supported(field, p, &REINVOCATION_POLICIES))
        }
        _ => {}
    }
    causes
}

/// Each rule's operations among those a mutation can see (one field for
/// all rules, as kube reports it).
fn operations(resources: &Value, at: &str) -> Vec<Cause> {
    let field = format!("{at}.resourceRules.operations");
    let rules = list(resources, "resourceRules").iter();
    let ops = rules.flat_map(|r| list(r, "operations"));
    ops.filter_map(Value::as_str)
        .filter(|op| !OPERATIONS.contains(op))
        .map(|op| common::not_supported(&field, op, &OPERATIONS))
        .collect()
}

/// `validateMutation`: the patch type, its configuration and expression.
fn one_mutation(mutation: &Value, at: &str, env: &Env) -> Vec<Cause> {
    let patch_type = text(mutation, "patchType");
    let (key, other, returns) = match patch_type {
        "" => return vec![common::required(&format!("{at}.patchType"), "")],
        "ApplyConfiguration" => ("applyConfiguration", "jsonPatch", object_type()),
        "JSONPatch" => ("jsonPatch", "applyConfiguration", json_patches()),
        t => {
            let field = format!("{at}.patchType");
            return vec![common::not_supported(&field, t, &PATCH_TYPES)];
        }
    };
    let present = |key: &str| mutation.get(key).filter(|v| !v.is_null());
    let mut causes = Vec::new();
    match present(key) {
        None => causes.push(common::required(
            &format!("{at}.{key}"),
            &format!("must be specified when patchType is {patch_type}"),
        )),
        Some(config) => causes.extend(expression(config, &format!("{at}.{key}"), env, returns)),
    }
    if present(other).is_some() {
        let detail = format!("must not be specified when patchType is {patch_type}");
        causes.push(common::invalid_str(
            &format!("{at}.{other}"),
            &format!("{{{other}}}"),
            &detail,
        ));
    }
    causes
}

fn expression(config: &Value, at: &str, env: &Env, returns: Type<'static>) -> Option<Cause> {
    let field = format!("{at}.expression");
    let expression = text(config, "expression");
    if expression.trim().is_empty() {
        return Some(common::required(&field, ""));
    }
    let detail = env.check(expression, Some(&returns)).err()?;
    Some(common::invalid_str(&field, expression.trim(), &detail))
}

fn object_type() -> Type<'static> {
    Type::Struct(kube_cel::mutation::OBJECT_TYPE.to_string())
}

fn json_patches() -> Type<'static> {
    Type::List(Box::new(Type::Struct(
        kube_cel::mutation::JSON_PATCH.to_string(),
    )))
}

/// `validateMutatingAdmissionPolicyBindingSpec`.
pub fn validate_binding(object: &Value) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut causes = common_binding(spec);
    if let Some(resources) = spec.get("matchResources").filter(|m| m.is_object()) {
        causes.extend(operations(resources, "spec.matchResources"));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(causes: Vec<Cause>) -> Vec<String> {
        causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    fn policy(mutations: Value) -> Value {
        let mut p = json!({"metadata": {"name": "p"}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["configmaps"]}]},
            "reinvocationPolicy": "Never",
            "mutations": mutations}});
        policy_defaults(&mut p);
        p
    }

    #[test]
    fn a_defaulted_policy_is_valid() {
        let p = policy(json!([{"patchType": "ApplyConfiguration",
            "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"}},
            {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: 'add', path: '/data/x', value: 'y'}]"}}]));
        assert_eq!(p["spec"]["failurePolicy"], "Fail");
        assert_eq!(messages(validate_policy(&p)), Vec::<String>::new());
    }

    #[test]
    fn patch_types_and_their_expressions() {
        let p = policy(json!([{"patchType": "StrategicMerge"},
            {"patchType": "ApplyConfiguration"},
            {"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}, "applyConfiguration": {"expression": "Object{}"}}]));
        assert_eq!(
            messages(validate_policy(&p)),
            [
                r#"spec.mutations[0].patchType: Unsupported value: "StrategicMerge": supported values: "ApplyConfiguration", "JSONPatch""#,
                "spec.mutations[1].applyConfiguration: Required value: must be specified when patchType is ApplyConfiguration",
                r#"spec.mutations[2].jsonPatch.expression: Invalid value: "[]": must evaluate to list(JSONPatch) but got list(dyn)"#,
                r#"spec.mutations[2].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch"#,
            ]
        );
    }

    #[test]
    fn bindings_default_deny_and_refuse_delete() {
        let mut b = json!({"metadata": {"name": "b"}, "spec": {"paramRef": {"name": "x"},
            "matchResources": {"resourceRules": [{"operations": ["DELETE"], "apiGroups": [""],
            "apiVersions": ["v1"], "resources": ["pods"]}]}}});
        binding_defaults(&mut b);
        assert_eq!(b["spec"]["paramRef"]["parameterNotFoundAction"], "Deny");
        assert_eq!(
            messages(validate_binding(&b)),
            [
                "spec.policyName: Required value",
                r#"spec.matchResources.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE""#,
            ]
        );
    }
}
