//! Escalation checks: kube's Covers, CompactRules and ConfirmNoEscalation.

use capstan_rbac::fixtures::{binding, cluster_role, role};
use capstan_rbac::rules::rule;
use capstan_rbac::{
    breakdown, compact, confirm_no_escalation, escalation_message, full_authority, uncovered,
    Lists, Policy, PolicyRule,
};

fn with_names(mut r: PolicyRule, names: &[&str]) -> PolicyRule {
    r.resource_names = names.iter().map(|n| n.to_string()).collect();
    r
}

fn urls(verbs: &[&str], urls: &[&str]) -> PolicyRule {
    PolicyRule {
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        non_resource_urls: urls.iter().map(|u| u.to_string()).collect(),
        ..Default::default()
    }
}

#[test]
fn breakdown_makes_one_rule_per_group_resource_verb_and_name() {
    let r = with_names(
        rule(&["get", "list"], &["", "apps"], &["pods"]),
        &["a", "b"],
    );
    let pieces = breakdown(&r);
    assert_eq!(pieces.len(), 8);
    assert_eq!(
        pieces[0],
        with_names(rule(&["get"], &[""], &["pods"]), &["a"])
    );
    assert_eq!(breakdown(&urls(&["get", "post"], &["/x"])).len(), 2);
    assert!(breakdown(&rule(&["get"], &[], &["pods"])).is_empty());
}

#[test]
fn star_owner_covers_everything() {
    let requested = vec![
        with_names(
            rule(&["escalate"], &["rbac.authorization.k8s.io"], &["roles"]),
            &["r"],
        ),
        urls(&["get"], &["/metrics"]),
    ];
    assert!(uncovered(&full_authority(), &requested).is_empty());
}

#[test]
fn owner_must_hold_each_verb_group_and_resource() {
    let owner = vec![rule(&["get", "list"], &[""], &["pods", "*/status"])];
    assert!(uncovered(&owner, &[rule(&["get"], &[""], &["pods"])]).is_empty());
    assert!(uncovered(&owner, &[rule(&["get"], &[""], &["nodes/status"])]).is_empty());
    assert_eq!(
        uncovered(
            &owner,
            &[rule(&["get", "delete"], &["", "apps"], &["pods"])]
        ),
        vec![
            rule(&["delete"], &[""], &["pods"]),
            rule(&["get"], &["apps"], &["pods"]),
            rule(&["delete"], &["apps"], &["pods"]),
        ]
    );
    assert_eq!(
        uncovered(&owner, &[rule(&["get"], &[""], &["pods/log"])]),
        vec![rule(&["get"], &[""], &["pods/log"])]
    );
}

#[test]
fn resource_names_of_the_owner_limit_what_it_covers() {
    let owner = vec![with_names(rule(&["get"], &[""], &["secrets"]), &["a", "b"])];
    let named = with_names(rule(&["get"], &[""], &["secrets"]), &["a"]);
    assert!(uncovered(&owner, std::slice::from_ref(&named)).is_empty());
    assert_eq!(
        uncovered(&owner, &[rule(&["get"], &[""], &["secrets"])]).len(),
        1
    );
    let unnamed_owner = vec![rule(&["get"], &[""], &["secrets"])];
    assert!(uncovered(&unnamed_owner, &[named]).is_empty());
}

#[test]
fn non_resource_urls_are_covered_by_prefix() {
    let owner = vec![urls(&["get"], &["/logs/*"])];
    assert!(uncovered(&owner, &[urls(&["get"], &["/logs/a", "/logs/*"])]).is_empty());
    assert_eq!(uncovered(&owner, &[urls(&["get"], &["/logs"])]).len(), 1);
    let resources_only = vec![rule(&["*"], &["*"], &["*"])];
    assert_eq!(
        uncovered(&resources_only, &[urls(&["get"], &["/x"])]).len(),
        1
    );
}

#[test]
fn compact_merges_verbs_of_single_resource_rules() {
    let pieces = vec![
        rule(&["get"], &[""], &["pods"]),
        with_names(rule(&["get"], &[""], &["secrets"]), &["s"]),
        rule(&["list"], &[""], &["pods"]),
    ];
    assert_eq!(
        compact(&pieces),
        vec![
            with_names(rule(&["get"], &[""], &["secrets"]), &["s"]),
            rule(&["get", "list"], &[""], &["pods"]),
        ]
    );
}

#[test]
fn message_reads_like_kube() {
    let missing = uncovered(
        &[],
        &[
            rule(&["create", "delete"], &["apps"], &["deployments"]),
            urls(&["get"], &["/metrics"]),
        ],
    );
    let groups = vec!["system:authenticated".to_string()];
    assert_eq!(
        escalation_message("alice", &groups, &missing, &[]),
        "user \"alice\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"create\" \"delete\"]}\n\
         {NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}"
    );
    let errors = vec!["roles.rbac.authorization.k8s.io \"x\" not found".to_string()];
    assert!(escalation_message("alice", &[], &missing, &errors).ends_with(
        "(groups=[]) is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"create\" \"delete\"]}\n\
         {NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}; resolution errors: [roles.rbac.authorization.k8s.io \"x\" not found]"
    ));
}

#[test]
fn confirm_no_escalation_uses_cluster_and_namespace_rules() {
    let policy = Policy::new(&Lists {
        cluster_roles: vec![cluster_role(
            "view",
            &[rule(&["get", "list"], &["*"], &["*"])],
        )],
        cluster_role_bindings: vec![binding("", "view", "ClusterRole", "view", "User", "alice")],
        roles: vec![role(
            "team",
            "edit",
            &[rule(&["create"], &["apps"], &["deployments"])],
        )],
        role_bindings: vec![
            binding("team", "edit", "Role", "edit", "User", "alice"),
            binding("team", "broken", "Role", "gone", "User", "alice"),
        ],
    });
    let create = [rule(&["create", "get"], &["apps"], &["deployments"])];
    assert!(confirm_no_escalation(&policy, "alice", &[], "team", &create).is_ok());
    assert_eq!(
        confirm_no_escalation(&policy, "alice", &[], "", &create).unwrap_err(),
        "user \"alice\" (groups=[]) is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"create\"]}"
    );
    let delete = [rule(&["delete"], &[""], &["pods"])];
    assert!(
        confirm_no_escalation(&policy, "alice", &[], "team", &delete)
            .unwrap_err()
            .ends_with("; resolution errors: [roles.rbac.authorization.k8s.io \"gone\" not found]")
    );
}
