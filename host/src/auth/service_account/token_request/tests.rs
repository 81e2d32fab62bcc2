//! Tests of the TokenRequest checks, claims and response.

use super::*;

const SA_UID: &str = "sa-uid";

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2024-05-01T10:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn settings() -> TokenSettings {
    TokenSettings::new(
        "https://issuer",
        vec!["https://issuer".into(), "api".into()],
    )
}

fn service_account() -> Value {
    json!({"metadata": {"name": "builder", "namespace": "ci", "uid": SA_UID}})
}

fn pod(sa: &str, node: &str) -> Value {
    json!({"metadata": {"name": "web-0", "namespace": "ci", "uid": "pod-uid"},
           "spec": {"serviceAccountName": sa, "nodeName": node}})
}

struct Case {
    body: Value,
    sa: Option<Value>,
    bound: Option<Value>,
    node: Option<Value>,
    settings: TokenSettings,
}

impl Case {
    fn new(body: Value) -> Self {
        Case {
            body,
            sa: Some(service_account()),
            bound: None,
            node: None,
            settings: settings(),
        }
    }

    fn run(&self) -> Result<PreparedToken, ApiError> {
        prepare(
            &TokenRequestCall {
                namespace: "ci",
                name: "builder",
                body: &self.body,
                service_account: self.sa.as_ref(),
                bound_object: self.bound.as_ref(),
                pod_node: self.node.as_ref(),
                now: now(),
                jti: "jti-1".into(),
            },
            &self.settings,
        )
    }

    fn error(&self) -> ApiError {
        self.run().unwrap_err()
    }
}

fn bound_to(kind: &str, name: &str) -> Value {
    json!({"spec": {"boundObjectRef": {"kind": kind, "apiVersion": "v1", "name": name}}})
}

#[test]
fn an_empty_request_gets_kubes_defaults() {
    let t = Case::new(json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"audiences": null}}))
        .run()
        .unwrap();
    let at = now().timestamp();
    assert_eq!(
        serde_json::to_string(&t.claims).unwrap(),
        serde_json::to_string(&json!({
            "aud": ["https://issuer", "api"], "exp": at + 3600, "iat": at, "iss": "https://issuer",
            "jti": "jti-1",
            "kubernetes.io": {"namespace": "ci", "serviceaccount": {"name": "builder", "uid": SA_UID}},
            "nbf": at, "sub": "system:serviceaccount:ci:builder"}))
        .unwrap()
    );
    assert_eq!(
        t.response,
        json!({"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": "builder", "namespace": "ci", "uid": SA_UID,
                         "creationTimestamp": "2024-05-01T10:00:00Z"},
            "spec": {"audiences": ["https://issuer", "api"], "expirationSeconds": 3600, "boundObjectRef": null},
            "status": {"token": "", "expirationTimestamp": "2024-05-01T11:00:00Z"}})
    );
    assert!(t.warnings.is_empty());
    assert_eq!(t.into_response("tok".into())["status"]["token"], "tok");
}

#[test]
fn pod_bound_tokens_name_the_pod_and_its_node() {
    let mut case = Case::new(
        json!({"spec": {"audiences": ["vault"], "expirationSeconds": 600,
        "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "web-0", "uid": "pod-uid"}}}),
    );
    case.bound = Some(pod("builder", "n1"));
    case.node = Some(json!({"metadata": {"name": "n1", "uid": "node-uid"}}));
    let t = case.run().unwrap();
    assert_eq!(
        t.claims["kubernetes.io"],
        json!({"namespace": "ci", "node": {"name": "n1", "uid": "node-uid"},
               "pod": {"name": "web-0", "uid": "pod-uid"},
               "serviceaccount": {"name": "builder", "uid": SA_UID}})
    );
    assert_eq!(t.claims["aud"], json!(["vault"]));
    assert_eq!(
        t.response["spec"]["boundObjectRef"],
        json!({"kind": "Pod", "apiVersion": "v1", "name": "web-0", "uid": "pod-uid"})
    );
    case.node = None;
    assert_eq!(
        case.run().unwrap().claims["kubernetes.io"]["node"],
        json!({"name": "n1"})
    );
    case.bound = Some(pod("builder", ""));
    assert!(case.run().unwrap().claims["kubernetes.io"]
        .get("node")
        .is_none());
}

#[test]
fn secret_and_node_bound_tokens() {
    let mut case = Case::new(bound_to("Secret", "s"));
    case.bound = Some(json!({"metadata": {"name": "s", "uid": "s-uid"}}));
    assert_eq!(
        case.run().unwrap().claims["kubernetes.io"]["secret"],
        json!({"name": "s", "uid": "s-uid"})
    );
    let mut case = Case::new(bound_to("Node", "n1"));
    case.bound = Some(json!({"metadata": {"name": "n1", "uid": "n-uid"}}));
    let claims = case.run().unwrap().claims;
    assert_eq!(
        claims["kubernetes.io"]["node"],
        json!({"name": "n1", "uid": "n-uid"})
    );
    assert!(claims["kubernetes.io"].get("pod").is_none());
}

#[test]
fn bound_object_errors_are_kubes() {
    let mut case = Case::new(bound_to("Pod", "web-0"));
    let e = case.error();
    assert_eq!(
        (e.code, e.reason, e.message.as_str()),
        (404, "NotFound", "pods \"web-0\" not found")
    );
    case.bound = Some(pod("other", "n1"));
    assert_eq!(
        case.error().message,
        "cannot bind token for serviceaccount \"builder\" to pod running with different serviceaccount name."
    );
    case.bound = Some(pod("builder", "n1"));
    case.body["spec"]["boundObjectRef"]["uid"] = json!("old-uid");
    let e = case.error();
    assert_eq!((e.code, e.reason), (409, "Conflict"));
    assert_eq!(
        e.message,
        "Operation cannot be fulfilled on Pod \"web-0\": the UID in the bound object reference (old-uid) \
         does not match the UID in record. The object might have been deleted and then recreated"
    );
    let deployment = json!({"spec": {"boundObjectRef": {"kind": "Deployment", "apiVersion": "apps/v1", "name": "d"}}});
    let e = Case::new(deployment).error();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            400,
            "cannot bind token to object of type apps/v1, Kind=Deployment"
        )
    );
    assert_eq!(
        Case::new(bound_to("ConfigMap", "c")).error().message,
        "cannot bind token to object of type /v1, Kind=ConfigMap"
    );
}

#[test]
fn expiration_bounds_are_validated() {
    let e = Case::new(json!({"spec": {"expirationSeconds": 599}})).error();
    assert_eq!((e.code, e.reason), (422, "Invalid"));
    assert_eq!(
        e.message,
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"
    );
    assert_eq!(
        e.details.unwrap()["causes"],
        json!([{"reason": "FieldValueInvalid", "field": "spec.expirationSeconds",
                "message": "Invalid value: 599: may not specify a duration less than 10 minutes"}])
    );
    let e = Case::new(json!({"spec": {"expirationSeconds": (1i64 << 32) + 1}})).error();
    assert!(e.message.ends_with(
        "Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"
    ));
    assert!(
        Case::new(json!({"spec": {"expirationSeconds": 1i64 << 32}}))
            .run()
            .is_ok()
    );
}

#[test]
fn names_must_match_the_url_and_the_account_must_exist() {
    let e = Case::new(json!({"metadata": {"name": "other"}})).error();
    assert_eq!(
        e.message,
        "TokenRequest.authentication.k8s.io \"builder\" is invalid: metadata.name: Invalid value: \"other\": must match the service account name if specified"
    );
    let e = Case::new(json!({"metadata": {"namespace": "prod"}})).error();
    assert!(e.message.ends_with("metadata.namespace: Invalid value: \"prod\": must match the service account namespace if specified"));
    let mut missing = Case::new(json!({}));
    missing.sa = None;
    let e = missing.error();
    assert_eq!(
        (e.code, e.message.as_str()),
        (404, "serviceaccounts \"builder\" not found")
    );
    assert_eq!(
        e.details,
        Some(Box::new(
            json!({"name": "builder", "kind": "serviceaccounts"})
        ))
    );
    let e = Case::new(json!({"metadata": {"uid": "stale"}})).error();
    assert_eq!(
        e.message,
        "Operation cannot be fulfilled on TokenRequest.authentication.k8s.io \"builder\": the UID in the token request (stale) does not match the UID of the service account (sa-uid)"
    );
}

#[test]
fn long_requests_are_shortened_with_a_warning() {
    let mut case = Case::new(json!({"spec": {"expirationSeconds": 86400}}));
    case.settings.max_expiration_seconds = Some(7200);
    let t = case.run().unwrap();
    assert_eq!(
        t.warnings,
        ["requested expiration of 86400 seconds shortened to 7200 seconds"]
    );
    assert_eq!(t.response["spec"]["expirationSeconds"], 7200);
    assert_eq!(t.claims["exp"], now().timestamp() + 7200);
    assert_eq!(
        t.response["status"]["expirationTimestamp"],
        "2024-05-01T12:00:00Z"
    );
}

#[test]
fn kubelets_warn_only_tokens_are_extended() {
    let mut case = Case::new(json!({"spec": {"expirationSeconds": 3607,
        "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "web-0"}}}));
    case.bound = Some(pod("builder", ""));
    let t = case.run().unwrap();
    let at = now().timestamp();
    assert_eq!(t.claims["exp"], at + EXPIRATION_EXTENSION_SECONDS);
    assert_eq!(t.claims["kubernetes.io"]["warnafter"], at + 3607);
    assert_eq!(
        t.response["status"]["expirationTimestamp"],
        "2024-05-01T11:00:07Z"
    );
    case.body["spec"]["audiences"] = json!(["vault"]);
    assert_eq!(
        case.run().unwrap().claims["exp"],
        at + 3607,
        "not for foreign audiences"
    );
    case.body["spec"]["audiences"] = Value::Null;
    case.settings.extend_expiration = false;
    assert_eq!(case.run().unwrap().claims["exp"], at + 3607);
}

#[test]
fn bodies_that_are_not_token_requests_are_bad_requests() {
    let e = Case::new(json!({"spec": {"expirationSeconds": "long"}})).error();
    assert_eq!(e.code, 400);
    assert!(e
        .message
        .starts_with("TokenRequest in version \"v1\" cannot be handled as a TokenRequest: "));
    assert!(bound_target(&json!({"spec": "text"})).is_err());
}

#[test]
fn bound_target_names_what_the_caller_must_read() {
    assert_eq!(bound_target(&json!({})).unwrap(), None);
    let pod_target = bound_target(&bound_to("Pod", "web-0")).unwrap().unwrap();
    assert_eq!(
        (
            pod_target.resource(),
            pod_target.namespaced(),
            pod_target.name.as_str()
        ),
        ("pods", true, "web-0")
    );
    let node_target = bound_target(&bound_to("Node", "n1")).unwrap().unwrap();
    assert_eq!(
        (node_target.resource(), node_target.namespaced()),
        ("nodes", false)
    );
    assert_eq!(bound_target(&bound_to("ConfigMap", "c")).unwrap(), None);
    assert_eq!(pod_node_name(&pod("builder", "n1")), Some("n1"));
    assert_eq!(pod_node_name(&pod("builder", "")), None);
}

#[test]
fn status_errors_render_as_kube_status_objects() {
    let e = Case::new(bound_to("Pod", "web-0")).error();
    assert_eq!(
        e.to_status(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "pods \"web-0\" not found", "reason": "NotFound",
               "details": {"name": "web-0", "kind": "pods"}, "code": 404})
    );
}
