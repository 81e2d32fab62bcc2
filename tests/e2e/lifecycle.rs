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
    let left = s.ok(&["get", "cm", "-n", "scratch", "-o", "name"]);
    assert!(!left.contains("configmap/x"), "{left}");
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
        .contains("the UID in the precondition (not-the-uid) does not match the UID in record"));
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
    assert_eq!(
        s.ok(&["get", "cm", "-o", "name"]).trim(),
        "configmap/c\nconfigmap/kube-root-ca.crt"
    );
}

/// A ConfigMap owned by the ConfigMaps `owners` (their uids), plus `extra` metadata YAML lines.
fn create_owned(s: &Server, name: &str, owners: &[&str], extra: &str) {
    let refs: String = owners
        .iter()
        .map(|owner| {
            let uid = s.json(&["get", "cm", owner])["metadata"]["uid"]
                .as_str()
                .unwrap()
                .to_string();
            format!("  - {{apiVersion: v1, kind: ConfigMap, name: {owner}, uid: {uid}, blockOwnerDeletion: true}}\n")
        })
        .collect();
    let yaml = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{extra}  ownerReferences:\n{refs}"
    );
    s.ok_stdin(&["create", "-f", "-"], &yaml);
}

fn gone(s: &Server, name: &str) -> bool {
    eventually(Duration::from_secs(30), || {
        !s.kubectl(&["get", "cm", name]).status.success()
    })
}

#[test]
fn dependents_go_with_the_last_of_their_owners() {
    let s = Server::start();
    s.ok(&["create", "cm", "owner-a"]);
    s.ok(&["create", "cm", "owner-b"]);
    create_owned(&s, "dependent", &["owner-a", "owner-b"], "");
    s.ok(&["delete", "cm", "owner-a"]);
    std::thread::sleep(Duration::from_millis(500));
    s.ok(&["get", "cm", "dependent"]);
    s.ok(&["delete", "cm", "owner-b"]);
    assert!(gone(&s, "dependent"), "collected after its last owner went");
}

#[test]
fn orphan_deletion_keeps_dependents_without_the_reference() {
    let s = Server::start();
    s.ok(&["create", "cm", "owner"]);
    create_owned(&s, "kept", &["owner"], "");
    s.ok(&["delete", "cm", "owner", "--cascade=orphan"]);
    assert!(gone(&s, "owner"));
    let kept = s.json(&["get", "cm", "kept"]);
    assert!(
        kept["metadata"].get("ownerReferences").is_none()
            || kept["metadata"]["ownerReferences"] == serde_json::json!([]),
        "{kept}"
    );
}

#[test]
fn foreground_deletion_waits_for_blocking_dependents() {
    let s = Server::start();
    s.ok(&["create", "cm", "owner"]);
    create_owned(&s, "held", &["owner"], "  finalizers: [example.com/hold]\n");
    s.ok(&[
        "delete",
        "cm",
        "owner",
        "--cascade=foreground",
        "--wait=false",
    ]);
    let waiting = eventually(Duration::from_secs(10), || {
        let stamp = s.kubectl(&[
            "get",
            "cm",
            "held",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}",
        ]);
        !stamp.stdout.is_empty()
    });
    assert!(waiting, "the dependent is being deleted");
    let owner = s.json(&["get", "cm", "owner"]);
    assert_eq!(
        owner["metadata"]["finalizers"],
        serde_json::json!(["foregroundDeletion"])
    );
    s.ok(&[
        "patch",
        "cm",
        "held",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    assert!(gone(&s, "held"));
    assert!(
        gone(&s, "owner"),
        "the owner goes once its blocking dependent is gone"
    );
}

#[test]
fn a_dependent_of_an_owner_that_never_existed_is_collected() {
    let s = Server::start();
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dangling\n  ownerReferences:\n  - {apiVersion: v1, kind: ConfigMap, name: ghost, uid: 6f1c1ae4-0000-4000-8000-000000000000}\n";
    s.ok_stdin(&["create", "-f", "-"], yaml);
    assert!(gone(&s, "dangling"));
}

#[test]
fn every_namespace_gets_the_root_ca_configmap_back_when_deleted_or_changed() {
    let s = Server::start();
    let ca = std::fs::read_to_string(s.pki("ca.crt")).unwrap();
    s.ok(&["create", "namespace", "fresh"]);
    let published = |ns: &str| {
        let out = s.kubectl(&["get", "cm", "kube-root-ca.crt", "-n", ns, "-o", "json"]);
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap_or_default()
    };
    for ns in ["default", "kube-system", "fresh"] {
        assert!(
            eventually(Duration::from_secs(10), || published(ns)["data"]["ca.crt"]
                == ca.as_str()),
            "{ns}: {}",
            published(ns)
        );
    }
    let cm = published("fresh");
    assert!(cm["metadata"]["annotations"]["kubernetes.io/description"]
        .as_str()
        .is_some_and(
            |d| d.starts_with("Contains a CA bundle that can be used to verify the kube-apiserver")
        ));
    s.ok(&["delete", "cm", "kube-root-ca.crt", "-n", "fresh"]);
    assert!(eventually(Duration::from_secs(10), || published("fresh")
        ["data"]["ca.crt"]
        == ca.as_str()));
    s.ok(&[
        "patch",
        "cm",
        "kube-root-ca.crt",
        "-n",
        "fresh",
        "-p",
        r#"{"data":{"ca.crt":"forged"}}"#,
    ]);
    assert!(eventually(Duration::from_secs(10), || published("fresh")
        ["data"]["ca.crt"]
        == ca.as_str()));
}
