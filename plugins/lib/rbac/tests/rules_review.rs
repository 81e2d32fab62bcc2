//! SelfSubjectRulesReview: the rules a user has in a namespace.

use capstan_rbac::fixtures::{binding, cluster_role, role};
use capstan_rbac::rules::rule;
use capstan_rbac::{rules_for, Lists, NonResourceRule, Policy, PolicyRule, ResourceRule};

fn policy() -> Policy {
    let mixed = PolicyRule {
        non_resource_urls: vec!["/healthz".into()],
        ..rule(&["get"], &[""], &["nodes"])
    };
    Policy::new(&Lists {
        cluster_roles: vec![cluster_role("basic", &[mixed])],
        cluster_role_bindings: vec![binding(
            "",
            "basic",
            "ClusterRole",
            "basic",
            "Group",
            "devs",
        )],
        roles: vec![role(
            "team",
            "edit",
            &[rule(&["create"], &["apps"], &["deployments"])],
        )],
        role_bindings: vec![
            binding("team", "edit", "Role", "edit", "User", "alice"),
            binding("team", "broken", "Role", "gone", "User", "alice"),
        ],
    })
}

#[test]
fn cluster_wide_rules_split_into_resource_and_non_resource_rules() {
    let groups = vec!["devs".to_string()];
    let rules = rules_for(&policy(), "alice", &groups, "");
    assert_eq!(
        rules.resource_rules,
        vec![ResourceRule {
            verbs: vec!["get".into()],
            api_groups: vec!["".into()],
            resources: vec!["nodes".into()],
            resource_names: vec![],
        }]
    );
    assert_eq!(
        rules.non_resource_rules,
        vec![NonResourceRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/healthz".into()],
        }]
    );
    assert_eq!(rules.evaluation_error, "");
}

#[test]
fn namespace_adds_its_role_bindings_and_their_errors() {
    let groups = vec!["devs".to_string()];
    let rules = rules_for(&policy(), "alice", &groups, "team");
    assert_eq!(rules.resource_rules.len(), 2);
    assert_eq!(rules.resource_rules[1].resources, vec!["deployments"]);
    assert_eq!(
        rules.evaluation_error,
        "role.rbac.authorization.k8s.io \"gone\" not found"
    );
    assert!(rules_for(&policy(), "alice", &[], "other")
        .resource_rules
        .is_empty());
}

#[test]
fn resource_rules_serialize_like_the_api() {
    let rule = ResourceRule {
        verbs: vec!["get".into()],
        api_groups: vec!["".into()],
        resources: vec!["pods".into()],
        resource_names: vec![],
    };
    assert_eq!(
        serde_json::to_value(&rule).unwrap(),
        serde_json::json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})
    );
    let url = NonResourceRule {
        verbs: vec!["get".into()],
        non_resource_urls: vec!["/x".into()],
    };
    assert_eq!(
        serde_json::to_value(&url).unwrap(),
        serde_json::json!({"verbs": ["get"], "nonResourceURLs": ["/x"]})
    );
}
