//! Admission webhooks from the API (Mutating/ValidatingWebhookConfiguration)
//! called over HTTPS: a real webhook server runs in this test process.

use crate::support::Server;
use base64::Engine;
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A TLS webhook server on 127.0.0.1; returns (port, CA PEM, call counter).
fn start_webhook() -> (u16, String, Arc<AtomicUsize>) {
    let (config, ca) = crate::support::loopback_tls();
    let (port, calls) = serve_webhook(config);
    (port, ca, calls)
}

/// A self-signed serving certificate and its key (PEM), as the common
/// tutorial makes them: `openssl req -x509 … -subj /CN=127.0.0.1 -addext
/// subjectAltName=IP:127.0.0.1` (CA:TRUE, its own caBundle).
fn openssl_self_signed() -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    let out = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl");
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    (
        std::fs::read_to_string(cert).unwrap(),
        std::fs::read_to_string(key).unwrap(),
    )
}

/// The webhook server with the certificate `openssl_self_signed` made;
/// returns (port, that certificate's PEM, call counter).
fn start_openssl_webhook() -> (u16, String, Arc<AtomicUsize>) {
    use rustls::pki_types::pem::PemObject;
    let (cert, key) = openssl_self_signed();
    let der = rustls::pki_types::CertificateDer::from_pem_slice(cert.as_bytes()).unwrap();
    let key_der = rustls::pki_types::PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![der], key_der)
        .unwrap();
    let (port, calls) = serve_webhook(config);
    (port, cert, calls)
}

/// Serves `respond` over TLS with `config` on a free port of 127.0.0.1.
fn serve_webhook(config: rustls::ServerConfig) -> (u16, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let port = crate::support::serve_on_loopback(
        Some(config),
        move |req: http::Request<hyper::body::Incoming>| {
            let calls = counter.clone();
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                let path = req.uri().path().to_string();
                let body = req.into_body().collect().await.unwrap().to_bytes();
                let review: Value = serde_json::from_slice(&body).unwrap();
                http::Response::new(answer(&path, &review))
            }
        },
    );
    (port, calls)
}

type Body = BoxBody<bytes::Bytes, Infallible>;

/// `respond`'s answer, or on /huge `huge_answer`.
fn answer(path: &str, review: &Value) -> Body {
    if path == "/huge" {
        return huge_answer(review);
    }
    let text = respond(path, review).to_string();
    Full::new(bytes::Bytes::from(text)).boxed()
}

/// 1 MiB pieces of `huge_answer`.
const HUGE_MIB: usize = 1536;

/// An AdmissionReview answer of 1.5 GiB (a list of warnings without end),
/// streamed: one 1 MiB piece sent again and again, none of it held here.
fn huge_answer(review: &Value) -> Body {
    let head = format!(
        r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{{"uid":{},"allowed":true,"warnings":["#,
        review["request"]["uid"]
    );
    let piece = bytes::Bytes::from(format!("\"{}\",", "x".repeat((1 << 20) - 3)));
    let pieces = std::iter::once(bytes::Bytes::from(head))
        .chain(std::iter::repeat_n(piece, HUGE_MIB))
        .map(|b| Ok(hyper::body::Frame::data(b)));
    StreamBody::new(futures_util::stream::iter(pieces)).boxed()
}

/// /mutate labels every object `mutated=yes`; /validate denies objects labelled `blocked=true`.
fn respond(path: &str, review: &Value) -> Value {
    if path == "/convert" {
        return convert(review);
    }
    let req = &review["request"];
    let mut resp = json!({"uid": req["uid"], "allowed": true});
    if path == "/mutate" {
        let has_labels = req["object"]["metadata"]["labels"].is_object();
        let patch = if has_labels {
            json!([{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}])
        } else {
            json!([{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}])
        };
        resp["patch"] = json!(base64::engine::general_purpose::STANDARD.encode(patch.to_string()));
        resp["patchType"] = json!("JSONPatch");
    } else if req["object"]["metadata"]["labels"]["blocked"] == "true" {
        resp["allowed"] = json!(false);
        resp["status"] = json!({"code": 403, "message": "blocked by test webhook"});
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
}

/// A conversion webhook for Widgets: v1 `spec.size` is v2 `spec.replicas`.
fn convert(review: &Value) -> Value {
    let req = &review["request"];
    let desired = req["desiredAPIVersion"].as_str().unwrap_or_default();
    let converted: Vec<Value> = req["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let mut o = o.clone();
            let spec = o["spec"].as_object_mut().cloned().unwrap_or_default();
            let (from, to) = if desired.ends_with("/v2") {
                ("size", "replicas")
            } else {
                ("replicas", "size")
            };
            let mut spec = spec;
            if let Some(v) = spec.remove(from) {
                spec.insert(to.into(), v);
            }
            o["spec"] = Value::Object(spec);
            o["apiVersion"] = json!(desired);
            o
        })
        .collect();
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
           "response": {"uid": req["uid"], "convertedObjects": converted, "result": {"status": "Success"}}})
}

/// Two versions of Widgets converted by the webhook at `url`.
fn converted_crd(url: &str, ca: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca);
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: widgets.example.com}}
spec:
  group: example.com
  scope: Namespaced
  names: {{plural: widgets, singular: widget, kind: Widget}}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {{url: "{url}", caBundle: "{ca}"}}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}
  - name: v2
    served: true
    storage: false
    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}
"#
    )
}

#[test]
fn a_conversion_webhook_converts_custom_resources_between_versions() {
    let s = Server::start();
    let (port, ca, calls) = start_webhook();
    let url = format!("https://127.0.0.1:{port}/convert");
    s.ok_stdin(&["apply", "-f", "-"], &converted_crd(&url, &ca));
    s.ok(&[
        "wait",
        "--for=condition=established",
        "--timeout=30s",
        "crd/widgets.example.com",
    ]);
    let v2 = "/apis/example.com/v2/namespaces/default/widgets";
    let body = json!({"apiVersion": "example.com/v2", "kind": "Widget",
                      "metadata": {"name": "w"}, "spec": {"replicas": 3}});
    let (code, created, _) = s.request("POST", v2, "application/json", Some(&body.to_string()));
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["spec"], json!({"replicas": 3}));
    let (_, v1) = s.get_json("/apis/example.com/v1/namespaces/default/widgets/w");
    assert_eq!(
        v1["spec"],
        json!({"size": 3}),
        "stored in v1 through the webhook"
    );
    let (_, list) = s.get_json(v2);
    assert_eq!(list["items"][0]["spec"], json!({"replicas": 3}));
    assert!(calls.load(Ordering::SeqCst) >= 2);
}

fn configuration(kind: &str, name: &str, url: &str, ca: &str, policy: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca);
    format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: {kind}
metadata: {{name: {name}}}
webhooks:
- name: {name}.capstan.test
  clientConfig: {{url: "{url}", caBundle: "{ca}"}}
  rules: [{{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
  failurePolicy: {policy}
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 2
"#
    )
}

#[test]
fn validating_and_mutating_webhooks_are_called_over_https() {
    let s = Server::start();
    let (port, ca, calls) = start_webhook();
    let base = format!("https://127.0.0.1:{port}");
    s.ok_stdin(
        &["apply", "-f", "-"],
        &configuration(
            "ValidatingWebhookConfiguration",
            "deny",
            &format!("{base}/validate"),
            &ca,
            "Fail",
        ),
    );
    s.ok_stdin(
        &["apply", "-f", "-"],
        &configuration(
            "MutatingWebhookConfiguration",
            "label",
            &format!("{base}/mutate"),
            &ca,
            "Fail",
        ),
    );
    s.ok(&["create", "configmap", "plain"]);
    assert_eq!(
        s.json(&["get", "cm", "plain"])["metadata"]["labels"]["mutated"],
        "yes"
    );
    let err = s.fails(&["label", "cm", "plain", "blocked=true"]);
    assert!(
        err.contains(
            r#"admission webhook "deny.capstan.test" denied the request: blocked by test webhook"#
        ),
        "{err}"
    );
    assert!(s.json(&["get", "cm", "plain"])["metadata"]["labels"]
        .get("blocked")
        .is_none());
    assert!(calls.load(Ordering::SeqCst) >= 4);
    s.ok(&["create", "secret", "generic", "untouched"]);
    assert!(
        s.json(&["get", "secret", "untouched"])["metadata"]
            .get("labels")
            .is_none(),
        "rules limit webhooks to configmaps"
    );
}

#[test]
fn unreachable_webhooks_follow_their_failure_policy() {
    let s = Server::start();
    let (_, ca, _) = start_webhook();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("https://127.0.0.1:{closed}/validate");
    s.ok_stdin(
        &["apply", "-f", "-"],
        &configuration(
            "ValidatingWebhookConfiguration",
            "lenient",
            &url,
            &ca,
            "Ignore",
        ),
    );
    let out = s.kubectl(&["create", "configmap", "allowed"]);
    assert!(out.status.success());
    assert!(crate::support::stderr(&out)
        .contains(r#"webhook "lenient.capstan.test" failed and was ignored"#));
    s.ok_stdin(
        &["apply", "-f", "-"],
        &configuration(
            "ValidatingWebhookConfiguration",
            "strict",
            &url,
            &ca,
            "Fail",
        ),
    );
    let err = s.fails(&["create", "configmap", "refused"]);
    assert!(
        err.contains(r#"Internal error occurred: failed calling webhook "strict.capstan.test""#),
        "{err}"
    );
    assert!(s.fails(&["get", "cm", "refused"]).contains("not found"));
}

/// `configuration` with matchConditions appended to its webhook.
fn with_conditions(config: String, conditions: &[(&str, &str)]) -> String {
    let list: String = conditions
        .iter()
        .map(|(name, expr)| format!("  - name: {name}\n    expression: {expr:?}\n"))
        .collect();
    format!("{config}  matchConditions:\n{list}")
}

#[test]
fn match_conditions_decide_whether_a_webhook_is_called() {
    let s = Server::start();
    let (port, ca, calls) = start_webhook();
    let url = format!("https://127.0.0.1:{port}/validate");
    let deny = configuration("ValidatingWebhookConfiguration", "deny", &url, &ca, "Fail");
    let exempt = "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)";
    s.ok_stdin(
        &["apply", "-f", "-"],
        &with_conditions(
            deny,
            &[
                ("not-exempt", exempt),
                ("not-admin-ns", "request.namespace != 'kube-system'"),
            ],
        ),
    );
    s.ok(&["create", "configmap", "watched"]);
    let called = calls.load(Ordering::SeqCst);
    assert!(called >= 1, "conditions true: the webhook is called");
    let err = s.fails(&["label", "cm", "watched", "blocked=true"]);
    assert!(err.contains("blocked by test webhook"), "{err}");
    s.ok(&["create", "configmap", "free", "-n", "kube-system"]);
    s.ok(&["label", "cm", "free", "-n", "kube-system", "blocked=true"]);
    s.ok(&["label", "cm", "watched", "exempt=yes"]);
    let before = calls.load(Ordering::SeqCst);
    s.ok(&["label", "cm", "watched", "blocked=true"]);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        before,
        "a false condition skips the call"
    );
}

#[test]
fn a_match_condition_that_cannot_be_evaluated_follows_the_failure_policy() {
    let s = Server::start();
    let (port, ca, _) = start_webhook();
    let url = format!("https://127.0.0.1:{port}/validate");
    let broken = [("needs-label", "object.metadata.labels.team == 'a'")];
    let lenient = configuration(
        "ValidatingWebhookConfiguration",
        "lenient",
        &url,
        &ca,
        "Ignore",
    );
    s.ok_stdin(&["apply", "-f", "-"], &with_conditions(lenient, &broken));
    let out = s.kubectl(&["create", "configmap", "unlabelled"]);
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    assert!(
        crate::support::stderr(&out).contains(r#"failed evaluating match condition "needs-label""#),
        "{}",
        crate::support::stderr(&out)
    );
    let strict = configuration(
        "ValidatingWebhookConfiguration",
        "strict",
        &url,
        &ca,
        "Fail",
    );
    // One that does not compile is refused on write, as kube refuses it.
    let uncompilable = [("typo", "object.metadata.name ==")];
    let out = s.kubectl_stdin(
        &["apply", "-f", "-"],
        Some(&with_conditions(strict, &uncompilable)),
    );
    let err = crate::support::stderr(&out);
    assert!(
        !out.status.success()
            && err.contains(r#"webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name ==": compilation failed"#),
        "{err}"
    );
    s.ok(&["create", "configmap", "allowed"]);
}

#[test]
fn a_self_signed_openssl_certificate_given_as_its_own_ca_bundle_is_trusted() {
    let s = Server::start();
    let (port, cert, calls) = start_openssl_webhook();
    let apply = |name: &str, host: &str, ca: &str| {
        let url = format!("https://{host}:{port}/validate");
        let config = configuration("ValidatingWebhookConfiguration", name, &url, ca, "Fail");
        s.ok_stdin(&["apply", "-f", "-"], &config);
    };
    apply("selfsigned", "127.0.0.1", &cert);
    s.ok(&["create", "configmap", "checked"]);
    assert!(calls.load(Ordering::SeqCst) >= 1);
    let err = s.fails(&["label", "cm", "checked", "blocked=true"]);
    assert!(err.contains("blocked by test webhook"), "{err}");
    s.ok(&["delete", "validatingwebhookconfiguration", "selfsigned"]);

    // Another self-signed certificate as the caBundle: refused.
    let (foreign, _) = openssl_self_signed();
    apply("foreign", "127.0.0.1", &foreign);
    let err = s.fails(&["create", "configmap", "foreign"]);
    assert!(
        err.contains(r#"failed calling webhook "foreign.capstan.test""#),
        "{err}"
    );
    s.ok(&["delete", "validatingwebhookconfiguration", "foreign"]);

    // The right caBundle but a name the certificate does not carry: refused.
    apply("misnamed", "localhost", &cert);
    let err = s.fails(&["create", "configmap", "misnamed"]);
    assert!(
        err.contains(r#"failed calling webhook "misnamed.capstan.test""#),
        "{err}"
    );
    assert!(s.fails(&["get", "cm", "foreign"]).contains("not found"));
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `configuration` for every resource of every group (`*/*/*`, all operations).
fn on_everything(kind: &str, name: &str, url: &str, ca: &str, policy: &str) -> String {
    configuration(kind, name, url, ca, policy).replace(
        r#"rules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]"#,
        r#"rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"]}]"#,
    )
}

#[test]
fn a_failing_webhook_on_everything_cannot_lock_out_its_own_removal() {
    let s = Server::start();
    let (_, ca, _) = start_webhook();
    let url = format!("https://127.0.0.1:{}/validate", closed_port());
    let broken = on_everything(
        "ValidatingWebhookConfiguration",
        "broken",
        &url,
        &ca,
        "Fail",
    );
    s.ok_stdin(&["apply", "-f", "-"], &broken);
    let err = s.fails(&["create", "configmap", "refused"]);
    assert!(
        err.contains(r#"failed calling webhook "broken.capstan.test""#),
        "{err}"
    );
    // Admission configuration is never sent to webhooks: another
    // configuration and a PolicyBundle can be written and removed...
    let other = on_everything("MutatingWebhookConfiguration", "other", &url, &ca, "Fail");
    s.ok_stdin(&["apply", "-f", "-"], &other);
    s.ok(&["delete", "mutatingwebhookconfiguration", "other"]);
    let bundle = "apiVersion: policies.capstan.dev/v1alpha1\nkind: PolicyBundle\nmetadata: {name: pb}\nspec: {bundle: missing.tar}\n";
    s.ok_stdin(&["apply", "-f", "-"], bundle);
    s.ok(&["delete", "policybundle", "pb"]);
    // ...and the broken one deleted, after which writes work again.
    s.ok(&["delete", "validatingwebhookconfiguration", "broken"]);
    assert!(crate::support::eventually(Duration::from_secs(10), || {
        s.kubectl(&["create", "configmap", "allowed"])
            .status
            .success()
    }));
    assert!(s.fails(&["get", "cm", "refused"]).contains("not found"));
}

#[test]
fn a_webhook_answering_gigabytes_is_cut_off_and_its_failure_policy_decides() {
    let s = Server::start();
    let (port, ca, calls) = start_webhook();
    let url = format!("https://127.0.0.1:{port}/huge");
    let config = configuration("ValidatingWebhookConfiguration", "huge", &url, &ca, "Fail")
        .replace("timeoutSeconds: 2", "timeoutSeconds: 30");
    s.ok_stdin(&["apply", "-f", "-"], &config);
    let before = s.rss_mib();
    let started = Instant::now();
    let err = s.fails(&["create", "configmap", "refused"]);
    let took = started.elapsed();
    assert!(
        err.contains(r#"failed calling webhook "huge.capstan.test""#)
            && err.contains("the webhook's answer is larger than the limit of"),
        "{err}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Sending the whole answer over loopback TLS alone takes longer.
    assert!(took < Duration::from_secs(20), "{took:?}");
    let grew_mib = s.rss_mib().saturating_sub(before);
    eprintln!("answer refused after {took:?}; the server's RSS grew by {grew_mib} MiB");
    assert!(grew_mib < 256, "RSS grew by {grew_mib} MiB");
    assert!(s.fails(&["get", "cm", "refused"]).contains("not found"));
    let ready = s.curl(&[&s.url("/readyz")]);
    assert_eq!(crate::support::stdout(&ready), "ok");
    let lenient = config.replace("failurePolicy: Fail", "failurePolicy: Ignore");
    s.ok_stdin(&["apply", "-f", "-"], &lenient);
    let out = s.kubectl(&["create", "configmap", "allowed"]);
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    assert!(crate::support::stderr(&out).contains("failed and was ignored"));
}

#[test]
fn webhook_timeouts_outside_one_to_thirty_seconds_are_refused() {
    let s = Server::start();
    let (port, ca, _) = start_webhook();
    let url = format!("https://127.0.0.1:{port}/validate");
    let config = configuration("ValidatingWebhookConfiguration", "t", &url, &ca, "Fail");
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    for seconds in [0, 31, 100000] {
        let body = config.replace("timeoutSeconds: 2", &format!("timeoutSeconds: {seconds}"));
        let (code, status, _) = s.request("POST", path, "application/yaml", Some(&body));
        assert_eq!(
            (code, status["reason"].as_str()),
            (422, Some("Invalid")),
            "{status}"
        );
        let expected = format!(
            "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"t\" is invalid: \
             webhooks[0].timeoutSeconds: Invalid value: {seconds}: the timeout value must be between 1 and 30 seconds"
        );
        assert_eq!(status["message"], expected, "{status}");
    }
    let (code, _) = s.get_json(&format!("{path}/t"));
    assert_eq!(code, 404, "nothing stored");
    let (code, status, _) = s.request("POST", path, "application/yaml", Some(&config));
    assert_eq!(code, 201, "{status}");
    assert_eq!(status["webhooks"][0]["timeoutSeconds"], 2);
}
