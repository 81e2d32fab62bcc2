//! Type safety of built-in objects: wrongly typed fields get kube's 400
//! decode errors, ObjectMeta and RBAC bindings kube's 422s, Secret
//! stringData becomes data, and nothing refused is stored.

use crate::support::Server;
use serde_json::{json, Value};

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const ROLEBINDINGS: &str = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings";
const SECRETS: &str = "/api/v1/namespaces/kube-system/secrets";

fn post(s: &Server, path: &str, body: &str) -> (u16, Value) {
    let (code, v, _) = s.request("POST", path, "application/json", Some(body));
    (code, v)
}

fn deployment(name: &str, replicas: &str) -> String {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}"}},
        "spec":{{"replicas":{replicas},"selector":{{"matchLabels":{{"app":"w"}}}},
        "template":{{"metadata":{{"labels":{{"app":"w"}}}},"spec":{{"containers":[{{"name":"c","image":"nginx"}}]}}}}}}}}"#
    )
}

/// Asserts a 400 BadRequest with `message`, and that `stored` does not exist.
fn bad_request(s: &Server, path: &str, body: &str, message: &str, stored: &str) {
    let (code, status) = post(s, path, body);
    assert_eq!(
        (code, status["reason"].as_str()),
        (400, Some("BadRequest")),
        "{status}"
    );
    assert_eq!(status["message"], message);
    assert_eq!(
        s.get_json(&format!("{path}/{stored}")).0,
        404,
        "{stored} was stored"
    );
}

#[test]
fn wrongly_typed_fields_get_kubes_decode_errors_and_nothing_is_stored() {
    let s = Server::start();
    let cm = "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal";
    bad_request(
        &s,
        CONFIGMAPS,
        r#"{"metadata":{"name":"a"},"data":[1,2]}"#,
        &format!("{cm} array into Go struct field ConfigMap.data of type map[string]string"),
        "a",
    );
    bad_request(
        &s,
        CONFIGMAPS,
        r#"{"metadata":{"name":"b"},"data":{"k":5}}"#,
        &format!("{cm} number into Go struct field ConfigMap.data of type string"),
        "b",
    );
    bad_request(
        &s,
        CONFIGMAPS,
        r#"{"metadata":{"name":5}}"#,
        &format!("{cm} number into Go struct field ObjectMeta.metadata.name of type string"),
        "5",
    );
    bad_request(&s, CONFIGMAPS, r#"{"metadata":{"name":"c","managedFields":"x"}}"#,
        &format!("{cm} string into Go struct field ObjectMeta.metadata.managedFields of type []v1.ManagedFieldsEntry"), "c");
    let huge = format!(
        r#"{{"metadata":{{"name":"d"}},"data":[{}1]}}"#,
        "1,".repeat(1_000_000)
    );
    bad_request(
        &s,
        CONFIGMAPS,
        &huge,
        &format!("{cm} array into Go struct field ConfigMap.data of type map[string]string"),
        "d",
    );

    let d =
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal";
    let replicas = "into Go struct field DeploymentSpec.spec.replicas of type int32";
    bad_request(
        &s,
        DEPLOYMENTS,
        &deployment("e", "\"3\""),
        &format!("{d} string {replicas}"),
        "e",
    );
    bad_request(
        &s,
        DEPLOYMENTS,
        &deployment("f", "1.5"),
        &format!("{d} number 1.5 {replicas}"),
        "f",
    );
    bad_request(
        &s,
        DEPLOYMENTS,
        &deployment("g", "2147483648"),
        &format!("{d} number 2147483648 {replicas}"),
        "g",
    );
    bad_request(
        &s,
        ROLEBINDINGS,
        r#"{"metadata":{"name":"h"},"roleRef":"x"}"#,
        "RoleBinding in version \"v1\" cannot be handled as a RoleBinding: json: cannot unmarshal \
         string into Go struct field RoleBinding.roleRef of type v1.RoleRef",
        "h",
    );

    let (code, created) = post(&s, DEPLOYMENTS, &deployment("zero", "-0"));
    assert_eq!(code, 201, "{created}");
    let (_, stored) = s.get_json(&format!("{DEPLOYMENTS}/zero"));
    assert_eq!(stored["spec"]["replicas"].to_string(), "0");

    let (code, status, _) = s.request(
        "PATCH",
        &format!("{DEPLOYMENTS}/zero"),
        "application/merge-patch+json",
        Some(r#"{"spec":{"replicas":"4"}}"#),
    );
    assert_eq!(code, 400, "{status}");
    assert_eq!(status["message"], format!("{d} string {replicas}"));
}

/// Asserts a 422 Invalid with `message`, and that `stored` does not exist.
fn invalid(s: &Server, path: &str, body: &str, message: &str, stored: &str) {
    let (code, status) = post(s, path, body);
    assert_eq!(
        (code, status["reason"].as_str()),
        (422, Some("Invalid")),
        "{status}"
    );
    assert_eq!(status["message"], message);
    assert_eq!(
        s.get_json(&format!("{path}/{stored}")).0,
        404,
        "{stored} was stored"
    );
}

#[test]
fn object_meta_and_role_refs_get_kubes_422() {
    let s = Server::start();
    invalid(&s, CONFIGMAPS,
        r#"{"metadata":{"name":"owned","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o"}]}}"#,
        "ConfigMap \"owned\" is invalid: metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty",
        "owned");
    invalid(&s, CONFIGMAPS, r#"{"metadata":{"name":"labelled","labels":{"a/b/c":"x"}}}"#,
        "ConfigMap \"labelled\" is invalid: metadata.labels: Invalid value: \"a/b/c\": a qualified name must \
         consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric \
         character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
         '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' \
         (e.g. 'example.com/MyName')",
        "labelled");
    let finalizers = format!(
        r#"{{"metadata":{{"name":"fin","finalizers":[{}""]}}}}"#,
        "\"\",".repeat(1_000_000)
    );
    let (code, status) = post(&s, CONFIGMAPS, &finalizers);
    assert_eq!(code, 422, "{}", status["message"]);
    assert!(status["message"].as_str().unwrap().starts_with(
        "ConfigMap \"fin\" is invalid: [metadata.finalizers: Invalid value: \"\": name part must be non-empty"));

    let rb = |name: &str, kind: &str, role: &str| {
        json!({"metadata": {"name": name}, "subjects": [{"kind": "User", "name": "u"}],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role}})
        .to_string()
    };
    invalid(&s, ROLEBINDINGS, &rb("lower", "clusterrole", "view"),
        "RoleBinding.rbac.authorization.k8s.io \"lower\" is invalid: roleRef.kind: Unsupported value: \
         \"clusterrole\": supported values: \"Role\", \"ClusterRole\"",
        "lower");
    assert_eq!(
        post(&s, ROLEBINDINGS, &rb("rb", "ClusterRole", "view")).0,
        201
    );
    let (code, status, _) = s.request(
        "PUT",
        &format!("{ROLEBINDINGS}/rb"),
        "application/json",
        Some(&rb("rb", "ClusterRole", "edit")),
    );
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["message"],
        "RoleBinding.rbac.authorization.k8s.io \"rb\" is invalid: roleRef: Invalid value: \
         rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"edit\"}: \
         cannot change roleRef");
    assert_eq!(
        s.get_json(&format!("{ROLEBINDINGS}/rb")).1["roleRef"]["name"],
        "view"
    );
}

#[test]
fn secret_string_data_becomes_data_and_bootstrap_tokens_authenticate() {
    let s = Server::start();
    let token = json!({"metadata": {"name": "bootstrap-token-abcdef"},
        "type": "bootstrap.kubernetes.io/token",
        "stringData": {"token-id": "abcdef", "token-secret": "0123456789abcdef",
                       "usage-bootstrap-authentication": "true"}});
    let (code, created) = post(&s, SECRETS, &token.to_string());
    assert_eq!(code, 201, "{created}");
    assert!(created.get("stringData").is_none(), "{created}");
    assert_eq!(created["data"]["token-id"], "YWJjZGVm");
    let who = s.kubectl_with(
        &s.token_kubeconfig("abcdef.0123456789abcdef"),
        &["auth", "whoami", "-o", "json"],
    );
    let who: Value = serde_json::from_slice(&who.stdout).unwrap_or_default();
    assert_eq!(
        who["status"]["userInfo"]["username"], "system:bootstrap:abcdef",
        "{who}"
    );

    let keys: serde_json::Map<String, Value> = (0..8000)
        .map(|i| (format!("key-{i}"), json!("v")))
        .collect();
    let many = json!({"metadata": {"name": "many"}, "stringData": keys});
    let (code, created) = post(&s, SECRETS, &many.to_string());
    assert_eq!(code, 201, "{}", created["message"]);
    assert_eq!(created["data"].as_object().map(|d| d.len()), Some(8000));
    let (code, status) = post(
        &s,
        SECRETS,
        r#"{"metadata":{"name":"bad"},"data":{"a":"not base64"}}"#,
    );
    assert_eq!(code, 400);
    assert_eq!(status["message"],
        "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 3");
}

#[test]
fn scale_put_with_another_name_is_refused() {
    let s = Server::start();
    assert_eq!(post(&s, DEPLOYMENTS, &deployment("web", "1")).0, 201);
    let scale = |name: &str, replicas: &str| {
        format!(
            r#"{{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{{"name":"{name}","namespace":"default"}},"spec":{{"replicas":{replicas}}}}}"#
        )
    };
    let path = format!("{DEPLOYMENTS}/web/scale");
    let (code, status, _) = s.request("PUT", &path, "application/json", Some(&scale("other", "3")));
    assert_eq!(
        (code, status["reason"].as_str()),
        (400, Some("BadRequest")),
        "{status}"
    );
    assert_eq!(
        status["message"],
        "the name of the object (other) does not match the name on the URL (web)"
    );
    let (code, status, _) = s.request(
        "PUT",
        &path,
        "application/json",
        Some(&scale("web", "\"3\"")),
    );
    assert_eq!(code, 400);
    assert_eq!(status["message"],
        "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal string into Go \
         struct field ScaleSpec.spec.replicas of type int32");
    assert_eq!(
        s.get_json(&format!("{DEPLOYMENTS}/web")).1["spec"]["replicas"],
        1
    );
    let (code, _, _) = s.request("PUT", &path, "application/json", Some(&scale("web", "3")));
    assert_eq!(code, 200);
}
