//! Namespaces' subresources as kube serves them: a status write keeps the
//! metadata it changes (kube's namespaceStatusStrategy resets only spec),
//! and `namespaces/<name>/finalize` changes spec.finalizers, never status,
//! authorized as `update` of `namespaces/finalize`.

use crate::support::{stderr, Server};
use serde_json::{json, Value};

#[test]
fn a_namespace_status_patch_keeps_its_annotation() {
    let s = Server::start();
    s.ok(&["create", "namespace", "team"]);
    let patch = r#"{"metadata":{"annotations":{"e2e-patched-ns-status":"team"}},
        "status":{"conditions":[{"type":"StatusPatch","status":"True","reason":"E2E","message":"Patched by an e2e test"}]}}"#;
    let path = "/api/v1/namespaces/team/status";
    let (code, ns, _) = s.request("PATCH", path, "application/merge-patch+json", Some(patch));
    assert_eq!(code, 200, "{ns}");
    assert_eq!(
        ns["metadata"]["annotations"]["e2e-patched-ns-status"],
        "team"
    );
    assert_eq!(ns["status"]["conditions"][0]["reason"], "E2E");
    assert_eq!(ns["status"]["phase"], "Active");
    let stored = s.json(&["get", "namespace", "team", "-o", "json"]);
    assert_eq!(
        stored["metadata"]["annotations"],
        ns["metadata"]["annotations"]
    );
}

fn finalize(s: &Server, ns: &Value) -> (u16, Value) {
    let path = "/api/v1/namespaces/team/finalize";
    let (code, body, _) = s.request("PUT", path, "application/json", Some(&ns.to_string()));
    (code, body)
}

#[test]
fn namespace_finalize_changes_spec_finalizers_but_not_status() {
    let s = Server::start();
    let (code, list) = s.get_json("/api/v1");
    assert_eq!(code, 200);
    let entry = list["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "namespaces/finalize"))
        .cloned();
    let want = json!({"name": "namespaces/finalize", "singularName": "", "namespaced": false,
                      "kind": "Namespace", "verbs": ["update"]});
    assert_eq!(entry, Some(want));

    s.ok(&["create", "namespace", "team"]);
    let mut ns = s.json(&["get", "namespace", "team", "-o", "json"]);
    ns["spec"]["finalizers"] = json!(["kubernetes", "e2e.example.com/fakeFinalizer"]);
    ns["status"]["phase"] = json!("Terminating");
    let (code, out) = finalize(&s, &ns);
    assert_eq!(code, 200, "{out}");
    assert_eq!(out["spec"]["finalizers"], ns["spec"]["finalizers"]);
    assert_eq!(out["status"]["phase"], "Active", "finalize changed status");

    ns = s.json(&["get", "namespace", "team", "-o", "json"]);
    assert_eq!(
        ns["spec"]["finalizers"],
        json!(["kubernetes", "e2e.example.com/fakeFinalizer"])
    );
    ns["spec"]["finalizers"] = json!(["kubernetes"]);
    let (code, out) = finalize(&s, &ns);
    assert_eq!(
        (code, &out["spec"]["finalizers"]),
        (200, &json!(["kubernetes"]))
    );

    let bob = s.user_kubeconfig("bob", &[]);
    let file = std::env::temp_dir().join(format!("finalize-{}.json", std::process::id()));
    std::fs::write(&file, ns.to_string()).expect("write the namespace");
    let path = file.display().to_string();
    let raw = "/api/v1/namespaces/team/finalize";
    let out = s.kubectl_with(&bob, &["replace", "--raw", raw, "-f", &path]);
    let _ = std::fs::remove_file(&file);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            "User \"bob\" cannot update resource \"namespaces/finalize\" in API group \"\" at the cluster scope"
        ),
        "{}",
        stderr(&out)
    );
}

/// What kube-controller-manager's namespace controller does once a
/// namespace's content is gone: `finalize` empties its spec.finalizers, and
/// that update deletes the namespace (Capstan's own namespace controller
/// switched off, as it is while a kube-controller-manager leads).
#[test]
fn emptying_a_terminating_namespaces_spec_finalizers_deletes_it() {
    let s = Server::start_with(&["--controllers=*,-namespace"]);
    s.ok(&["create", "namespace", "team"]);
    s.ok(&["create", "configmap", "kept", "-n", "team"]);
    s.ok(&["delete", "namespace", "team", "--wait=false"]);
    std::thread::sleep(std::time::Duration::from_secs(3));
    let mut ns = s.json(&["get", "namespace", "team"]);
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert_eq!(
        ns["spec"]["finalizers"],
        json!(["kubernetes"]),
        "nothing finalized it"
    );
    s.ok(&["get", "configmap", "kept", "-n", "team"]);
    ns["spec"]["finalizers"] = json!([]);
    let (code, out) = finalize(&s, &ns);
    assert_eq!(code, 200, "{out}");
    let gone = s.kubectl(&["get", "namespace", "team"]);
    assert!(!gone.status.success(), "the namespace is still there");
}

/// kube's NamespaceLifecycle admits before ServiceAccount: a pod created in
/// a terminating namespace (whose `default` ServiceAccount is already gone)
/// is refused for the namespace, as controllers then log it.
#[test]
fn a_pod_in_a_terminating_namespace_is_refused_for_the_namespace() {
    let s = Server::start();
    s.ok(&["create", "namespace", "team"]);
    let held = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","namespace":"team","finalizers":["example.com/hold"]}}"#;
    s.ok_stdin(&["create", "-f", "-"], held);
    s.ok(&["delete", "namespace", "team", "--wait=false"]);
    let err = s.fails(&["run", "p", "-n", "team", "--image=nginx"]);
    assert!(
        err.contains("pods \"p\" is forbidden: unable to create new content in namespace team because it is being terminated"),
        "{err}"
    );
}
