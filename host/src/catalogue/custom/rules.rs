//! A CRD version's `x-kubernetes-validations` (kube-cel's `ValidationRules`,
//! compiled once per CRD version): their violations as the causes of kube's
//! 422 Invalid.

use std::time::Instant;

use kube_cel::ValidationRules;
use serde_json::Value;

use crate::apimachinery::status::{ApiError, ApiResult, Cause};

/// Compiles every rule of the schema; a rule that does not compile (the
/// CRD's validation refuses those, so only a CRD stored before that check)
/// reports itself on every write instead of being skipped.
pub fn compile(open_api_v3_schema: &Value) -> Option<ValidationRules> {
    let (rules, _) = ValidationRules::build(open_api_v3_schema, "openAPIV3Schema");
    (!rules.is_empty()).then_some(rules)
}

/// The violations of `obj` (and, for transition rules, of `old`); kube's
/// 504 when `deadline` (the request's) passes first.
pub fn causes(
    rules: &ValidationRules,
    obj: &Value,
    old: Option<&Value>,
    deadline: Option<Instant>,
) -> ApiResult<Vec<Cause>> {
    let violations = rules
        .validate_until(obj, old, deadline)
        .map_err(|_| ApiError::request_timeout())?;
    Ok(violations
        .iter()
        .map(|v| Cause {
            reason: v.kind.reason(),
            field: v.field.clone(),
            message: v.body(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::status::ApiError;
    use serde_json::json;

    #[test]
    fn rule_violations_become_a_kube_invalid_status() {
        let schema = json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "maxReplicas": {"type": "integer"}},
            "x-kubernetes-validations": [
                {"rule": "self.replicas <= self.maxReplicas", "message": "must be at most maxReplicas"},
            ],
        }}});
        let rules = ValidationRules::compile(&schema).unwrap_or_else(|p| panic!("{p:?}"));
        let obj = json!({"spec": {"replicas": 5, "maxReplicas": 3}});
        let causes = causes(&rules, &obj, None, None).unwrap();
        let error = ApiError::invalid("example.com", "Widget", "w", causes);
        assert_eq!(error.code, 422);
        assert_eq!(
        error.message,
        "Widget.example.com \"w\" is invalid: spec: Invalid value: \"object\": must be at most \
         maxReplicas"
    );
    }

    /// The rules of real operators' CRDs (the e2e fixtures) stay within kube's
    /// estimated cost limits, as kube-apiserver accepts them.
    #[test]
    fn real_crds_rules_are_within_the_cost_limits() {
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/e2e/fixtures/crds");
        for file in [
            "gateway.networking.k8s.io_httproutes.yaml",
            "cert-manager.io_certificates.yaml",
            "application-crd.yaml",
            "monitoring.coreos.com_prometheusrules.yaml",
            "monitoring.coreos.com_servicemonitors.yaml",
        ] {
            let text = std::fs::read_to_string(format!("{fixtures}/{file}")).unwrap();
            let crd: Value = crate::apimachinery::yaml::from_slice(text.as_bytes()).unwrap();
            for version in crd["spec"]["versions"].as_array().unwrap() {
                let schema = &version["schema"]["openAPIV3Schema"];
                let problems = ValidationRules::problems(schema, "openAPIV3Schema");
                let messages: Vec<String> = problems.iter().map(|p| p.message()).collect();
                assert!(
                    messages.is_empty(),
                    "{file} {}: {messages:#?}",
                    version["name"]
                );
            }
        }
    }
}
