//! OpenTelemetry tracing with the real binary (`--tracing-config-file`):
//! spans reach an OTLP/gRPC collector as kube-apiserver's do (kube's span
//! names, a new trace linked to the client's), and an admission webhook
//! receives the trace context of the span that calls it; without tracing,
//! a client's context reaches the webhook unchanged.

use crate::support::{eventually, loopback_tls, serve_on_loopback, stderr, Server};
use base64::Engine;
use http_body_util::BodyExt;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

fn client_traceparent() -> String {
    format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01")
}

type Spans = Arc<Mutex<Vec<(Vec<(String, String)>, Span)>>>;

/// A plain-HTTP/2 OTLP/gRPC trace collector on 127.0.0.1: (port, the
/// spans received, each with its resource's attributes).
fn start_collector() -> (u16, Spans) {
    let spans: Spans = Arc::default();
    let sink = spans.clone();
    let port = serve_on_loopback(None, move |req: http::Request<hyper::body::Incoming>| {
        let sink = sink.clone();
        async move {
            let body = req.into_body().collect().await.unwrap().to_bytes();
            record(&body, &sink);
            grpc_ok()
        }
    });
    (port, spans)
}

/// Decodes one gRPC message (5-byte frame header) of spans.
fn record(body: &[u8], sink: &Spans) {
    let Some(message) = body.get(5..) else { return };
    let Ok(export) = ExportTraceServiceRequest::decode(message) else {
        return;
    };
    for resource_spans in export.resource_spans {
        let resource = resource_spans
            .resource
            .map(|r| {
                r.attributes
                    .iter()
                    .map(|a| (a.key.clone(), value(a)))
                    .collect()
            })
            .unwrap_or_default();
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                sink.lock().unwrap().push((Vec::clone(&resource), span));
            }
        }
    }
}

fn value(kv: &opentelemetry_proto::tonic::common::v1::KeyValue) -> String {
    use opentelemetry_proto::tonic::common::v1::any_value::Value as V;
    match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(V::StringValue(s)) => s.clone(),
        Some(V::IntValue(i)) => i.to_string(),
        Some(V::BoolValue(b)) => b.to_string(),
        other => format!("{other:?}"),
    }
}

/// An empty ExportTraceServiceResponse with grpc-status 0 in the trailers.
type Frames = futures_util::stream::Iter<
    std::vec::IntoIter<Result<hyper::body::Frame<bytes::Bytes>, Infallible>>,
>;

fn grpc_ok() -> http::Response<http_body_util::StreamBody<Frames>> {
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", "0".parse().unwrap());
    let frames = vec![
        Ok(hyper::body::Frame::data(bytes::Bytes::from_static(&[
            0, 0, 0, 0, 0,
        ]))),
        Ok(hyper::body::Frame::trailers(trailers)),
    ];
    let mut resp = http::Response::new(http_body_util::StreamBody::new(
        futures_util::stream::iter(frames),
    ));
    resp.headers_mut()
        .insert("content-type", "application/grpc".parse().unwrap());
    resp
}

/// An HTTPS validating webhook that allows everything and keeps each
/// call's `traceparent`: (port, CA PEM, traceparents).
fn start_webhook() -> (u16, String, Arc<Mutex<Vec<String>>>) {
    let (config, ca) = loopback_tls();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let port = serve_on_loopback(
        Some(config),
        move |req: http::Request<hyper::body::Incoming>| {
            let sink = sink.clone();
            async move {
                let parent = req
                    .headers()
                    .get("traceparent")
                    .and_then(|v| v.to_str().ok());
                sink.lock().unwrap().push(parent.unwrap_or("").to_string());
                let body = req.into_body().collect().await.unwrap().to_bytes();
                let review: Value = serde_json::from_slice(&body).unwrap_or_default();
                let answer = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "response": {"uid": review["request"]["uid"], "allowed": true}});
                http::Response::new(http_body_util::Full::new(bytes::Bytes::from(
                    answer.to_string(),
                )))
            }
        },
    );
    (port, ca, seen)
}

fn register_webhook(s: &Server, port: u16, ca: &str) {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca);
    s.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: traced}}
webhooks:
- name: traced.capstan.test
  clientConfig: {{url: "https://127.0.0.1:{port}/validate", caBundle: "{ca}"}}
  rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}}]
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
"#
        ),
    );
}

/// Creates the ConfigMap `name` with the client's `traceparent`; its Audit-ID.
fn create_traced(s: &Server, name: &str) -> String {
    let body =
        format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}}}}"#);
    let out = s.curl(&[
        "-D",
        "-",
        "-o",
        "/dev/null",
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-H",
        &format!("traceparent: {}", client_traceparent()),
        "--data-binary",
        &body,
        &s.url("/api/v1/namespaces/default/configmaps"),
    ]);
    let headers = crate::support::stdout(&out);
    assert!(
        headers.starts_with("HTTP/2 201") || headers.starts_with("HTTP/1.1 201"),
        "{headers}"
    );
    headers
        .lines()
        .find_map(|l| l.strip_prefix("audit-id: "))
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    span.attributes.iter().find(|a| a.key == key).map(value)
}

fn named<'a>(
    spans: &'a [(Vec<(String, String)>, Span)],
    name: &str,
) -> Option<&'a (Vec<(String, String)>, Span)> {
    spans.iter().find(|(_, s)| s.name == name)
}

#[test]
fn spans_reach_the_collector_and_webhooks_get_the_calling_span_s_context() {
    let (collector, spans) = start_collector();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tracing.yaml");
    std::fs::write(
        &config,
        format!("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:{collector}\nsamplingRatePerMillion: 1000000\n"),
    )
    .unwrap();
    let s = Server::start_with(&["--tracing-config-file", config.to_str().unwrap()]);
    let (port, ca, traceparents) = start_webhook();
    register_webhook(&s, port, &ca);
    let audit_id = create_traced(&s, "traced");

    let server_span = "POST /api/v1/namespaces/{:namespace}/configmaps";
    let wanted = [
        server_span,
        "HTTP POST",
        "Create",
        "Call validating webhook",
        "Create sqlite",
        "Authenticate",
        "Authorize",
    ];
    let all = || spans.lock().unwrap().clone();
    let complete = |spans: &[(Vec<(String, String)>, Span)]| {
        spans.iter().any(|(_, s)| {
            s.name == server_span
                && attribute(s, "http.target").is_some_and(|t| t.contains("configmaps"))
        }) && wanted.iter().all(|w| named(spans, w).is_some())
    };
    assert!(
        eventually(Duration::from_secs(20), || complete(&all())),
        "spans: {:?}",
        all()
            .iter()
            .map(|(_, s)| s.name.clone())
            .collect::<Vec<_>>()
    );
    let spans = all();
    let (resource, server) = spans.iter().find(|(_, s)| s.name == server_span).unwrap();
    assert!(
        resource.contains(&("service.name".into(), "apiserver".into())),
        "{resource:?}"
    );
    // kube's public endpoint: a trace of its own, linked to the client's.
    let trace = hex(&server.trace_id);
    assert_ne!(trace, CLIENT_TRACE);
    assert!(
        server
            .links
            .iter()
            .any(|l| hex(&l.trace_id) == CLIENT_TRACE && hex(&l.span_id) == CLIENT_SPAN),
        "{:?}",
        server.links
    );
    assert_eq!(server.kind, 2, "a server span");
    assert_eq!(
        attribute(server, "http.status_code").as_deref(),
        Some("201")
    );

    // The handler span under it, with kube's fields.
    let (_, create) = spans
        .iter()
        .find(|(_, s)| {
            s.name == "Create" && attribute(s, "audit-id").as_deref() == Some(audit_id.as_str())
        })
        .expect("the handler span of this request");
    assert_eq!(hex(&create.trace_id), trace);
    assert_eq!(create.parent_span_id, server.span_id);
    assert_eq!(attribute(create, "resource").as_deref(), Some("configmaps"));
    assert_eq!(attribute(create, "namespace").as_deref(), Some("default"));

    // The webhook's span, and the context the webhook received.
    let (_, call) = spans
        .iter()
        .find(|(_, s)| s.name == "Call validating webhook" && s.trace_id == server.trace_id)
        .expect("the webhook call's span in this trace");
    assert_eq!(call.parent_span_id, create.span_id);
    assert_eq!(
        attribute(call, "webhook").as_deref(),
        Some("traced.capstan.test")
    );
    assert_eq!(attribute(call, "verdict").as_deref(), Some("allowed"));
    // The HTTP call's client span under it, whose context the webhook got.
    let (_, post) = spans
        .iter()
        .find(|(_, s)| s.name == "HTTP POST" && s.parent_span_id == call.span_id)
        .expect("the webhook's HTTP client span");
    assert_eq!(post.kind, 3, "a client span");
    assert_eq!(attribute(post, "http.status_code").as_deref(), Some("200"));
    let expected = format!("00-{trace}-{}-01", hex(&post.span_id));
    assert!(
        traceparents.lock().unwrap().contains(&expected),
        "{:?} lacks {expected}",
        traceparents.lock().unwrap()
    );

    // The store's span, under the handler.
    let (_, stored) = spans
        .iter()
        .find(|(_, s)| s.name == "Create sqlite" && s.trace_id == server.trace_id)
        .expect("the storage call's span in this trace");
    assert_eq!(stored.parent_span_id, create.span_id);
    assert_eq!(
        attribute(stored, "key").as_deref(),
        Some("/registry/core/configmaps/default/traced")
    );
}

#[test]
fn without_tracing_a_client_s_context_reaches_webhooks_unchanged() {
    let s = Server::start();
    let (port, ca, traceparents) = start_webhook();
    register_webhook(&s, port, &ca);
    create_traced(&s, "passed");
    assert!(
        traceparents.lock().unwrap().contains(&client_traceparent()),
        "{:?}",
        traceparents.lock().unwrap()
    );
}

#[test]
fn a_tracing_configuration_kube_refuses_stops_the_server_in_kube_s_words() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tracing.yaml");
    std::fs::write(&config, "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 2000000\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args(["serve", "--secure-port", "0", "--data-dir"])
        .arg(dir.path().join("data"))
        .arg("--tracing-config-file")
        .arg(&config)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("failed to validate tracing configuration: samplingRatePerMillion: Invalid value: 2000000: sampling rate per million must be less than or equal to one million"),
        "{}",
        stderr(&out)
    );
    // Tracing turned off by kube's gate, with a configuration given: refused.
    let good = dir.path().join("good.yaml");
    std::fs::write(
        &good,
        "apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capstan"))
        .args([
            "serve",
            "--secure-port",
            "0",
            "--feature-gates",
            "APIServerTracing=false",
            "--data-dir",
        ])
        .arg(dir.path().join("gated"))
        .arg("--tracing-config-file")
        .arg(&good)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            "APIServerTracing feature is not enabled, but tracing config file was provided"
        ),
        "{}",
        stderr(&out)
    );
}
