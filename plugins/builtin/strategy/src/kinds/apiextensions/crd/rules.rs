//! The x-kubernetes-validations checks of a CRD's schema (compilation,
//! messages, reasons, fieldPath, oldSelf, cost), done by kube-cel's
//! [`ValidationRules`] and reported as causes.

use capstan_plugin_sdk::Cause;
use kube_cel::{RuleProblem, ValidationRules};
use serde_json::Value;

/// The rule problems of `schema`, at `path` (`….openAPIV3Schema`).
pub fn validate(schema: &Value, path: &str) -> Vec<Cause> {
    ValidationRules::problems(schema, path)
        .iter()
        .map(cause)
        .collect()
}

fn cause(problem: &RuleProblem) -> Cause {
    Cause {
        cause_type: problem.reason().to_string(),
        field: problem.field.clone(),
        message: problem.body(),
    }
}
