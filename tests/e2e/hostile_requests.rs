//! Requests a hostile or careless client sends: each gets kube's answer,
//! changes nothing, and leaves the server serving.

use crate::support::Server;
use serde_json::{json, Value};

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

fn create_configmap(s: &Server, name: &str, data: Value) {
    let body =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data});
    let (code, v, _) = s.request(
        "POST",
        CONFIGMAPS,
        "application/json",
        Some(&body.to_string()),
    );
    assert_eq!(code, 201, "{v}");
}

fn ready(s: &Server) -> bool {
    crate::support::stdout(&s.curl(&[&s.url("/readyz")])) == "ok"
}

#[test]
fn json_patch_copies_that_blow_up_an_object_are_refused() {
    let s = Server::start();
    create_configmap(&s, "seed", json!({"big": "x".repeat(4096)}));
    // Each copy doubles `data`: 22 of them would make gigabytes.
    let ops: Vec<Value> = (0..22)
        .map(|i| json!({"op": "copy", "from": "/data", "path": format!("/data/d{i}")}))
        .collect();
    let (code, status, _) = s.request(
        "PATCH",
        &format!("{CONFIGMAPS}/seed"),
        "application/json-patch+json",
        Some(&Value::Array(ops).to_string()),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (422, Some("Invalid")),
        "{status}"
    );
    // kube-apiserver 1.32 names no cause for a JSON patch that cannot be
    // applied, this one included (checked against the real server).
    assert_eq!(
        status["message"],
        "the server rejected our request due to an error in our request"
    );
    assert_eq!(status["details"], json!({}), "{status}");
    let (_, cm) = s.get_json(&format!("{CONFIGMAPS}/seed"));
    assert_eq!(
        cm["data"].as_object().map(|d| d.len()),
        Some(1),
        "nothing changed"
    );
    assert!(ready(&s));
}

#[test]
fn objects_larger_than_the_store_takes_are_413_and_smaller_ones_are_kept() {
    let s = Server::start();
    // ControllerRevision.data is free-form, so only the store's limit applies.
    let revisions = "/apis/apps/v1/namespaces/default/controllerrevisions";
    let revision = |name: &str, size: usize| {
        json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": name},
            "revision": 1, "data": {"blob": "x".repeat(size)}})
        .to_string()
    };
    let (code, status, _) = s.request(
        "POST",
        revisions,
        "application/json",
        Some(&revision("big", 2 << 20)),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (413, Some("RequestEntityTooLarge")),
        "{status}"
    );
    assert!(
        status["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Request entity too large"),
        "{status}"
    );
    let (code, _) = s.get_json(&format!("{revisions}/big"));
    assert_eq!(code, 404, "nothing stored");
    let (code, status, _) = s.request(
        "POST",
        revisions,
        "application/json",
        Some(&revision("fits", 1 << 20)),
    );
    assert_eq!(code, 201, "{status}");
    let over_body_limit = "x".repeat(3 * 1024 * 1024 + 10);
    let (code, status, _) = s.request(
        "POST",
        CONFIGMAPS,
        "application/json",
        Some(&over_body_limit),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (413, Some("RequestEntityTooLarge")),
        "{status}"
    );
    assert!(ready(&s));
}

#[test]
fn an_oversized_create_with_generate_name_is_413_without_a_name_error() {
    let s = Server::start();
    let revisions = "/apis/apps/v1/namespaces/default/controllerrevisions";
    let body = json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"generateName": "big-"}, "revision": 1, "data": {"blob": "x".repeat(2 << 20)}});
    let (code, status, _) = s.request(
        "POST",
        revisions,
        "application/json",
        Some(&body.to_string()),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (413, Some("RequestEntityTooLarge")),
        "{status}"
    );
    assert!(status["details"]["causes"].is_null(), "{status}");
    let (_, list) = s.get_json(revisions);
    assert_eq!(list["items"], json!([]), "nothing stored");
    assert!(ready(&s));
}

#[test]
fn a_list_at_a_revision_not_yet_reached_is_kubes_504_and_a_bad_one_400() {
    let s = Server::start();
    let (_, list) = s.get_json(CONFIGMAPS);
    let current: i64 = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let future = current + 1000;
    for path in [
        format!("{CONFIGMAPS}?resourceVersion={future}"),
        format!("{CONFIGMAPS}?resourceVersion={future}&resourceVersionMatch=NotOlderThan"),
    ] {
        let (code, status) = s.get_json(&path);
        assert_eq!(
            (code, status["reason"].as_str()),
            (504, Some("Timeout")),
            "{status}"
        );
        let message = status["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(&format!(
                "Timeout: Too large resource version: {future}, current: "
            )),
            "{status}"
        );
        assert_eq!(status["details"]["retryAfterSeconds"], 1, "{status}");
        assert_eq!(
            status["details"]["causes"][0]["reason"], "ResourceVersionTooLarge",
            "{status}"
        );
    }
    let (code, status) = s.get_json(&format!("{CONFIGMAPS}?resourceVersion=abc"));
    assert_eq!(
        (code, status["reason"].as_str()),
        (400, Some("BadRequest")),
        "{status}"
    );
    let (code, _) = s.get_json(&format!("{CONFIGMAPS}?resourceVersion={current}"));
    assert_eq!(code, 200, "a reached revision is served");
}

#[test]
fn a_create_without_name_or_generate_name_is_422_and_stores_nothing() {
    let s = Server::start();
    let before = s.ok(&["get", "cm", "-o", "name"]).lines().count();
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}, "data": {"a": "b"}});
    let (code, status, _) = s.request(
        "POST",
        CONFIGMAPS,
        "application/json",
        Some(&body.to_string()),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (422, Some("Invalid")),
        "{status}"
    );
    assert_eq!(
        status["message"],
        r#"ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required"#
    );
    assert_eq!(s.ok(&["get", "cm", "-o", "name"]).lines().count(), before);
    let body =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}});
    let (code, created, _) = s.request(
        "POST",
        CONFIGMAPS,
        "application/json",
        Some(&body.to_string()),
    );
    assert_eq!(code, 201, "{created}");
    assert!(created["metadata"]["name"]
        .as_str()
        .unwrap()
        .starts_with("gen-"));
}

#[test]
fn a_body_that_is_not_json_is_reported_as_kube_does() {
    let s = Server::start();
    let (code, status, _) = s.request(
        "POST",
        CONFIGMAPS,
        "application/json",
        Some(r#"{"apiVersion":"v1","kind":"ConfigMap","#),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (400, Some("BadRequest")),
        "{status}"
    );
    assert_eq!(
        status["message"],
        r#"the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Con ...)"#
    );
}

/// A YAML body nested as deep as the parser allows is served (the steps
/// after parsing recurse on the worker's stack), one level deeper is kube's
/// 400, and the server keeps serving either way, apply included.
#[test]
fn yaml_bodies_nested_to_the_parsers_limit_do_not_crash_the_server() {
    let s = Server::start();
    let body = |name: &str, depth: usize| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\nx: {}1{}",
            "{a: ".repeat(depth),
            "}".repeat(depth)
        )
    };
    let collection = "/api/v1/namespaces/default/configmaps";
    let (code, out, _) = s.request(
        "POST",
        collection,
        "application/yaml",
        Some(&body("deep", 63)),
    );
    assert_eq!(code, 201, "{out}");
    let (code, out, _) = s.request(
        "POST",
        collection,
        "application/yaml",
        Some(&body("deeper", 64)),
    );
    assert_eq!(code, 400, "{out}");
    let apply = "/api/v1/namespaces/default/configmaps/deep?fieldManager=m";
    let (code, out, _) = s.request(
        "PATCH",
        apply,
        "application/apply-patch+yaml",
        Some(&body("deep", 63)),
    );
    assert_eq!(code, 500, "kube's typed-patch refusal: {out}");
    let (code, _) = s.get_json("/readyz");
    assert_eq!(code, 200, "the server survived");
}
