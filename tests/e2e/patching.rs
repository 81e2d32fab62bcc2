//! kubectl's patching commands: label, annotate, set image, patch (three types), edit.

use crate::support::Server;

const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  name: app
  labels: {tier: web}
spec:
  containers:
  - name: main
    image: nginx:1.27
    ports: [{containerPort: 80}]
  - name: logger
    image: busybox:1.36
"#;

#[test]
fn label_and_annotate_add_and_remove() {
    let s = Server::start();
    s.ok_stdin(&["create", "-f", "-"], POD);
    s.ok(&["label", "pod", "app", "env=prod"]);
    s.ok(&["annotate", "pod", "app", "owner=team-a"]);
    let p = s.json(&["get", "pod", "app"]);
    assert_eq!(
        (
            p["metadata"]["labels"]["env"].as_str(),
            p["metadata"]["labels"]["tier"].as_str()
        ),
        (Some("prod"), Some("web"))
    );
    assert_eq!(p["metadata"]["annotations"]["owner"], "team-a");
    s.ok(&["label", "pod", "app", "env-"]);
    assert!(s.json(&["get", "pod", "app"])["metadata"]["labels"]
        .get("env")
        .is_none());
    let err = s.fails(&["label", "pod", "app", "tier=db"]);
    assert!(err.contains("already has a value"), "{err}");
}

#[test]
fn set_image_changes_one_container_and_keeps_the_other() {
    let s = Server::start();
    s.ok_stdin(&["create", "-f", "-"], POD);
    s.ok(&["set", "image", "pod/app", "main=nginx:1.28"]);
    let p = s.json(&["get", "pod", "app"]);
    let containers = p["spec"]["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 2);
    assert_eq!(containers[0]["image"], "nginx:1.28");
    assert_eq!(containers[1]["image"], "busybox:1.36");
    assert_eq!(containers[0]["ports"][0]["containerPort"], 80);
}

#[test]
fn strategic_patch_merges_containers_by_name() {
    let s = Server::start();
    s.ok_stdin(&["create", "-f", "-"], POD);
    let patch = r#"{"spec":{"containers":[{"name":"logger","image":"busybox:1.37"}]}}"#;
    s.ok(&["patch", "pod", "app", "-p", patch]);
    let p = s.json(&["get", "pod", "app"]);
    assert_eq!(p["spec"]["containers"].as_array().unwrap().len(), 2);
    assert_eq!(p["spec"]["containers"][1]["image"], "busybox:1.37");
}

#[test]
fn merge_and_json_patches_apply() {
    let s = Server::start();
    s.ok(&[
        "create",
        "configmap",
        "c",
        "--from-literal=a=1",
        "--from-literal=b=2",
    ]);
    s.ok(&[
        "patch",
        "cm",
        "c",
        "--type=merge",
        "-p",
        r#"{"data":{"a":null,"c":"3"}}"#,
    ]);
    let cm = s.json(&["get", "cm", "c"]);
    assert_eq!(cm["data"], serde_json::json!({"b": "2", "c": "3"}));
    s.ok(&[
        "patch",
        "cm",
        "c",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/data/b","value":"20"}]"#,
    ]);
    assert_eq!(s.json(&["get", "cm", "c"])["data"]["b"], "20");
    let err = s.fails(&[
        "patch",
        "cm",
        "c",
        "--type=json",
        "-p",
        r#"[{"op":"test","path":"/data/b","value":"nope"}]"#,
    ]);
    // kube-apiserver 1.32 names no cause (tests/golden/answers/errors/json-patch-test-fails.json).
    assert!(
        err.contains("The request is invalid: the server rejected our request due to an error in our request"),
        "{err}"
    );
    assert_eq!(s.json(&["get", "cm", "c"])["data"]["b"], "20");
}

#[test]
fn edit_with_an_editor_updates_the_object() {
    let s = Server::start();
    s.ok(&["create", "configmap", "editme", "--from-literal=color=blue"]);
    let out = std::process::Command::new(crate::support::kubectl_path())
        .arg("--kubeconfig")
        .arg(s.kubeconfig())
        .args(["edit", "configmap", "editme"])
        .env("KUBE_EDITOR", "sed -i s/blue/green/")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    assert_eq!(s.json(&["get", "cm", "editme"])["data"]["color"], "green");
}

/// A server-side apply configuration without `metadata.name` applies to the
/// object the URL names (kube-rs sends such partial configurations).
#[test]
fn an_apply_configuration_without_a_name_applies_to_the_url_object() {
    let s = Server::start();
    s.ok(&["create", "configmap", "named", "--from-literal=a=1"]);
    let path = "/api/v1/namespaces/default/configmaps/named?fieldManager=partial";
    let body = r#"{"apiVersion": "v1", "kind": "ConfigMap", "data": {"b": "2"}}"#;
    let (code, cm, _) = s.request("PATCH", path, "application/apply-patch+yaml", Some(body));
    assert_eq!(code, 200, "{cm}");
    assert_eq!(cm["metadata"]["name"], "named");
    assert_eq!(cm["data"]["b"], "2");
    let other = r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}}"#;
    let (code, status, _) = s.request("PATCH", path, "application/apply-patch+yaml", Some(other));
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "the name of the object (other) does not match the name on the URL (named)"
    );
}

/// A YAML apply configuration that repeats a key: kube's strict YAML
/// decoding refuses it under fieldValidation=Strict (what kube's own
/// FieldValidation conformance spec checks), and nothing is stored.
#[test]
fn an_apply_repeating_a_yaml_key_is_refused_under_strict_validation() {
    let s = Server::start();
    let body =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: twice\ndata:\n  a: one\n  a: two\n";
    let path = "/api/v1/namespaces/default/configmaps/twice?fieldManager=m&fieldValidation=Strict";
    let (code, status, _) = s.request("PATCH", path, "application/apply-patch+yaml", Some(body));
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key \"a\" already set in map"
    );
    let lenient =
        "/api/v1/namespaces/default/configmaps/twice?fieldManager=m&fieldValidation=Ignore";
    let (code, stored, _) = s.request("PATCH", lenient, "application/apply-patch+yaml", Some(body));
    assert_eq!(
        (code, &stored["data"]["a"]),
        (201, &serde_json::json!("two")),
        "{stored}"
    );
}

/// kube's field manager types an apply configuration against the schema
/// before anything else: an undeclared field is its reason-less 500, under
/// any fieldValidation, and nothing is written.
#[test]
fn an_apply_of_an_undeclared_field_fails_as_kubes_typed_patch_does() {
    let s = Server::start();
    let path = "/api/v1/namespaces/default/configmaps/typed?fieldManager=me&fieldValidation=Ignore";
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typed\ndata:\n  a: b\nunknownField: x\n";
    let (code, status, _) = s.request("PATCH", path, "application/apply-patch+yaml", Some(body));
    assert_eq!(code, 500, "{status}");
    assert_eq!(
        status["message"],
        "failed to create typed patch object (/typed; /v1, Kind=ConfigMap): .unknownField: field not declared in schema"
    );
    assert!(status.get("reason").is_none(), "{status}");
    let gone = s.kubectl(&["get", "configmap", "typed"]);
    assert!(!gone.status.success(), "nothing was written");
}
