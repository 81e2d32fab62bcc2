//! The host calling kube-cel's `ValidationRules` for a custom resource, as
//! the CRD handlers will: violations become `Cause`s of a 422 Invalid.

use kube_cel::ValidationRules;
use serde_json::json;

use crate::status::{ApiError, Cause};

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
    let causes: Vec<Cause> = rules
        .validate(&obj, None)
        .iter()
        .map(|v| Cause {
            reason: v.kind.reason(),
            field: v.field.clone(),
            message: v.body(),
        })
        .collect();
    let error = ApiError::invalid("example.com", "Widget", "w", causes);
    assert_eq!(error.code, 422);
    assert_eq!(
        error.message,
        "Widget.example.com \"w\" is invalid: spec: Invalid value: \"object\": must be at most \
         maxReplicas"
    );
}
