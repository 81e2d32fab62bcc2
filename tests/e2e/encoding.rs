//! Response bodies byte for byte as kube-apiserver encodes them (clients
//! such as kube-rs report decode errors at positions that depend on it),
//! and what DELETE and create answer with.

use crate::support::{stdout, Server};
use serde_json::Value;

/// The raw body of a request with the admin certificate.
fn raw(s: &Server, method: &str, path: &str, body: Option<&str>) -> String {
    let url = s.url(path);
    let mut args = vec!["-X", method, "-H", "Content-Type: application/json"];
    if let Some(b) = body {
        args.extend(["--data-binary", b]);
    }
    args.push(&url);
    stdout(&s.curl(&args))
}

const CM: &str = r#"{"metadata":{"labels":{"a":"b"},"name":"c"},"data":{"k":"v"},"apiVersion":"v1","kind":"ConfigMap"}"#;

#[test]
fn objects_and_lists_start_with_kind_api_version_and_metadata_and_end_with_a_newline() {
    let s = Server::start();
    let path = "/api/v1/namespaces/default/configmaps";
    let created = raw(&s, "POST", path, Some(CM));
    assert!(
        created.starts_with(
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"default","#
        ),
        "{created}"
    );
    assert!(created.ends_with("}\n"), "{created:?}");
    let got = raw(&s, "GET", &format!("{path}/c"), None);
    assert!(got.starts_with(r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"#));
    assert!(got.ends_with("},\"data\":{\"k\":\"v\"}}\n"), "{got:?}");
    let list = raw(&s, "GET", path, None);
    assert!(
        list.starts_with(
            r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":""#
        ),
        "{list}"
    );
    let item = list.find(r#""metadata":{"name":"c","namespace":"default","#);
    assert!(item.is_some() && item < list.find(r#""data":"#), "{list}");
    assert!(list.ends_with("]}\n"), "{list:?}");
}

#[test]
fn errors_are_statuses_in_go_field_order_with_a_newline() {
    let s = Server::start();
    let missing = raw(
        &s,
        "GET",
        "/api/v1/namespaces/default/configmaps/nope",
        None,
    );
    assert_eq!(
        missing,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"configmaps \\\"nope\\\" not found\",\"reason\":\"NotFound\",\"details\":{\"name\":\"nope\",\"kind\":\"configmaps\"},\"code\":404}\n"
    );
    let grouped = raw(
        &s,
        "GET",
        "/apis/apps/v1/namespaces/default/deployments/web",
        None,
    );
    assert!(
        grouped.contains(
            r#""details":{"name":"web","group":"apps","kind":"deployments"},"code":404}"#
        ),
        "{grouped}"
    );
    let invalid = raw(
        &s,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        Some(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}"#),
    );
    assert!(
        invalid.contains(r#""reason":"Invalid","details":{"name":"Bad_Name","kind":"ConfigMap","causes":[{"reason":"FieldValueInvalid","message":"#),
        "{invalid}"
    );
    assert!(invalid.ends_with(",\"code\":422}\n"), "{invalid:?}");
}

#[test]
fn watch_lines_carry_objects_in_kube_order() {
    let s = Server::start();
    raw(
        &s,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        Some(CM),
    );
    let lines = raw(
        &s,
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
        None,
    );
    let first = lines.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(
            r#"{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","#
        ),
        "{lines}"
    );
    assert!(lines.ends_with("}\n"), "{lines:?}");
}

#[test]
fn deleting_a_service_returns_the_service_and_a_configmap_a_status() {
    let s = Server::start();
    let svc = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"ports":[{"port":80}]}}"#;
    let created = raw(&s, "POST", "/api/v1/namespaces/default/services", Some(svc));
    let created: Value = serde_json::from_str(&created).unwrap_or_default();
    assert_eq!(
        created["status"],
        serde_json::json!({"loadBalancer": {}}),
        "{created}"
    );
    let deleted = raw(
        &s,
        "DELETE",
        "/api/v1/namespaces/default/services/web",
        None,
    );
    assert!(
        deleted.starts_with(r#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"web","#),
        "{deleted}"
    );
    s.fails(&["get", "service", "web"]);
    raw(
        &s,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        Some(CM),
    );
    let deleted = raw(
        &s,
        "DELETE",
        "/api/v1/namespaces/default/configmaps/c",
        None,
    );
    let status: Value = serde_json::from_str(&deleted).unwrap_or_default();
    assert_eq!(
        (status["kind"].as_str(), status["status"].as_str()),
        (Some("Status"), Some("Success")),
        "{deleted}"
    );
}

#[test]
fn a_created_deployment_carries_an_empty_status() {
    let s = Server::start();
    let deploy = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}"#;
    let created = raw(
        &s,
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        Some(deploy),
    );
    assert!(created.ends_with(",\"status\":{}}\n"), "{created}");
}
