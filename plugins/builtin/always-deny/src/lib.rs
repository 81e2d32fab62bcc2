//! Built-in authorizer `always-deny`, kube-apiserver's AlwaysDeny
//! (staging/src/k8s.io/apiserver/pkg/authorization/authorizerfactory/builtin.go).
//!
//! Like kube, it answers every request with *no opinion* and the reason
//! `Everything is forbidden.`: a request no later authorizer allows is then
//! forbidden. With the configuration `{"decision": "Deny"}` it denies outright
//! instead (later authorizers are not asked). A rules review gets an empty,
//! complete rule list, as kube's `RulesFor`.

use capstan_plugin_sdk::{
    host, AuthorizerPlugin, SubjectAccessReview, SubjectAccessReviewStatus, SubjectRulesReview,
    SubjectRulesReviewStatus,
};
use serde::Deserialize;

/// kube's reason (authorizerfactory/builtin.go, `alwaysDenyAuthorizer.Authorize`).
pub const REASON: &str = "Everything is forbidden.";

/// The plugin.
pub struct AlwaysDeny;

/// `{"decision": "NoOpinion" | "Deny"}`, "NoOpinion" (kube's behaviour) by default.
#[derive(Debug, Default, Deserialize)]
struct Config {
    #[serde(default)]
    decision: Decision,
}

#[derive(Debug, Default, PartialEq, Eq, Deserialize)]
enum Decision {
    #[default]
    NoOpinion,
    Deny,
}

impl AuthorizerPlugin for AlwaysDeny {
    fn authorize(_review: &SubjectAccessReview) -> Result<SubjectAccessReviewStatus, String> {
        let config: Config = host::config()?;
        Ok(match config.decision {
            Decision::Deny => SubjectAccessReviewStatus::deny(REASON),
            Decision::NoOpinion => SubjectAccessReviewStatus {
                reason: REASON.to_string(),
                ..SubjectAccessReviewStatus::no_opinion()
            },
        })
    }

    /// No rules at all, and the list is complete.
    fn rules(_review: &SubjectRulesReview) -> Result<SubjectRulesReviewStatus, String> {
        Ok(SubjectRulesReviewStatus::default())
    }
}

capstan_plugin_sdk::authorizer_plugin!(AlwaysDeny);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, run_authorizer, testing, Value};

    fn run(input: Value) -> Value {
        let out = run_authorizer::<AlwaysDeny>(&input.to_string()).unwrap();
        serde_json::from_str(&out).unwrap()
    }

    fn request() -> Value {
        json!({"spec": {"user": "admin", "groups": ["system:masters"],
            "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "ns"}}})
    }

    #[test]
    fn answers_no_opinion_with_kubes_reason_by_default() {
        testing::reset();
        let out = run(request());
        assert_eq!(
            out["status"],
            json!({"allowed": false, "reason": "Everything is forbidden."})
        );
    }

    #[test]
    fn denies_outright_when_configured() {
        testing::reset();
        testing::set_config(json!({"decision": "Deny"}));
        let out = run(request());
        assert_eq!(
            out["status"],
            json!({"allowed": false, "denied": true, "reason": "Everything is forbidden."})
        );
    }

    #[test]
    fn rejects_an_unknown_decision() {
        testing::reset();
        testing::set_config(json!({"decision": "Maybe"}));
        let err = run_authorizer::<AlwaysDeny>(&request().to_string()).unwrap_err();
        assert!(err.starts_with("invalid plugin configuration"), "{err}");
    }

    #[test]
    fn rules_review_is_empty_and_complete() {
        testing::reset();
        let out =
            run(json!({"kind": "SubjectRulesReview", "spec": {"namespace": "ns", "user": "u"}}));
        assert_eq!(
            out["status"],
            json!({"resourceRules": [], "nonResourceRules": [], "incomplete": false})
        );
    }
}
