//! Bad input gets a clear Kubernetes Status with the right code, and changes nothing.

use crate::support::Server;
use serde_json::json;

/// ConfigMaps in `default` besides the root CA publisher's.
fn configmap_count(s: &Server) -> usize {
    s.ok(&["get", "cm", "-o", "name"])
        .lines()
        .filter(|l| *l != "configmap/kube-root-ca.crt")
        .count()
}

#[test]
fn conflicts_and_duplicates_are_409() {
    let s = Server::start();
    s.ok(&["create", "configmap", "x"]);
    let err = s.fails(&["create", "configmap", "x"]);
    assert!(err.contains(r#"configmaps "x" already exists"#), "{err}");
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#;
    let (code, status, _) = s.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        Some(body),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (409, Some("AlreadyExists")),
        "{status}"
    );
    let mut cm = s.json(&["get", "cm", "x"]);
    cm["metadata"]["resourceVersion"] = json!("1");
    cm["data"] = json!({"k": "v"});
    let (code, status, _) = s.request(
        "PUT",
        "/api/v1/namespaces/default/configmaps/x",
        "application/json",
        Some(&cm.to_string()),
    );
    assert_eq!((code, status["reason"].as_str()), (409, Some("Conflict")));
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("the object has been modified"),
        "{status}"
    );
    assert!(s.json(&["get", "cm", "x"]).get("data").is_none());
}

#[test]
fn missing_things_are_404_worded_as_kube() {
    let s = Server::start();
    assert!(s
        .fails(&["get", "cm", "nope"])
        .contains(r#"Error from server (NotFound): configmaps "nope" not found"#));
    assert!(s
        .fails(&["get", "deploy", "nope"])
        .contains(r#"deployments.apps "nope" not found"#));
    let err = s.fails(&["create", "configmap", "x", "-n", "missing"]);
    assert!(err.contains(r#"namespaces "missing" not found"#), "{err}");
    let (code, status) = s.get_json("/apis/apps/v1/namespaces/default/widgets");
    assert_eq!((code, status["reason"].as_str()), (404, Some("NotFound")));
}

#[test]
fn invalid_names_are_422_with_causes() {
    let s = Server::start();
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}})
        .to_string();
    let (code, status, _) = s.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        Some(&body),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (422, Some("Invalid")),
        "{status}"
    );
    assert_eq!(status["details"]["causes"][0]["field"], "metadata.name");
    assert!(status["message"].as_str().unwrap().starts_with(
        r#"ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name""#
    ));
    let err = s.fails(&["create", "namespace", "Not.A.Label"]);
    assert!(err.contains("RFC 1123 label"), "{err}");
    assert_eq!(configmap_count(&s), 0);
}

#[test]
fn malformed_and_oversized_bodies_are_rejected() {
    let s = Server::start();
    let (code, status, _) = s.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        Some("{not json"),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (400, Some("BadRequest")),
        "{status}"
    );
    let (code, status, _) = s.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/yaml",
        Some("a: [b"),
    );
    assert_eq!(code, 400, "{status}");
    let big = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"k": "x".repeat(3 * 1024 * 1024 + 10)}});
    let (code, status, _) = s.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        Some(&big.to_string()),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (413, Some("RequestEntityTooLarge")),
        "{status}"
    );
    let (code, _, _) = s.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "text/plain",
        Some("x"),
    );
    assert_eq!(code, 415);
    let wrong = json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "w"}})
        .to_string();
    let (code, _, _) = s.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        Some(&wrong),
    );
    assert_eq!(code, 400);
    assert_eq!(configmap_count(&s), 0);
}

#[test]
fn field_validation_strict_warn_ignore() {
    let s = Server::start();
    let body = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1,"replicas":2,"replicass":3,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}"#;
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let (code, status, _) = s.request(
        "POST",
        &format!("{path}?fieldValidation=Strict"),
        "application/json",
        Some(body),
    );
    assert_eq!(code, 400, "{status}");
    let msg = status["message"].as_str().unwrap();
    assert!(
        msg.contains("strict decoding error")
            && msg.contains(r#"unknown field "spec.replicass""#)
            && msg.contains(r#"duplicate field "spec.replicas""#),
        "{msg}"
    );
    let (code, created, headers) = s.request(
        "POST",
        &format!("{path}?fieldValidation=Warn"),
        "application/json",
        Some(body),
    );
    assert_eq!(code, 201, "{created}");
    assert!(
        headers.to_lowercase().contains("warning: 299") && headers.contains("spec.replicass"),
        "{headers}"
    );
    assert!(created["spec"].get("replicass").is_none());
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\ndatta:\n  a: b\n";
    let err = s.kubectl_stdin(&["create", "-f", "-"], Some(manifest));
    assert!(!err.status.success());
    assert!(
        crate::support::stderr(&err).contains(r#"unknown field "datta""#),
        "{}",
        crate::support::stderr(&err)
    );
}

#[test]
fn hostile_or_unconvertible_yaml_bodies_are_400_and_change_nothing() {
    let s = Server::start();
    let post = |yaml: &str| {
        s.request(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            "application/yaml",
            Some(yaml),
        )
    };
    let mut laughs = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\nx0: &x0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n".to_string();
    for i in 1..10 {
        let refs = vec![format!("*x{}", i - 1); 9].join(", ");
        laughs.push_str(&format!("x{i}: &x{i} [{refs}]\n"));
    }
    let tagged =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tagged}\ndata: {a: !custom x}\n";
    for body in [laughs.as_str(), tagged] {
        let (code, status, _) = post(body);
        assert_eq!(
            (code, status["reason"].as_str()),
            (400, Some("BadRequest")),
            "{status}"
        );
    }
    assert_eq!(configmap_count(&s), 0);
    let quoted =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: quoted}\ndata: {a: 'yes', b: '0777'}\n";
    let (code, status, _) = post(quoted);
    assert_eq!(code, 201, "{status}");
    assert_eq!(status["data"], json!({"a": "yes", "b": "0777"}));
}
