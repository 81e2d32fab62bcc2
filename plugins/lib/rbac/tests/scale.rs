//! A policy with 10,000 bindings still decides correctly (the index makes a
//! decision cost the requester's bindings, not all of them).

use capstan_rbac::fixtures::{binding, cluster_role};
use capstan_rbac::rules::rule;
use capstan_rbac::{authorize, rules_for, Attributes, Lists, Policy, Request, ResourceAttributes};

fn get_pods(user: &str, namespace: &str) -> Request {
    Request {
        user: user.into(),
        groups: vec!["system:authenticated".into()],
        attributes: Attributes::Resource(ResourceAttributes {
            verb: "get".into(),
            namespace: namespace.into(),
            resource: "pods".into(),
            ..Default::default()
        }),
    }
}

#[test]
fn ten_thousand_bindings() {
    let mut lists = Lists {
        cluster_roles: vec![cluster_role("view", &[rule(&["get"], &[""], &["pods"])])],
        ..Default::default()
    };
    for i in 0..5_000 {
        let user = format!("user-{i}");
        let ns = format!("ns-{}", i % 100);
        let rb = binding(
            &ns,
            &format!("rb-{i}"),
            "ClusterRole",
            "view",
            "User",
            &user,
        );
        lists.role_bindings.push(rb);
        let crb = binding(
            "",
            &format!("crb-{i}"),
            "ClusterRole",
            "missing",
            "User",
            &user,
        );
        lists.cluster_role_bindings.push(crb);
    }
    let policy = Policy::new(&lists);
    assert_eq!(policy.binding_count(), 10_000);
    assert_eq!(
        authorize(&policy, &get_pods("user-4321", "ns-21")).as_deref(),
        Some("RBAC: allowed by RoleBinding \"rb-4321/ns-21\" of ClusterRole \"view\" to User \"user-4321\"")
    );
    assert!(authorize(&policy, &get_pods("user-4321", "ns-22")).is_none());
    assert!(authorize(&policy, &get_pods("nobody", "ns-21")).is_none());
    let rules = rules_for(&policy, "user-4321", &[], "ns-21");
    assert_eq!(rules.resource_rules.len(), 1);
    assert_eq!(
        rules.evaluation_error,
        "clusterrole.rbac.authorization.k8s.io \"missing\" not found"
    );
}
