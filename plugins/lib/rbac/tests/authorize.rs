//! kube's RBAC authorization semantics, through the public API.

use capstan_rbac::fixtures::{binding, cluster_role, role};
use capstan_rbac::rules::rule;
use capstan_rbac::{
    authorize, decide, Attributes, Decision, Lists, NonResourceAttributes, Policy, PolicyRule,
    Request, ResourceAttributes,
};

fn request(user: &str, groups: &[&str], verb: &str, ns: &str, group: &str, res: &str) -> Request {
    let (resource, subresource) = res.split_once('/').unwrap_or((res, ""));
    Request {
        user: user.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        attributes: Attributes::Resource(ResourceAttributes {
            verb: verb.into(),
            namespace: ns.into(),
            api_group: group.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            name: String::new(),
        }),
    }
}

fn named(mut req: Request, name: &str) -> Request {
    if let Attributes::Resource(r) = &mut req.attributes {
        r.name = name.into();
    }
    req
}

fn url(user: &str, verb: &str, path: &str) -> Request {
    Request {
        user: user.into(),
        groups: Vec::new(),
        attributes: Attributes::NonResource(NonResourceAttributes {
            path: path.into(),
            verb: verb.into(),
        }),
    }
}

fn one_role(rules: &[PolicyRule], subject_kind: &str, subject: &str) -> Policy {
    Policy::new(&Lists {
        cluster_roles: vec![cluster_role("r", rules)],
        cluster_role_bindings: vec![binding("", "b", "ClusterRole", "r", subject_kind, subject)],
        ..Default::default()
    })
}

#[test]
fn cluster_admin_through_system_masters_reads_like_kube() {
    let p = Policy::new(&Lists {
        cluster_roles: vec![cluster_role(
            "cluster-admin",
            &[rule(&["*"], &["*"], &["*"])],
        )],
        cluster_role_bindings: vec![binding(
            "",
            "cluster-admin",
            "ClusterRole",
            "cluster-admin",
            "Group",
            "system:masters",
        )],
        ..Default::default()
    });
    let req = request(
        "admin",
        &["system:masters"],
        "delete",
        "ns",
        "apps",
        "deployments",
    );
    assert_eq!(
        authorize(&p, &req).as_deref(),
        Some("RBAC: allowed by ClusterRoleBinding \"cluster-admin\" of ClusterRole \"cluster-admin\" to Group \"system:masters\"")
    );
    assert_eq!(
        authorize(&p, &request("admin", &[], "get", "", "", "pods")),
        None
    );
}

#[test]
fn wildcards_match_verbs_groups_and_resources() {
    let p = one_role(&[rule(&["*"], &["apps"], &["*"])], "User", "alice");
    assert!(authorize(
        &p,
        &request("alice", &[], "patch", "", "apps", "deployments")
    )
    .is_some());
    assert!(authorize(
        &p,
        &request("alice", &[], "patch", "", "apps", "deployments/scale")
    )
    .is_some());
    assert!(authorize(&p, &request("alice", &[], "get", "", "", "pods")).is_none());
}

#[test]
fn subresources_need_their_own_rule_or_star_slash() {
    let p = one_role(
        &[rule(&["get"], &[""], &["pods", "*/status"])],
        "User",
        "alice",
    );
    assert!(authorize(&p, &request("alice", &[], "get", "ns", "", "pods")).is_some());
    assert!(authorize(&p, &request("alice", &[], "get", "ns", "", "pods/log")).is_none());
    assert!(authorize(&p, &request("alice", &[], "get", "ns", "", "nodes/status")).is_some());
    let slash_star = one_role(&[rule(&["get"], &[""], &["pods/*"])], "User", "alice");
    assert!(authorize(
        &slash_star,
        &request("alice", &[], "get", "ns", "", "pods/log")
    )
    .is_none());
}

#[test]
fn resource_names_restrict_to_those_names() {
    let mut r = rule(&["get", "update"], &[""], &["configmaps"]);
    r.resource_names = vec!["settings".into()];
    let p = one_role(&[r], "User", "alice");
    let get = request("alice", &[], "get", "ns", "", "configmaps");
    assert!(authorize(&p, &named(get.clone(), "settings")).is_some());
    assert!(authorize(&p, &named(get.clone(), "other")).is_none());
    assert!(authorize(&p, &get).is_none(), "a list has no name");
}

#[test]
fn non_resource_urls_match_exactly_or_by_prefix() {
    let r = PolicyRule {
        verbs: vec!["get".into()],
        non_resource_urls: vec!["/healthz".into(), "/logs/*".into()],
        ..Default::default()
    };
    let p = one_role(&[r], "User", "alice");
    assert!(authorize(&p, &url("alice", "get", "/healthz")).is_some());
    assert!(authorize(&p, &url("alice", "get", "/healthz/etcd")).is_none());
    assert!(authorize(&p, &url("alice", "get", "/logs/kube.log")).is_some());
    assert!(authorize(&p, &url("alice", "post", "/logs/kube.log")).is_none());
    let resource_rule = one_role(&[rule(&["*"], &["*"], &["*"])], "User", "bob");
    assert!(authorize(&resource_rule, &url("bob", "get", "/healthz")).is_none());
}

#[test]
fn service_account_subjects_match_their_user_name() {
    let p = Policy::new(&Lists {
        cluster_roles: vec![cluster_role("view", &[rule(&["get"], &[""], &["pods"])])],
        cluster_role_bindings: vec![
            binding(
                "",
                "explicit",
                "ClusterRole",
                "view",
                "ServiceAccount",
                "kube-system:ctrl",
            ),
            binding(
                "",
                "no-namespace",
                "ClusterRole",
                "view",
                "ServiceAccount",
                "lost",
            ),
        ],
        role_bindings: vec![binding(
            "team",
            "local",
            "ClusterRole",
            "view",
            "ServiceAccount",
            "bot",
        )],
        ..Default::default()
    });
    let ctrl = request(
        "system:serviceaccount:kube-system:ctrl",
        &[],
        "get",
        "x",
        "",
        "pods",
    );
    assert_eq!(
        authorize(&p, &ctrl).as_deref(),
        Some("RBAC: allowed by ClusterRoleBinding \"explicit\" of ClusterRole \"view\" to ServiceAccount \"ctrl/kube-system\"")
    );
    let bot = request(
        "system:serviceaccount:team:bot",
        &[],
        "get",
        "team",
        "",
        "pods",
    );
    assert_eq!(
        authorize(&p, &bot).as_deref(),
        Some("RBAC: allowed by RoleBinding \"local/team\" of ClusterRole \"view\" to ServiceAccount \"bot/team\"")
    );
    let lost = request("system:serviceaccount::lost", &[], "get", "x", "", "pods");
    assert!(authorize(&p, &lost).is_none());
    assert!(authorize(&p, &request("bot", &[], "get", "team", "", "pods")).is_none());
}

#[test]
fn role_binding_to_cluster_role_is_scoped_to_its_namespace() {
    let p = Policy::new(&Lists {
        cluster_roles: vec![cluster_role("edit", &[rule(&["create"], &[""], &["pods"])])],
        role_bindings: vec![binding(
            "team",
            "edit",
            "ClusterRole",
            "edit",
            "User",
            "alice",
        )],
        ..Default::default()
    });
    let in_team = request("alice", &[], "create", "team", "", "pods");
    assert_eq!(
        authorize(&p, &in_team).as_deref(),
        Some(
            "RBAC: allowed by RoleBinding \"edit/team\" of ClusterRole \"edit\" to User \"alice\""
        )
    );
    assert!(authorize(&p, &request("alice", &[], "create", "other", "", "pods")).is_none());
    assert!(authorize(&p, &request("alice", &[], "create", "", "", "pods")).is_none());
}

#[test]
fn role_bindings_reference_roles_of_their_own_namespace() {
    let p = Policy::new(&Lists {
        roles: vec![
            role("a", "r", &[rule(&["get"], &[""], &["secrets"])]),
            role("b", "r", &[rule(&["*"], &["*"], &["*"])]),
        ],
        role_bindings: vec![binding("a", "rb", "Role", "r", "User", "alice")],
        ..Default::default()
    });
    assert!(authorize(&p, &request("alice", &[], "get", "a", "", "secrets")).is_some());
    assert!(authorize(&p, &request("alice", &[], "delete", "a", "", "secrets")).is_none());
    assert!(authorize(&p, &request("alice", &[], "get", "b", "", "secrets")).is_none());
}

#[test]
fn group_bindings_apply_to_members() {
    let p = one_role(&[rule(&["list"], &[""], &["namespaces"])], "Group", "devs");
    let member = request(
        "carol",
        &["system:authenticated", "devs"],
        "list",
        "",
        "",
        "namespaces",
    );
    assert_eq!(
        authorize(&p, &member).as_deref(),
        Some("RBAC: allowed by ClusterRoleBinding \"b\" of ClusterRole \"r\" to Group \"devs\"")
    );
    let outsider = request(
        "devs",
        &["system:authenticated"],
        "list",
        "",
        "",
        "namespaces",
    );
    assert!(
        authorize(&p, &outsider).is_none(),
        "a user named like the group is not in it"
    );
}

#[test]
fn no_opinion_reports_resolution_errors() {
    let p = Policy::new(&Lists {
        cluster_role_bindings: vec![
            binding("", "b1", "ClusterRole", "gone", "User", "alice"),
            binding("", "b2", "Bogus", "x", "User", "alice"),
        ],
        ..Default::default()
    });
    assert_eq!(
        decide(&p, &request("alice", &[], "get", "", "", "pods")),
        Decision::NoOpinion(
            "RBAC: [clusterrole.rbac.authorization.k8s.io \"gone\" not found, unsupported role reference kind: \"Bogus\"]"
                .into()
        )
    );
    assert_eq!(
        decide(&p, &request("bob", &[], "get", "", "", "pods")),
        Decision::NoOpinion(String::new())
    );
}

#[test]
fn malformed_objects_are_skipped_without_panicking() {
    let p = Policy::new(&Lists {
        cluster_roles: vec![
            serde_json::json!(42),
            serde_json::json!({"metadata": {"name": "r"}, "rules": "x"}),
        ],
        cluster_role_bindings: vec![
            serde_json::json!({"metadata": {"name": "b"}, "roleRef": 7, "subjects": [null, {"kind": "User"}]}),
            serde_json::json!(null),
        ],
        roles: vec![serde_json::json!({"metadata": {"name": "no-namespace"}})],
        role_bindings: vec![serde_json::json!({"metadata": {"name": "no-namespace"}})],
    });
    assert_eq!(p.binding_count(), 1);
    assert!(authorize(&p, &request("", &[], "get", "", "", "pods")).is_none());
}
