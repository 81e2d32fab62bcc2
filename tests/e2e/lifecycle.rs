//! Finalizers, namespace deletion, status subresource, dry-run, preconditions.

use crate::support::{eventually, Server};
use std::time::Duration;

#[test]
fn finalizers_hold_an_object_until_removed() {
    let s = Server::start();
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\n";
    s.ok_stdin(&["create", "-f", "-"], cm);
    s.ok(&["delete", "cm", "held", "--wait=false"]);
    let obj = s.json(&["get", "cm", "held"]);
    assert!(obj["metadata"]["deletionTimestamp"].is_string(), "{obj}");
    s.ok(&[
        "patch",
        "cm",
        "held",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    let err = s.fails(&["get", "cm", "held"]);
    assert!(err.contains(r#"configmaps "held" not found"#), "{err}");
}

#[test]
fn deleting_a_namespace_deletes_its_content() {
    let s = Server::start();
    s.ok(&["create", "namespace", "scratch"]);
    s.ok(&["create", "configmap", "x", "-n", "scratch"]);
    s.ok(&["delete", "namespace", "scratch"]);
    assert!(eventually(Duration::from_secs(10), || !s
        .kubectl(&["get", "ns", "scratch"])
        .status
        .success()));
    let err = s.fails(&["create", "configmap", "y", "-n", "scratch"]);
    assert!(err.contains(r#"namespaces "scratch" not found"#), "{err}");
    s.ok(&["create", "namespace", "scratch"]);
    assert_eq!(
        s.ok(&["get", "cm", "-n", "scratch", "-o", "name"]).trim(),
        ""
    );
    let err = s.fails(&["delete", "namespace", "default"]);
    assert!(err.contains("may not be deleted"), "{err}");
}

#[test]
fn status_is_written_only_through_its_subresource() {
    let s = Server::start();
    s.ok(&["create", "deployment", "web", "--image=nginx"]);
    let status_patch = r#"{"status":{"replicas":1,"readyReplicas":1}}"#;
    s.ok(&["patch", "deploy", "web", "--type=merge", "-p", status_patch]);
    assert!(s.json(&["get", "deploy", "web"])["status"]
        .get("readyReplicas")
        .is_none());
    s.ok(&[
        "patch",
        "deploy",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        status_patch,
    ]);
    let d = s.json(&["get", "deploy", "web"]);
    assert_eq!(d["status"]["readyReplicas"], 1);
    assert_eq!(
        d["metadata"]["generation"], 1,
        "a status write must not bump generation"
    );
    assert!(s.ok(&["get", "deploy", "web"]).contains("1/1"));
}

#[test]
fn server_dry_run_stores_nothing() {
    let s = Server::start();
    let out = s.ok(&[
        "create",
        "configmap",
        "ghost",
        "--dry-run=server",
        "-o",
        "json",
    ]);
    assert!(out.contains("\"ghost\""), "{out}");
    assert!(s.fails(&["get", "cm", "ghost"]).contains("not found"));
    s.ok(&["create", "configmap", "real"]);
    s.ok(&["delete", "configmap", "real", "--dry-run=server"]);
    s.ok(&["get", "cm", "real"]);
}

#[test]
fn delete_preconditions_are_checked() {
    let s = Server::start();
    s.ok(&["create", "configmap", "guarded"]);
    let body =
        r#"{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"not-the-uid"}}"#;
    let (code, status, _) = s.request(
        "DELETE",
        "/api/v1/namespaces/default/configmaps/guarded",
        "application/json",
        Some(body),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (409, Some("Conflict")),
        "{status}"
    );
    assert!(status["message"]
        .as_str()
        .unwrap()
        .contains("Precondition failed: UID in precondition: not-the-uid"));
    s.ok(&["get", "cm", "guarded"]);
    let (code, status, _) = s.request(
        "DELETE",
        "/api/v1/namespaces/default/configmaps/guarded",
        "application/json",
        None,
    );
    assert_eq!(
        (
            code,
            status["status"].as_str(),
            status["details"]["name"].as_str()
        ),
        (200, Some("Success"), Some("guarded"))
    );
}

#[test]
fn deletecollection_removes_what_matches() {
    let s = Server::start();
    for n in ["a", "b", "c"] {
        s.ok(&["create", "configmap", n]);
    }
    s.ok(&["label", "cm", "a", "b", "gone=yes"]);
    let (code, _, _) = s.request(
        "DELETE",
        "/api/v1/namespaces/default/configmaps?labelSelector=gone%3Dyes",
        "application/json",
        None,
    );
    assert_eq!(code, 200);
    assert_eq!(s.ok(&["get", "cm", "-o", "name"]).trim(), "configmap/c");
}
