//! ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding: kube's
//! defaults (`failurePolicy: Fail`; a MatchResources' `matchPolicy:
//! Equivalent` and empty selectors; a rule's `scope: "*"`) and the main
//! rules of `validateValidatingAdmissionPolicySpec` and
//! `validateValidatingAdmissionPolicyBindingSpec`, with kube's messages.
//! Every expression is compiled and type checked as kube's write-time
//! validation does (`kube_cel::policy_types::check_admission_expression`);
//! the host enforces the policies (`admission/cel_policy`).

use std::collections::{HashMap, HashSet};

use capstan_plugin_sdk::Cause;
use kube_cel::policy_types::{check_admission_expression, check_mutation_expression, Type};
use serde_json::{json, Value};

use super::webhooks;
use crate::common::{self, list, text};
use crate::json::set_default;
use kube_rules::gofmt;

const FAILURE_POLICIES: [&str; 2] = ["Fail", "Ignore"];
const MATCH_POLICIES: [&str; 2] = ["Equivalent", "Exact"];
const REASONS: [&str; 3] = ["Forbidden", "Invalid", "RequestEntityTooLarge"];
const ACTIONS: [&str; 3] = ["Audit", "Deny", "Warn"];
const NOT_FOUND_ACTIONS: [&str; 2] = ["Deny", "Allow"];

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
}

pub(crate) fn match_resources_defaults(resources: &mut Value) {
    if !resources.is_object() {
        return;
    }
    set_default(resources, "/matchPolicy", json!("Equivalent"));
    set_default(resources, "/namespaceSelector", json!({}));
    set_default(resources, "/objectSelector", json!({}));
    for key in ["resourceRules", "excludeResourceRules"] {
        let rules = resources.get_mut(key).and_then(Value::as_array_mut);
        for rule in rules.into_iter().flatten() {
            set_default(rule, "/scope", json!("*"));
        }
    }
}

/// `validateValidatingAdmissionPolicySpec` (metadata is checked apart).
pub fn validate_policy(object: &Value) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut causes = common_spec(spec);
    let env = Env::of(spec);
    let conditions = list(spec, "matchConditions");
    causes.extend(webhooks::conditions::validate(
        conditions,
        "spec.matchConditions",
        &env.declared,
    ));
    let mut env = env;
    causes.extend(variables(spec, &mut env));
    causes.extend(validations(spec, &env));
    causes.extend(audit_annotations(object, spec, &env));
    causes
}

/// What both kinds of policy check first: failurePolicy, paramKind,
/// matchConstraints (with at least one rule).
pub(crate) fn common_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    match spec.get("failurePolicy").and_then(Value::as_str) {
        None => causes.push(common::required("spec.failurePolicy", "")),
        Some(p) if !FAILURE_POLICIES.contains(&p) => causes.push(common::not_supported(
            "spec.failurePolicy",
            p,
            &FAILURE_POLICIES,
        )),
        Some(_) => {}
    }
    if let Some(kind) = spec.get("paramKind").filter(|k| k.is_object()) {
        causes.extend(param_kind(kind));
    }
    match spec.get("matchConstraints").filter(|m| m.is_object()) {
        None => causes.push(common::required("spec.matchConstraints", "")),
        Some(constraints) => {
            causes.extend(match_resources(constraints, "spec.matchConstraints"));
            if list(constraints, "resourceRules").is_empty() {
                causes.push(common::required("spec.matchConstraints.resourceRules", ""));
            }
        }
    }
    causes
}

/// What a policy's expressions may read: kube's admission variables,
/// `params` with a paramKind, and the variables declared so far, typed by
/// their expressions.
pub(crate) struct Env {
    pub declared: Vec<&'static str>,
    variables: Option<HashMap<String, Type<'static>>>,
    /// A MutatingAdmissionPolicy's: `Object{}` and `JSONPatch{}` literals
    /// are declared, and return types are exact.
    mutating: bool,
}

impl Env {
    pub(crate) fn of(spec: &Value) -> Env {
        let mut declared = vec![
            "object",
            "oldObject",
            "request",
            "namespaceObject",
            "authorizer",
        ];
        if spec.get("paramKind").is_some_and(Value::is_object) {
            declared.push("params");
        }
        let variables = (!list(spec, "variables").is_empty()).then(HashMap::new);
        Env {
            declared,
            variables,
            mutating: false,
        }
    }

    /// The environment of a MutatingAdmissionPolicy's expressions.
    pub(crate) fn mutating(spec: &Value) -> Env {
        Env {
            mutating: true,
            ..Env::of(spec)
        }
    }

    /// kube's detail for `text` if it does not compile to `returns`.
    pub(crate) fn check(
        &self,
        text: &str,
        returns: Option<&Type<'static>>,
    ) -> Result<Type<'static>, String> {
        let check = match self.mutating {
            true => check_mutation_expression,
            false => check_admission_expression,
        };
        check(
            text.trim(),
            &self.declared,
            self.variables.as_ref(),
            returns,
        )
    }
}

/// `validateVariable`: a name that is a CEL identifier, an expression
/// that compiles with the variables before it.
pub(crate) fn variables(spec: &Value, env: &mut Env) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, variable) in list(spec, "variables").iter().enumerate() {
        let at = format!("spec.variables[{i}]");
        let name = text(variable, "name");
        if name.trim().is_empty() {
            causes.push(common::required(
                &format!("{at}.name"),
                "name is not specified",
            ));
        } else if !kube_cel::is_identifier(name) {
            let detail = "name is not a valid CEL identifier";
            causes.push(common::invalid_str(&format!("{at}.name"), name, detail));
        }
        let expression = text(variable, "expression");
        let field = format!("{at}.expression");
        let typed = if expression.trim().is_empty() {
            causes.push(common::required(&field, "expression is not specified"));
            Type::Dyn
        } else {
            env.check(expression, None).unwrap_or_else(|detail| {
                causes.push(common::invalid_str(&field, expression, &detail));
                Type::Dyn
            })
        };
        if let Some(v) = env.variables.as_mut() {
            v.insert(name.to_string(), typed);
        }
    }
    causes
}

/// kube's bound on an audit annotation's valueExpression (reported, as
/// kube does, as a Required error).
const MAX_VALUE_EXPRESSION_BYTES: usize = 5 * 1024;

/// kube's limit of audit annotations per policy.
const MAX_AUDIT_ANNOTATIONS: usize = 20;

/// `validateAuditAnnotation` for each, then duplicate keys.
fn audit_annotations(object: &Value, spec: &Value, env: &Env) -> Vec<Cause> {
    let all = list(spec, "auditAnnotations");
    let mut causes = Vec::new();
    if all.len() > MAX_AUDIT_ANNOTATIONS {
        let detail = format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations");
        causes.push(common::invalid("spec.auditAnnotations", "[...]", &detail));
    }
    let policy = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut keys = HashSet::new();
    for (i, annotation) in all.iter().enumerate() {
        let at = format!("spec.auditAnnotations[{i}]");
        let key = text(annotation, "key");
        let qualified = format!("{policy}/{key}");
        common::invalid_each(
            &mut causes,
            &format!("{at}.key"),
            &qualified,
            kube_rules::qualified_name(&qualified),
        );
        let value = text(annotation, "valueExpression");
        let field = format!("{at}.valueExpression");
        if value.trim().is_empty() {
            causes.push(common::required(&field, "valueExpression is not specified"));
        } else if value.trim().len() > MAX_VALUE_EXPRESSION_BYTES {
            let detail = format!("must not exceed {MAX_VALUE_EXPRESSION_BYTES} bytes in length");
            causes.push(common::required(&field, &detail));
        } else if let Err(detail) = env.check(value, None) {
            causes.push(common::invalid_str(&field, value, &detail));
        }
        if !keys.insert(key) {
            causes.push(common::duplicate(&format!("{at}.key"), &gofmt::quote(key)));
        }
    }
    causes
}

fn param_kind(kind: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let api_version = text(kind, "apiVersion");
    if api_version.is_empty() {
        causes.push(common::required("spec.paramKind.apiVersion", ""));
    } else if api_version.split('/').count() > 2 {
        let detail = format!("unexpected GroupVersion string: {api_version}");
        causes.push(common::invalid_str(
            "spec.paramKind.apiVersion",
            api_version,
            &detail,
        ));
    }
    if text(kind, "kind").is_empty() {
        causes.push(common::required("spec.paramKind.kind", ""));
    }
    causes
}

/// `validateMatchResources`.
pub(crate) fn match_resources(resources: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    match resources.get("matchPolicy").and_then(Value::as_str) {
        None => causes.push(common::required(&format!("{at}.matchPolicy"), "")),
        Some(p) if !MATCH_POLICIES.contains(&p) => causes.push(common::not_supported(
            &format!("{at}.matchPolicy"),
            p,
            &MATCH_POLICIES,
        )),
        Some(_) => {}
    }
    for key in ["namespaceSelector", "objectSelector"] {
        let field = format!("{at}.{key}");
        match resources.get(key).filter(|s| s.is_object()) {
            None => causes.push(common::required(&field, "")),
            Some(selector) => causes.extend(webhooks::label_selector(selector, &field, false)),
        }
    }
    for key in ["resourceRules", "excludeResourceRules"] {
        for (i, rule) in list(resources, key).iter().enumerate() {
            causes.extend(named_rule(rule, &format!("{at}.{key}[{i}]")));
        }
    }
    causes
}

/// `validateNamedRuleWithOperations`: resource names, then the rule.
fn named_rule(rule: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut seen = HashSet::new();
    for (i, name) in list(rule, "resourceNames").iter().enumerate() {
        let name = name.as_str().unwrap_or_default();
        let field = format!("{at}.resourceNames[{i}]");
        if !seen.insert(name) {
            causes.push(common::duplicate(&field, &gofmt::quote(name)));
        }
    }
    causes.extend(webhooks::rules::validate(rule, at));
    causes
}

/// The validations and audit annotations: at least one of them, each
/// validation's expression compiled, message and reason checked.
fn validations(spec: &Value, env: &Env) -> Vec<Cause> {
    let all = list(spec, "validations");
    if all.is_empty() && list(spec, "auditAnnotations").is_empty() {
        let detail = "validations or auditAnnotations must contain at least one item";
        return vec![
            common::required("spec.validations", detail),
            common::required("spec.auditAnnotations", detail),
        ];
    }
    let mut causes = Vec::new();
    for (i, validation) in all.iter().enumerate() {
        causes.extend(one_validation(
            validation,
            &format!("spec.validations[{i}]"),
            env,
        ));
    }
    causes
}

fn expression(value: &str, field: &str, env: &Env, returns: Type<'static>) -> Option<Cause> {
    let detail = env.check(value, Some(&returns)).err()?;
    Some(common::invalid_str(field, value, &detail))
}

fn one_validation(validation: &Value, at: &str, env: &Env) -> Vec<Cause> {
    let mut causes = Vec::new();
    let expr = text(validation, "expression");
    if expr.trim().is_empty() {
        let field = format!("{at}.expression");
        causes.push(common::required(&field, "expression is not specified"));
    } else {
        causes.extend(expression(
            expr,
            &format!("{at}.expression"),
            env,
            Type::Bool,
        ));
    }
    let message_expr = text(validation, "messageExpression");
    let field = format!("{at}.messageExpression");
    if !message_expr.is_empty() && message_expr.trim().is_empty() {
        causes.push(common::invalid_str(
            &field,
            message_expr,
            "must be non-empty if specified",
        ));
    } else if !message_expr.trim().is_empty() {
        causes.extend(expression(message_expr, &field, env, Type::String));
    }
    let message = text(validation, "message");
    let field = format!("{at}.message");
    if !message.is_empty() && message.trim().is_empty() {
        let detail = "message must be non-empty if specified";
        causes.push(common::invalid_str(&field, message, detail));
    } else if message.trim().contains(['\n', '\r']) {
        causes.push(common::invalid_str(
            &field,
            message,
            "message must not contain line breaks",
        ));
    }
    if let Some(reason) = validation.get("reason").and_then(Value::as_str) {
        if !REASONS.contains(&reason) {
            causes.push(common::not_supported(
                &format!("{at}.reason"),
                reason,
                &REASONS,
            ));
        }
    }
    causes
}

/// `validateValidatingAdmissionPolicyBindingSpec`.
pub fn validate_binding(object: &Value) -> Vec<Cause> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut causes = common_binding(spec);
    causes.extend(actions(list(spec, "validationActions")));
    causes
}

/// What both kinds of binding check: policyName, paramRef, matchResources.
pub(crate) fn common_binding(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let policy = text(spec, "policyName");
    if policy.is_empty() {
        causes.push(common::required("spec.policyName", ""));
    } else {
        let errs = kube_rules::dns1123_subdomain(policy);
        common::invalid_each(&mut causes, "spec.policyName", policy, errs);
    }
    if let Some(param) = spec.get("paramRef").filter(|p| p.is_object()) {
        causes.extend(param_ref(param));
    }
    if let Some(resources) = spec.get("matchResources").filter(|m| m.is_object()) {
        causes.extend(match_resources(resources, "spec.matchResources"));
    }
    causes
}

fn param_ref(param: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let has_name = !text(param, "name").is_empty();
    let selector = param.get("selector").filter(|s| s.is_object());
    let exclusive = "name and selector are mutually exclusive";
    if has_name && selector.is_some() {
        causes.push(common::forbidden("spec.paramRef.name", exclusive));
    }
    if let Some(selector) = selector {
        causes.extend(webhooks::label_selector(
            selector,
            "spec.paramRef.selector",
            false,
        ));
        if has_name {
            causes.push(common::forbidden("spec.paramRef.selector", exclusive));
        }
    }
    if !has_name && selector.is_none() {
        causes.push(common::required(
            "spec.paramRef",
            "one of name or selector must be specified",
        ));
    }
    let field = "spec.paramRef.parameterNotFoundAction";
    match text(param, "parameterNotFoundAction") {
        "" => causes.push(common::required(field, "")),
        a if !NOT_FOUND_ACTIONS.contains(&a) => {
            causes.push(common::not_supported(field, a, &NOT_FOUND_ACTIONS))
        }
        _ => {}
    }
    causes
}

/// The actions as written.
fn seen_in_order(all: &[Value]) -> Vec<&str> {
    all.iter().map(|a| a.as_str().unwrap_or_default()).collect()
}

/// `validateValidationActions`.
fn actions(all: &[Value]) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut seen = HashSet::new();
    for (i, action) in all.iter().enumerate() {
        let action = action.as_str().unwrap_or_default();
        let field = format!("spec.validationActions[{i}]");
        if !ACTIONS.contains(&action) {
            causes.push(common::not_supported(&field, action, &ACTIONS));
        }
        if !seen.insert(action) {
            causes.push(common::duplicate(&field, &gofmt::quote(action)));
        }
    }
    if seen.contains("Deny") && seen.contains("Warn") {
        let quoted: Vec<String> = seen_in_order(all).iter().map(|a| gofmt::quote(a)).collect();
        let rendered = format!(
            "[]admissionregistration.ValidationAction{{{}}}",
            quoted.join(", ")
        );
        let detail = "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)";
        causes.push(common::invalid("spec.validationActions", &rendered, detail));
    }
    if seen.is_empty() {
        let detail = "at least one validation action is required";
        causes.push(common::required("spec.validationActions", detail));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Value {
        let mut p = json!({"metadata": {"name": "p"}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["deployments"]}]},
            "validations": [{"expression": "object.spec.replicas <= 5"}]}});
        policy_defaults(&mut p);
        p
    }

    fn messages(causes: Vec<Cause>) -> Vec<String> {
        causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn a_defaulted_policy_is_valid() {
        let p = policy();
        assert_eq!(p["spec"]["failurePolicy"], "Fail");
        let constraints = &p["spec"]["matchConstraints"];
        assert_eq!(constraints["matchPolicy"], "Equivalent");
        assert_eq!(constraints["namespaceSelector"], json!({}));
        assert_eq!(constraints["resourceRules"][0]["scope"], "*");
        assert_eq!(messages(validate_policy(&p)), Vec::<String>::new());
    }

    #[test]
    fn bad_fields_get_kubes_messages() {
        let mut p = policy();
        p["spec"]["failurePolicy"] = json!("Sometimes");
        p["spec"]["validations"] =
            json!([{"expression": "object.spec.replicas <", "reason": "Teapot"}]);
        let got = messages(validate_policy(&p));
        assert_eq!(
            got[0],
            r#"spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore""#
        );
        assert!(got[1].starts_with(r#"spec.validations[0].expression: Invalid value: "object.spec.replicas <": compilation failed: "#), "{got:?}");
        assert_eq!(
            got[2],
            r#"spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge""#
        );
        p["spec"]["validations"] = json!([]);
        assert_eq!(messages(validate_policy(&p))[1], "spec.validations: Required value: validations or auditAnnotations must contain at least one item");
    }

    #[test]
    fn bindings_need_a_policy_and_actions() {
        let b = json!({"metadata": {"name": "b"}, "spec": {"validationActions": ["Deny", "Warn"],
                        "paramRef": {"name": "x"}}});
        let got = messages(validate_binding(&b));
        assert_eq!(got[0], "spec.policyName: Required value");
        assert_eq!(
            got[1],
            "spec.paramRef.parameterNotFoundAction: Required value"
        );
        assert!(got[2].starts_with("spec.validationActions: Invalid value: []admissionregistration.ValidationAction{\"Deny\", \"Warn\"}: must not contain both"), "{got:?}");
    }
}
