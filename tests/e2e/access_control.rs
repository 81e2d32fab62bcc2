//! Authentication and authorization with the real kubectl: x509 users from
//! `capstan kubeconfig`, service-account tokens from `kubectl create token`,
//! RBAC with the bootstrap roles, escalation prevention, impersonation, and
//! `kubectl auth can-i` / `kubectl auth whoami` agreeing with what happens.

use crate::support::{stderr, stdout, Server};
use serde_json::Value;
use std::path::Path;

fn run(s: &Server, kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let out = s.kubectl_with(kubeconfig, args);
    (out.status.success(), stdout(&out), stderr(&out))
}

fn ok(s: &Server, kubeconfig: &Path, args: &[&str]) -> String {
    let (success, out, err) = run(s, kubeconfig, args);
    assert!(success, "kubectl {args:?} failed: {err}\n{}", s.log());
    out
}

/// `kubectl auth can-i` (which exits 1 for "no"): its answer.
fn can_i(s: &Server, kubeconfig: &Path, question: &[&str]) -> String {
    let args: Vec<&str> = ["auth", "can-i"].iter().chain(question).copied().collect();
    run(s, kubeconfig, &args).1.trim().to_string()
}

fn refused(s: &Server, kubeconfig: &Path, args: &[&str]) -> String {
    let (success, out, err) = run(s, kubeconfig, args);
    assert!(!success, "kubectl {args:?} unexpectedly succeeded: {out}");
    err
}

#[test]
fn unknown_tokens_get_401_and_users_without_bindings_get_kubes_403() {
    let s = Server::start();
    let stranger = s.token_kubeconfig("not-a-known-token");
    let err = refused(&s, &stranger, &["get", "pods"]);
    assert!(
        err.contains("error: You must be logged in to the server"),
        "{err}"
    );

    let bob = s.user_kubeconfig("bob", &[]);
    let err = refused(&s, &bob, &["get", "pods", "-n", "default"]);
    assert!(
        err.contains(r#"Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default""#),
        "{err}"
    );
    assert_eq!(can_i(&s, &bob, &["list", "pods"]), "no");
}

#[test]
fn a_view_binding_lets_a_user_list_but_not_create_and_can_i_agrees() {
    let s = Server::start();
    let bob = s.user_kubeconfig("bob", &["qa"]);
    s.ok(&[
        "create",
        "rolebinding",
        "bob-view",
        "--clusterrole=view",
        "--user=bob",
        "-n",
        "default",
    ]);
    s.ok(&["create", "configmap", "c1", "-n", "default"]);
    let listed = ok(&s, &bob, &["get", "configmaps", "-n", "default"]);
    assert!(listed.contains("c1"), "{listed}");
    assert_eq!(can_i(&s, &bob, &["list", "configmaps"]), "yes");
    assert_eq!(can_i(&s, &bob, &["create", "configmaps"]), "no");
    let err = refused(&s, &bob, &["create", "configmap", "c2", "-n", "default"]);
    assert!(err.contains(r#"User "bob" cannot create resource "configmaps" in API group "" in the namespace "default""#), "{err}");
    // Only in its namespace.
    let err = refused(&s, &bob, &["get", "configmaps", "-n", "kube-system"]);
    assert!(err.contains("Forbidden"), "{err}");

    let me: Value = serde_json::from_str(&ok(&s, &bob, &["auth", "whoami", "-o", "json"])).unwrap();
    assert_eq!(me["status"]["userInfo"]["username"], "bob");
    let groups = me["status"]["userInfo"]["groups"].to_string();
    assert!(
        groups.contains("qa") && groups.contains("system:authenticated"),
        "{groups}"
    );

    let rules = ok(&s, &bob, &["auth", "can-i", "--list", "-n", "default"]);
    assert!(
        rules
            .lines()
            .any(|l| l.starts_with("configmaps") && l.contains("list")),
        "{rules}"
    );
}

#[test]
fn service_account_tokens_authenticate_until_the_account_is_deleted() {
    let s = Server::start();
    s.ok(&["create", "serviceaccount", "robot", "-n", "default"]);
    let token = s.ok(&["create", "token", "robot", "-n", "default"]);
    let robot = s.token_kubeconfig(token.trim());
    let me: Value =
        serde_json::from_str(&ok(&s, &robot, &["auth", "whoami", "-o", "json"])).unwrap();
    assert_eq!(
        me["status"]["userInfo"]["username"],
        "system:serviceaccount:default:robot"
    );
    let review = format!(
        "apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: {}\n",
        token.trim()
    );
    let answer: Value =
        serde_json::from_str(&s.ok_stdin(&["create", "-f", "-", "-o", "json"], &review)).unwrap();
    assert_eq!(answer["status"]["authenticated"], true, "{answer}");
    assert_eq!(
        answer["status"]["user"]["username"],
        "system:serviceaccount:default:robot"
    );
    s.ok(&["delete", "serviceaccount", "robot", "-n", "default"]);
    let err = refused(&s, &robot, &["auth", "whoami"]);
    assert!(err.contains("Unauthorized"), "{err}");
}

#[test]
fn escalation_is_refused_and_impersonation_needs_permission() {
    let s = Server::start();
    let bob = s.user_kubeconfig("bob", &[]);
    // bob may manage roles and bindings in "default" (but not escalate or
    // bind), and holds no pod rights.
    s.ok(&[
        "create",
        "role",
        "role-admin",
        "--verb=get,list,watch,create,update,patch,delete",
        "--resource=roles,rolebindings",
        "-n",
        "default",
    ]);
    s.ok(&[
        "create",
        "rolebinding",
        "bob-roles",
        "--role=role-admin",
        "--user=bob",
        "-n",
        "default",
    ]);
    let err = refused(
        &s,
        &bob,
        &[
            "create",
            "role",
            "pods-all",
            "--verb=create",
            "--resource=pods",
            "-n",
            "default",
        ],
    );
    assert!(
        err.contains("is attempting to grant RBAC permissions not currently held"),
        "{err}"
    );
    // A role within bob's own rights is fine.
    ok(
        &s,
        &bob,
        &[
            "create",
            "role",
            "roles-reader",
            "--verb=get",
            "--resource=roles",
            "-n",
            "default",
        ],
    );

    let err = refused(&s, &bob, &["get", "pods", "-n", "default", "--as=jane"]);
    assert!(err.contains(r#"users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope"#), "{err}");
    s.ok(&[
        "create",
        "clusterrole",
        "impersonator",
        "--verb=impersonate",
        "--resource=users",
    ]);
    s.ok(&[
        "create",
        "clusterrolebinding",
        "bob-impersonates",
        "--clusterrole=impersonator",
        "--user=bob",
    ]);
    let err = refused(&s, &bob, &["get", "pods", "-n", "default", "--as=jane"]);
    assert!(
        err.contains(r#"User "jane" cannot list resource "pods""#),
        "{err}"
    );
    let me: Value = serde_json::from_str(&ok(
        &s,
        &bob,
        &["auth", "whoami", "--as=jane", "-o", "json"],
    ))
    .unwrap();
    assert_eq!(me["status"]["userInfo"]["username"], "jane");
}

/// A data directory from an older release: its bootstrap roles lack rules
/// and subjects the policy has now. A restart adds them, as kube-apiserver
/// reconciles its bootstrap policy, and leaves alone what an administrator
/// marked `rbac.authorization.kubernetes.io/autoupdate: "false"`.
#[test]
fn a_restart_reconciles_the_bootstrap_policy_with_an_older_data_directory() {
    let mut s = Server::start();
    let scheduler = "clusterrole/system:kube-scheduler";
    s.ok(&["patch", scheduler, "--type=json", "-p", r#"[{"op":"replace","path":"/rules","value":[{"apiGroups":["example.com"],"resources":["widgets"],"verbs":["get"]}]}]"#]);
    s.ok(&[
        "patch",
        "clusterrolebinding/system:basic-user",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/subjects","value":[]}]"#,
    ]);
    s.ok(&[
        "annotate",
        "--overwrite",
        "clusterrole/system:heapster",
        "rbac.authorization.kubernetes.io/autoupdate=false",
    ]);
    s.ok(&[
        "patch",
        "clusterrole/system:heapster",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/rules","value":[]}]"#,
    ]);
    s.restart(false);

    let role = s.json(&["get", scheduler, "-o", "json"]);
    let rules = role["rules"].as_array().unwrap();
    assert_eq!(
        rules[0]["apiGroups"],
        serde_json::json!(["example.com"]),
        "its own rule stays first"
    );
    let can_list = |resource: &str| {
        s.ok(&[
            "auth",
            "can-i",
            "list",
            resource,
            "--as",
            "system:kube-scheduler",
        ])
        .trim()
            == "yes"
    };
    assert!(
        can_list("volumeattachments.storage.k8s.io") && can_list("pods"),
        "{rules:?}"
    );
    let binding = s.json(&["get", "clusterrolebinding/system:basic-user", "-o", "json"]);
    assert_eq!(binding["subjects"][0]["name"], "system:authenticated");
    let protected = s.json(&["get", "clusterrole/system:heapster", "-o", "json"]);
    assert!(
        protected["rules"].as_array().is_none_or(Vec::is_empty),
        "{protected}"
    );
}

const VIEW_WIDGETS: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: view-widgets
  labels: {rbac.authorization.k8s.io/aggregate-to-view: "true"}
rules:
- apiGroups: [example.com]
  resources: [widgets]
  verbs: [get, list, watch]
"#;

#[test]
fn a_role_labelled_for_view_is_aggregated_into_it_by_the_aggregation_controllers_apply() {
    let s = Server::start();
    s.ok_stdin(&["create", "-f", "-"], VIEW_WIDGETS);
    let aggregated = || {
        let view = s.json(&["get", "clusterrole", "view", "--show-managed-fields"]);
        let has_rule = view["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["resources"] == serde_json::json!(["widgets"]));
        has_rule.then_some(view)
    };
    let mut view = None;
    let settled = crate::support::eventually(std::time::Duration::from_secs(10), || {
        view = aggregated();
        view.is_some()
    });
    assert!(
        settled,
        "{}",
        s.ok(&["get", "clusterrole", "view", "-o", "yaml"])
    );
    let view = view.unwrap_or_default();
    let entries = view["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let first = &entries[0];
    assert_eq!(
        first["manager"], "clusterrole-aggregation-controller",
        "{view}"
    );
    assert_eq!(first["operation"], "Apply", "{view}");
    assert_eq!(
        first["fieldsV1"],
        serde_json::json!({"f:rules": {}}),
        "{view}"
    );
}
