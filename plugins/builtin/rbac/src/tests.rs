//! The plugin against the SDK's host double.

use super::*;
use capstan_plugin_sdk::access::{
    NonResourceAttributes as SarNonResource, ResourceAttributes as SarResource,
};
use capstan_plugin_sdk::{json, run_authorizer, testing};
use capstan_rbac::fixtures::{binding, cluster_role, role};
use capstan_rbac::rules::rule;

const RBAC: &str = "rbac.authorization.k8s.io/v1";

/// A fresh store and cache, with a `view` ClusterRole (get pods) and an
/// `edit` Role in `team` (create deployments).
fn setup() {
    testing::reset();
    cache::forget();
    testing::put_object(
        RBAC,
        "clusterroles",
        cluster_role("view", &[rule(&["get", "list"], &[""], &["pods"])]),
    );
    testing::put_object(
        RBAC,
        "roles",
        role(
            "team",
            "edit",
            &[rule(&["create"], &["apps"], &["deployments"])],
        ),
    );
}

fn review(
    user: &str,
    verb: &str,
    namespace: &str,
    group: &str,
    resource: &str,
) -> SubjectAccessReview {
    SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: user.into(),
            groups: vec!["system:authenticated".into()],
            resource_attributes: Some(SarResource {
                verb: verb.into(),
                namespace: namespace.into(),
                group: group.into(),
                resource: resource.into(),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn status(review: &SubjectAccessReview) -> SubjectAccessReviewStatus {
    Rbac::authorize(review).unwrap()
}

#[test]
fn allows_through_a_cluster_role_binding() {
    setup();
    testing::put_object(
        RBAC,
        "clusterrolebindings",
        binding(
            "",
            "viewers",
            "ClusterRole",
            "view",
            "Group",
            "system:authenticated",
        ),
    );
    let s = status(&review("alice", "list", "any", "", "pods"));
    assert_eq!(
        s,
        SubjectAccessReviewStatus::allow(
            "RBAC: allowed by ClusterRoleBinding \"viewers\" of ClusterRole \"view\" to Group \"system:authenticated\""
        )
    );
    assert!(!status(&review("alice", "delete", "any", "", "pods")).allowed);
}

#[test]
fn allows_through_a_role_binding_only_in_its_namespace() {
    setup();
    testing::put_object(
        RBAC,
        "rolebindings",
        binding("team", "editors", "Role", "edit", "User", "alice"),
    );
    let s = status(&review("alice", "create", "team", "apps", "deployments"));
    assert!(s.allowed);
    assert_eq!(
        s.reason,
        "RBAC: allowed by RoleBinding \"editors/team\" of Role \"edit\" to User \"alice\""
    );
    let elsewhere = status(&review("alice", "create", "other", "apps", "deployments"));
    assert_eq!(elsewhere, SubjectAccessReviewStatus::no_opinion());
    assert!(!status(&review("alice", "create", "", "apps", "deployments")).allowed);
}

#[test]
fn no_opinion_otherwise_never_deny() {
    setup();
    let s = status(&review("mallory", "get", "team", "", "pods"));
    assert!(!s.allowed && !s.denied);
    let empty = SubjectAccessReview::default();
    assert_eq!(status(&empty), SubjectAccessReviewStatus::no_opinion());
}

#[test]
fn no_opinion_carries_resolution_errors() {
    setup();
    testing::put_object(
        RBAC,
        "clusterrolebindings",
        binding("", "dangling", "ClusterRole", "gone", "User", "alice"),
    );
    let s = status(&review("alice", "get", "", "", "pods"));
    assert!(!s.allowed && !s.denied);
    assert_eq!(
        s.reason,
        "RBAC: clusterrole.rbac.authorization.k8s.io \"gone\" not found"
    );
}

#[test]
fn non_resource_requests_use_cluster_bindings() {
    setup();
    let health = capstan_rbac::PolicyRule {
        verbs: vec!["get".into()],
        non_resource_urls: vec!["/healthz".into(), "/livez/*".into()],
        ..Default::default()
    };
    testing::put_object(RBAC, "clusterroles", cluster_role("health", &[health]));
    testing::put_object(
        RBAC,
        "clusterrolebindings",
        binding(
            "",
            "health",
            "ClusterRole",
            "health",
            "Group",
            "system:authenticated",
        ),
    );
    let mut r = review("alice", "", "", "", "");
    r.spec.resource_attributes = None;
    r.spec.non_resource_attributes = Some(SarNonResource {
        path: "/livez/etcd".into(),
        verb: "get".into(),
    });
    assert!(status(&r).allowed);
}

#[test]
fn cache_refreshes_when_bindings_change() {
    setup();
    let ask = || {
        status(&review(
            "system:serviceaccount:team:bot",
            "get",
            "team",
            "",
            "pods",
        ))
    };
    assert!(!ask().allowed);
    testing::put_object(
        RBAC,
        "rolebindings",
        binding(
            "team",
            "bot-view",
            "ClusterRole",
            "view",
            "ServiceAccount",
            "bot",
        ),
    );
    assert!(ask().allowed, "a new binding is seen");
    assert!(ask().allowed, "and kept while nothing moves");
    testing::remove_object(RBAC, "rolebindings", "team", "bot-view");
    assert!(!ask().allowed, "a removed binding is forgotten");
}

#[test]
fn cache_refreshes_when_roles_change() {
    setup();
    testing::put_object(
        RBAC,
        "rolebindings",
        binding("team", "editors", "Role", "edit", "User", "alice"),
    );
    let ask = || status(&review("alice", "delete", "team", "apps", "deployments"));
    assert!(!ask().allowed);
    testing::put_object(
        RBAC,
        "roles",
        role("team", "edit", &[rule(&["*"], &["apps"], &["deployments"])]),
    );
    assert!(ask().allowed);
}

#[test]
fn store_failures_are_errors() {
    setup();
    testing::fail_reads(Some("store down"));
    assert_eq!(
        Rbac::authorize(&review("alice", "get", "", "", "pods")).unwrap_err(),
        "store down"
    );
}

#[test]
fn rules_review_lists_cluster_and_namespace_rules() {
    setup();
    testing::put_object(
        RBAC,
        "clusterrolebindings",
        binding("", "viewers", "ClusterRole", "view", "User", "alice"),
    );
    testing::put_object(
        RBAC,
        "rolebindings",
        binding("team", "editors", "Role", "edit", "User", "alice"),
    );
    let input = json!({"kind": "SubjectRulesReview",
        "spec": {"namespace": "team", "user": "alice", "groups": ["system:authenticated"]}});
    let out: Value = run_authorizer::<Rbac>(&input.to_string())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        out["status"],
        json!({
            "resourceRules": [
                {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]},
                {"verbs": ["create"], "apiGroups": ["apps"], "resources": ["deployments"]}
            ],
            "nonResourceRules": [],
            "incomplete": false
        })
    );
}

/// Kubernetes names the field `nonResourceURLs`; the SDK's
/// `access::NonResourceRule` (camelCase) writes `nonResourceUrls` today.
#[test]
fn rules_review_names_non_resource_urls_like_the_api() {
    setup();
    let any = capstan_rbac::PolicyRule {
        verbs: vec!["get".into()],
        non_resource_urls: vec!["*".into()],
        ..Default::default()
    };
    testing::put_object(RBAC, "clusterroles", cluster_role("urls", &[any]));
    testing::put_object(
        RBAC,
        "clusterrolebindings",
        binding("", "urls", "ClusterRole", "urls", "User", "alice"),
    );
    let input = json!({"kind": "SubjectRulesReview", "spec": {"user": "alice"}});
    let out: Value = run_authorizer::<Rbac>(&input.to_string())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        out["status"]["nonResourceRules"],
        json!([{"verbs": ["get"], "nonResourceURLs": ["*"]}])
    );
}

#[test]
fn access_review_round_trip() {
    setup();
    testing::put_object(
        RBAC,
        "clusterrolebindings",
        binding("", "viewers", "ClusterRole", "view", "User", "alice"),
    );
    let input = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "x"}}});
    let out: Value = run_authorizer::<Rbac>(&input.to_string())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(out["status"]["allowed"], true);
    assert_eq!(
        out["status"]["reason"],
        "RBAC: allowed by ClusterRoleBinding \"viewers\" of ClusterRole \"view\" to User \"alice\""
    );
}
