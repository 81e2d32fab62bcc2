//! Built-in authorizer `always-allow`, kube-apiserver's AlwaysAllow
//! (`--authorization-mode=AlwaysAllow`, staging/src/k8s.io/apiserver/pkg/
//! authorization/authorizerfactory/builtin.go): every request is allowed with
//! an empty reason, and a rules review lists one rule that grants everything.
//! No configuration.

use capstan_plugin_sdk::access::{NonResourceRule, ResourceRule};
use capstan_plugin_sdk::{
    AuthorizerPlugin, SubjectAccessReview, SubjectAccessReviewStatus, SubjectRulesReview,
    SubjectRulesReviewStatus,
};

/// The plugin.
pub struct AlwaysAllow;

impl AuthorizerPlugin for AlwaysAllow {
    fn authorize(_review: &SubjectAccessReview) -> Result<SubjectAccessReviewStatus, String> {
        Ok(SubjectAccessReviewStatus::allow(""))
    }

    /// kube's `alwaysAllowAuthorizer.RulesFor`: `*` verbs on `*` groups and
    /// resources, and `*` verbs on every non-resource URL; complete.
    fn rules(_review: &SubjectRulesReview) -> Result<SubjectRulesReviewStatus, String> {
        let all = || vec!["*".to_string()];
        Ok(SubjectRulesReviewStatus {
            resource_rules: vec![ResourceRule {
                verbs: all(),
                api_groups: all(),
                resources: all(),
                resource_names: Vec::new(),
            }],
            non_resource_rules: vec![NonResourceRule {
                verbs: all(),
                non_resource_urls: all(),
            }],
            incomplete: false,
            evaluation_error: String::new(),
        })
    }
}

capstan_plugin_sdk::authorizer_plugin!(AlwaysAllow);

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_plugin_sdk::{json, run_authorizer, Value};

    fn run(input: Value) -> Value {
        let out = run_authorizer::<AlwaysAllow>(&input.to_string()).unwrap();
        serde_json::from_str(&out).unwrap()
    }

    #[test]
    fn allows_resource_and_non_resource_requests_with_empty_reason() {
        let out = run(json!({"spec": {"user": "anyone",
            "resourceAttributes": {"verb": "delete", "resource": "nodes", "name": "n1"}}}));
        assert_eq!(out["status"], json!({"allowed": true}));
        let out = run(json!({"spec": {"user": "",
            "nonResourceAttributes": {"verb": "get", "path": "/healthz"}}}));
        assert_eq!(out["status"], json!({"allowed": true}));
        assert_eq!(out["kind"], "SubjectAccessReview");
    }

    #[test]
    fn rules_review_grants_everything_and_is_complete() {
        let out = run(json!({"kind": "SubjectRulesReview",
            "spec": {"namespace": "default", "user": "alice"}}));
        let status: SubjectRulesReviewStatus =
            serde_json::from_value(out["status"].clone()).unwrap();
        let all = vec!["*".to_string()];
        assert_eq!(status.resource_rules.len(), 1);
        assert_eq!(status.resource_rules[0].verbs, all);
        assert_eq!(status.resource_rules[0].api_groups, all);
        assert_eq!(status.resource_rules[0].resources, all);
        assert!(status.resource_rules[0].resource_names.is_empty());
        assert_eq!(status.non_resource_rules.len(), 1);
        assert_eq!(status.non_resource_rules[0].verbs, all);
        assert_eq!(status.non_resource_rules[0].non_resource_urls, all);
        assert!(!status.incomplete);
        assert_eq!(out["status"]["resourceRules"][0]["apiGroups"], json!(["*"]));
    }

    /// kube's wire name is `nonResourceURLs`; the SDK's `NonResourceRule`
    /// currently serializes `nonResourceUrls` (plugin-sdk/src/access.rs).
    #[test]
    fn rules_review_uses_kubes_field_names() {
        let out = run(json!({"kind": "SubjectRulesReview", "spec": {"user": "alice"}}));
        assert_eq!(
            out["status"]["nonResourceRules"][0]["nonResourceURLs"],
            json!(["*"])
        );
    }
}
