//! The rules a user has in a namespace, in SelfSubjectRulesReview's shapes
//! (kube's `RBACAuthorizer.RulesFor`): each applying PolicyRule becomes a
//! ResourceRule when it names resources and a NonResourceRule when it names
//! non-resource URLs (both, for a rule with both).

use serde::{Deserialize, Serialize};

use crate::policy::Policy;
use crate::rules::PolicyRule;
use kube_rules::gofmt::aggregate;

/// authorization.k8s.io/v1 ResourceRule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRule {
    pub verbs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
}

/// authorization.k8s.io/v1 NonResourceRule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NonResourceRule {
    pub verbs: Vec<String>,
    #[serde(
        default,
        rename = "nonResourceURLs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub non_resource_urls: Vec<String>,
}

/// The answer of a rules review.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubjectRules {
    pub resource_rules: Vec<ResourceRule>,
    pub non_resource_rules: Vec<NonResourceRule>,
    /// The resolution errors as kube's authorizer words them, "" when none.
    pub evaluation_error: String,
}

/// The rules `user` (with `groups`) has in `namespace` ("" = cluster-wide).
pub fn rules_for(policy: &Policy, user: &str, groups: &[String], namespace: &str) -> SubjectRules {
    let resolution = policy.resolve(user, groups, namespace);
    let errors: Vec<String> = resolution
        .errors
        .iter()
        .map(|e| e.authorizer_message())
        .collect();
    let mut answer = SubjectRules {
        evaluation_error: aggregate(&errors),
        ..Default::default()
    };
    for rule in resolution.rules {
        add_rule(&mut answer, rule);
    }
    answer
}

fn add_rule(answer: &mut SubjectRules, rule: PolicyRule) {
    if !rule.resources.is_empty() {
        answer.resource_rules.push(ResourceRule {
            verbs: rule.verbs.clone(),
            api_groups: rule.api_groups,
            resources: rule.resources,
            resource_names: rule.resource_names,
        });
    }
    if !rule.non_resource_urls.is_empty() {
        answer.non_resource_rules.push(NonResourceRule {
            verbs: rule.verbs,
            non_resource_urls: rule.non_resource_urls,
        });
    }
}
