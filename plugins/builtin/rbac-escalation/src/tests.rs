//! The plugin against the SDK's host double.

use super::*;
use capstan_plugin_sdk::{json, run_admission, testing, UserInfo};
use capstan_rbac::fixtures::{binding, cluster_role, role, rules_json};
use capstan_rbac::rules::rule;
use capstan_rbac::{full_authority, PolicyRule};

const RBAC: &str = "rbac.authorization.k8s.io/v1";
const HELD: &str = "is attempting to grant RBAC permissions not currently held:";

/// A fresh store and cache where alice reads everything cluster-wide and
/// may create deployments in `team`; `admin` has full authority.
fn setup() {
    testing::reset();
    cache::forget();
    let reads = rule(&["get", "list", "watch"], &["*"], &["*"]);
    testing::put_object(RBAC, "clusterroles", cluster_role("reader", &[reads]));
    testing::put_object(
        RBAC,
        "clusterroles",
        cluster_role("admin", &full_authority()),
    );
    let deploy = rule(&["create"], &["apps"], &["deployments"]);
    testing::put_object(RBAC, "roles", role("team", "deployer", &[deploy]));
    testing::put_object(
        RBAC,
        "clusterrolebindings",
        binding("", "readers", "ClusterRole", "reader", "User", "alice"),
    );
    testing::put_object(
        RBAC,
        "rolebindings",
        binding("team", "deployers", "Role", "deployer", "User", "alice"),
    );
}

fn grant(namespace: &str, name: &str, rules: &[PolicyRule]) {
    let (resource, object) = match namespace {
        "" => ("clusterroles", cluster_role(name, rules)),
        ns => ("roles", role(ns, name, rules)),
    };
    testing::put_object(RBAC, resource, object);
    let bound = binding(
        namespace,
        name,
        object_kind(namespace),
        name,
        "User",
        "alice",
    );
    let bindings = if namespace.is_empty() {
        "clusterrolebindings"
    } else {
        "rolebindings"
    };
    testing::put_object(RBAC, bindings, bound);
}

fn object_kind(namespace: &str) -> &'static str {
    if namespace.is_empty() {
        "ClusterRole"
    } else {
        "Role"
    }
}

fn as_user(mut request: AdmissionRequest, user: &str, groups: &[&str]) -> AdmissionRequest {
    request.user_info = UserInfo {
        username: user.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..Default::default()
    };
    request
}

fn write(op: Operation, resource: &str, namespace: &str, object: Value) -> AdmissionRequest {
    let kind = match resource {
        "roles" => "Role",
        "clusterroles" => "ClusterRole",
        "rolebindings" => "RoleBinding",
        _ => "ClusterRoleBinding",
    };
    let mut request = testing::request(op, RBAC, resource, kind, namespace, object);
    if op == Operation::Update {
        request.old_object = Some(json!({"metadata": {"name": request.name.clone()}}));
    }
    as_user(request, "alice", &["system:authenticated"])
}

fn create_role(namespace: &str, name: &str, rules: &[PolicyRule]) -> AdmissionRequest {
    let (resource, object) = match namespace {
        "" => ("clusterroles", cluster_role(name, rules)),
        ns => ("roles", role(ns, name, rules)),
    };
    write(Operation::Create, resource, namespace, object)
}

fn create_binding(namespace: &str, name: &str, kind: &str, role_name: &str) -> AdmissionRequest {
    let resource = match namespace {
        "" => "clusterrolebindings",
        _ => "rolebindings",
    };
    let object = binding(namespace, name, kind, role_name, "User", "bob");
    write(Operation::Create, resource, namespace, object)
}

fn review(request: &AdmissionRequest) -> AdmissionResponse {
    RbacEscalation::review(request).unwrap()
}

#[test]
fn other_resources_and_operations_are_allowed() {
    setup();
    let pod = testing::request(Operation::Create, "v1", "pods", "Pod", "team", json!({}));
    assert!(review(&pod).allowed);
    let escalating = create_role("", "root", &full_authority());
    let mut delete = escalating.clone();
    delete.operation = Operation::Delete;
    assert!(review(&delete).allowed);
    assert!(!review(&escalating).allowed);
}

#[test]
fn system_masters_may_escalate() {
    setup();
    let request = as_user(
        create_role("", "root", &full_authority()),
        "root",
        &["system:masters"],
    );
    assert!(review(&request).allowed);
}

#[test]
fn roles_with_held_rules_are_allowed() {
    setup();
    let reads = rule(&["get", "list"], &[""], &["pods", "pods/log"]);
    assert!(review(&create_role("", "pod-reader", std::slice::from_ref(&reads))).allowed);
    assert!(review(&create_role("any", "pod-reader", &[reads])).allowed);
    let deploy = rule(&["create", "get"], &["apps"], &["deployments"]);
    assert!(review(&create_role("team", "deployer-2", &[deploy])).allowed);
}

#[test]
fn escalating_cluster_role_is_forbidden_with_kubes_message() {
    setup();
    let deploy = rule(&["create"], &["apps"], &["deployments"]);
    let r = review(&create_role("", "foo", &[deploy]));
    assert!(!r.allowed);
    assert_eq!(r.code(), 403);
    assert_eq!(
        r.message(),
        "clusterroles.rbac.authorization.k8s.io \"foo\" is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) \
         is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"create\"]}"
    );
    let status = r.status.as_ref().unwrap();
    assert_eq!(status.reason, "Forbidden");
    let details = status.details.as_ref().unwrap();
    assert_eq!(
        (
            details.group.as_str(),
            details.kind.as_str(),
            details.name.as_str()
        ),
        ("rbac.authorization.k8s.io", "clusterroles", "foo")
    );
}

#[test]
fn role_rules_are_checked_in_the_roles_namespace() {
    setup();
    let deploy = rule(&["create"], &["apps"], &["deployments"]);
    assert!(review(&create_role("team", "x", std::slice::from_ref(&deploy))).allowed);
    let r = review(&create_role("other", "x", &[deploy]));
    assert_eq!(
        r.message(),
        format!(
            "roles.rbac.authorization.k8s.io \"x\" is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) \
             {HELD}\n{{APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"create\"]}}"
        )
    );
}

#[test]
fn update_adding_rules_is_checked_too() {
    setup();
    let secrets = rule(&["delete"], &[""], &["secrets"]);
    let request = write(
        Operation::Update,
        "roles",
        "team",
        role("team", "deployer", &[secrets]),
    );
    let r = review(&request);
    assert_eq!(r.code(), 403);
    assert!(r
        .message()
        .ends_with("{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"delete\"]}"));
}

#[test]
fn verb_escalate_allows_writing_any_rules() {
    setup();
    let mut escalate = rule(
        &["escalate"],
        &["rbac.authorization.k8s.io"],
        &["clusterroles"],
    );
    escalate.resource_names = vec!["foo".into()];
    grant("", "escalator", &[escalate]);
    let mut update = write(
        Operation::Update,
        "clusterroles",
        "",
        cluster_role("foo", &full_authority()),
    );
    update.name = "foo".into();
    assert!(review(&update).allowed);
    let create = create_role("", "foo", &full_authority());
    assert!(!review(&create).allowed, "a create names no object in kube");
    let any = rule(&["escalate"], &["rbac.authorization.k8s.io"], &["roles"]);
    grant("team", "role-escalator", &[any]);
    assert!(review(&create_role("team", "big", &full_authority())).allowed);
    assert!(!review(&create_role("other", "big", &full_authority())).allowed);
}

#[test]
fn aggregation_rule_needs_full_authority() {
    setup();
    let mut aggregated = cluster_role("agg", &[]);
    aggregated["aggregationRule"] =
        json!({"clusterRoleSelectors": [{"matchLabels": {"agg": "true"}}]});
    let request = write(Operation::Create, "clusterroles", "", aggregated.clone());
    let r = review(&request);
    assert_eq!(
        r.message(),
        "clusterroles.rbac.authorization.k8s.io \"agg\" is forbidden: must have cluster-admin privileges to use the aggregationRule"
    );
    let mut dropping = write(
        Operation::Update,
        "clusterroles",
        "",
        cluster_role("agg", &[]),
    );
    dropping.old_object = Some(aggregated.clone());
    assert_eq!(review(&dropping).code(), 403, "removing it counts too");
    let admin = as_user(request, "root", &[]);
    testing::put_object(
        RBAC,
        "clusterrolebindings",
        binding("", "root", "ClusterRole", "admin", "User", "root"),
    );
    assert!(review(&admin).allowed);
}

#[test]
fn bindings_to_held_roles_are_allowed() {
    setup();
    assert!(review(&create_binding("", "readers-2", "ClusterRole", "reader")).allowed);
    assert!(review(&create_binding("team", "d", "Role", "deployer")).allowed);
    assert!(review(&create_binding("other", "r", "ClusterRole", "reader")).allowed);
}

#[test]
fn binding_a_role_with_more_rights_is_forbidden() {
    setup();
    let r = review(&create_binding("", "admins", "ClusterRole", "admin"));
    assert_eq!(r.code(), 403);
    assert_eq!(
        r.message(),
        format!(
            "clusterrolebindings.rbac.authorization.k8s.io \"admins\" is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) \
             {HELD}\n{{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}}\n{{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}}"
        )
    );
    let deployer = rule(&["create"], &["apps"], &["deployments"]);
    testing::put_object(RBAC, "clusterroles", cluster_role("deployer", &[deployer]));
    assert!(review(&create_binding("team", "d", "ClusterRole", "deployer")).allowed);
    let elsewhere = review(&create_binding("other", "d", "ClusterRole", "deployer"));
    assert!(elsewhere
        .message()
        .starts_with("rolebindings.rbac.authorization.k8s.io \"d\" is forbidden: user \"alice\""));
}

#[test]
fn verb_bind_allows_binding_that_role() {
    setup();
    let mut bind = rule(&["bind"], &["rbac.authorization.k8s.io"], &["clusterroles"]);
    bind.resource_names = vec!["admin".into()];
    grant("team", "binder", &[bind]);
    assert!(review(&create_binding("team", "admins", "ClusterRole", "admin")).allowed);
    assert!(!review(&create_binding("", "admins", "ClusterRole", "admin")).allowed);
    assert!(!review(&create_binding("other", "admins", "ClusterRole", "admin")).allowed);
}

#[test]
fn binding_a_missing_role_is_not_found_unless_bind_is_granted() {
    setup();
    let r = review(&create_binding("", "ghosts", "ClusterRole", "ghost"));
    assert_eq!(r.code(), 404);
    assert_eq!(
        r.message(),
        "clusterroles.rbac.authorization.k8s.io \"ghost\" not found"
    );
    assert_eq!(r.status.as_ref().unwrap().reason, "NotFound");
    let r = review(&create_binding("team", "ghosts", "Role", "ghost"));
    assert_eq!(
        r.message(),
        "roles.rbac.authorization.k8s.io \"ghost\" not found"
    );
    let bind = rule(&["bind"], &["rbac.authorization.k8s.io"], &["roles"]);
    grant("team", "binder", &[bind]);
    assert!(review(&create_binding("team", "ghosts", "Role", "ghost")).allowed);
}

#[test]
fn invalid_role_refs_fail_like_kube() {
    setup();
    let r = review(&create_binding("", "b", "Role", "deployer"));
    assert_eq!(
        (r.code(), r.message()),
        (400, "Namespace parameter required.")
    );
    let r = review(&create_binding("team", "b", "Bogus", "x"));
    assert_eq!(
        (r.code(), r.message()),
        (500, "unsupported role reference kind: \"Bogus\"")
    );
}

#[test]
fn resolution_errors_are_appended_to_the_message() {
    setup();
    testing::put_object(
        RBAC,
        "clusterrolebindings",
        binding("", "dangling", "ClusterRole", "gone", "User", "alice"),
    );
    let r = review(&create_binding("", "admins", "ClusterRole", "admin"));
    assert!(r.message().ends_with(
        "; resolution errors: [clusterroles.rbac.authorization.k8s.io \"gone\" not found]"
    ));
}

#[test]
fn updates_of_only_gc_fields_are_not_checked() {
    setup();
    let old = cluster_role("root", &full_authority());
    let mut new = old.clone();
    new["metadata"]["finalizers"] = json!(["foregroundDeletion"]);
    new["metadata"]["ownerReferences"] = json!([{"kind": "X", "name": "y", "uid": "1"}]);
    new["metadata"]["resourceVersion"] = json!("7");
    let mut request = write(Operation::Update, "clusterroles", "", new.clone());
    request.old_object = Some(old);
    assert!(review(&request).allowed);
    new["rules"] = rules_json(&[rule(&["*"], &[""], &["secrets"])]);
    request.object = Some(new);
    assert_eq!(review(&request).code(), 403);
}

#[test]
fn store_failures_are_errors() {
    setup();
    testing::fail_reads(Some("store down"));
    let request = create_role("", "x", &[]);
    assert_eq!(RbacEscalation::review(&request).unwrap_err(), "store down");
}

#[test]
fn malformed_objects_do_not_panic() {
    setup();
    let request = write(
        Operation::Create,
        "clusterrolebindings",
        "",
        json!({"metadata": {"name": "b"}, "roleRef": "nope", "subjects": 3}),
    );
    assert_eq!(review(&request).code(), 500);
    let role = write(
        Operation::Create,
        "clusterroles",
        "",
        json!({"metadata": {"name": "r"}, "rules": [null, {"verbs": "x"}]}),
    );
    assert!(review(&role).allowed, "rules without verbs grant nothing");
}

#[test]
fn full_review_round_trip() {
    setup();
    let input = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u1", "operation": "CREATE", "name": "foo",
            "kind": {"group": "rbac.authorization.k8s.io", "version": "v1", "kind": "ClusterRole"},
            "resource": {"group": "rbac.authorization.k8s.io", "version": "v1", "resource": "clusterroles"},
            "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
            "object": cluster_role("foo", &[rule(&["create"], &["apps"], &["deployments"])])}});
    let out: Value = run_admission::<RbacEscalation>(&input.to_string())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(out["response"]["uid"], "u1");
    assert_eq!(out["response"]["allowed"], false);
    assert_eq!(out["response"]["status"]["code"], 403);
    assert_eq!(
        out["response"]["status"]["message"],
        "clusterroles.rbac.authorization.k8s.io \"foo\" is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) \
         is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"create\"]}"
    );
}
