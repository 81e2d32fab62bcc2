//! The printers of the webhook configurations (their webhooks counted) and the admission policy
//! printers (kube's printValidatingAdmissionPolicy, printMutatingAdmissionPolicy and their
//! bindings', which print alike).

use crate::table::access::{age, format_label_selector, list, name, text};
use crate::table::columns;
use crate::table::columns::{int, text as column, AGE, NAME};
use crate::table::Column;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// What a policy's row counts.
#[derive(Clone, Copy)]
enum Counts {
    Validations,
    Mutations,
}

impl Counts {
    fn key(self) -> &'static str {
        match self {
            Counts::Validations => "/spec/validations",
            Counts::Mutations => "/spec/mutations",
        }
    }
}

fn policy_columns(counts: Counts) -> Vec<Column> {
    let counted = match counts {
        Counts::Validations => int(
            "Validations",
            "Validations indicates the number of validation rules defined in this configuration",
        ),
        Counts::Mutations => int(
            "Mutations",
            "Mutation indicates the number of mutations rules defined in this configuration",
        ),
    };
    vec![
        NAME,
        counted,
        column(
            "ParamKind",
            "ParamKind specifies the kind of resources used to parameterize this policy",
        ),
        AGE,
    ]
}

fn policy_row(policy: &Value, counts: Counts, now: DateTime<Utc>) -> Vec<Value> {
    let param_kind = match policy.pointer("/spec/paramKind") {
        Some(kind) if kind.is_object() => {
            format!("{}/{}", text(kind, "/apiVersion"), text(kind, "/kind"))
        }
        _ => "<unset>".to_string(),
    };
    vec![
        name(policy),
        Value::from(list(policy, counts.key()).len() as i64),
        Value::from(param_kind),
        age(policy, now),
    ]
}

/// ValidatingAdmissionPolicies' columns (their validations counted).
pub(crate) fn validating_policy_columns() -> Vec<Column> {
    policy_columns(Counts::Validations)
}

/// MutatingAdmissionPolicies' columns (their mutations counted).
pub(crate) fn mutating_policy_columns() -> Vec<Column> {
    policy_columns(Counts::Mutations)
}

/// A ValidatingAdmissionPolicy's row.
pub(crate) fn validating_policy_row(policy: &Value, now: DateTime<Utc>) -> Vec<Value> {
    policy_row(policy, Counts::Validations, now)
}

/// A MutatingAdmissionPolicy's row.
pub(crate) fn mutating_policy_row(policy: &Value, now: DateTime<Utc>) -> Vec<Value> {
    policy_row(policy, Counts::Mutations, now)
}

pub(crate) fn binding_columns() -> Vec<Column> {
    vec![
        NAME,
        column(
            "PolicyName",
            "PolicyName indicates the policy definition which the policy binding binded to",
        ),
        column(
            "ParamRef",
            "ParamRef indicates the param resource which sets the configration param",
        ),
        AGE,
    ]
}

/// `namespace/name`, `*/name` without a namespace, else the selector.
fn param_ref(binding: &Value) -> String {
    let Some(param) = binding.pointer("/spec/paramRef").filter(|p| p.is_object()) else {
        return "<unset>".to_string();
    };
    match (text(param, "/name"), text(param, "/namespace")) {
        ("", _) => match param.get("selector") {
            Some(selector) if selector.is_object() => format_label_selector(Some(selector)),
            _ => "<unset>".to_string(),
        },
        (name, "") => format!("*/{name}"),
        (name, namespace) => format!("{namespace}/{name}"),
    }
}

pub(crate) fn binding_row(binding: &Value, now: DateTime<Utc>) -> Vec<Value> {
    vec![
        name(binding),
        Value::from(text(binding, "/spec/policyName")),
        Value::from(param_ref(binding)),
        age(binding, now),
    ]
}

/// Mutating and validating webhook configurations.
pub(crate) fn webhook_configuration_columns() -> Vec<Column> {
    vec![
        columns::NAME,
        columns::int(
            "Webhooks",
            "Webhooks indicates the number of webhooks registered in this configuration",
        ),
        columns::AGE,
    ]
}

pub(crate) fn webhook_configuration_row(obj: &Value, now: DateTime<Utc>) -> Vec<Value> {
    let count = list(obj, "/webhooks").len() as i64;
    vec![name(obj), Value::from(count), age(obj, now)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn param_kind_and_param_ref() {
        let policy = json!({"metadata": {"name": "p"}, "spec": {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}, "validations": [{}, {}]}});
        let row = policy_row(&policy, Counts::Validations, Utc::now());
        assert_eq!((&row[1], &row[2]), (&json!(2), &json!("v1/ConfigMap")));
        let binding = |param: Value| {
            json!({"metadata": {"name": "b"},
                                             "spec": {"policyName": "p", "paramRef": param}})
        };
        assert_eq!(param_ref(&binding(json!({"name": "x"}))), "*/x");
        assert_eq!(
            param_ref(&binding(json!({"name": "x", "namespace": "n"}))),
            "n/x"
        );
        assert_eq!(param_ref(&json!({"spec": {}})), "<unset>");
    }
}
