//! What the admission benches share: a server state on SQLite behind the
//! watch cache, chains assembled from configuration text, the timing loop
//! of one ConfigMap create through mutate + validate, and an HTTPS webhook
//! on loopback registered as a user would (a ValidatingWebhookConfiguration).

use capstan::admission::assemble::assemble;
use capstan::admission::config::default_chain;
use capstan::admission::review::ReviewRequest;
use capstan::admission::Chain;
use capstan::api::state::AppState;
use capstan::catalogue::Catalogue;
use capstan::config::parse;
use capstan::registry::WriteOptions;
use capstan::storage::sqlite::SqliteStorage;
use capstan::storage::CachedStorage;
use capstan::wasm::embedded::public_builtins;
use capstan::wasm::PluginRuntime;
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Calls per measurement.
pub const CALLS: usize = 2000;

/// A create of ConfigMap `c` in `default`.
pub fn request() -> ReviewRequest {
    ReviewRequest {
        operation: "CREATE",
        group: String::new(),
        version: "v1".into(),
        kind_group: String::new(),
        kind_version: "v1".into(),
        kind: "ConfigMap".into(),
        resource: "configmaps".into(),
        subresource: String::new(),
        namespace: Some("default".into()),
        name: "c".into(),
        user: json!({"username": "bench", "groups": ["system:authenticated"]}),
        dry_run: false,
    }
}

/// ConfigMap `c` with `labels`.
pub fn config_map(labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "c", "namespace": "default", "labels": labels}, "data": {"k": "v"}})
}

/// p50 and p99 of mutate + validate of `obj` through `chain`; every call
/// must be admitted (`allowed`) or denied (not `allowed`) as said.
pub async fn time(chain: &Chain, obj: &Value, allowed: bool) -> (Duration, Duration) {
    let (req, warnings) = (request(), Mutex::new(Vec::new()));
    let mut samples = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        let out = chain
            .mutate(&req, obj.clone(), None, &warnings)
            .await
            .expect("mutate");
        let verdict = chain.validate(&req, Some(&out), None, &warnings).await;
        samples.push(started.elapsed());
        assert_eq!(verdict.is_ok(), allowed, "the chain's verdict");
    }
    samples.sort();
    (samples[CALLS / 2], samples[CALLS * 99 / 100])
}

/// A server's state on SQLite behind the watch cache, in `dir`, with the
/// system namespaces.
pub async fn state(dir: &std::path::Path) -> AppState {
    let sqlite = Arc::new(SqliteStorage::open(&dir.join("db")).expect("store"));
    let storage = Arc::new(CachedStorage::start(sqlite));
    assert!(
        storage.wait_synced(Duration::from_secs(10)).await,
        "cache synced"
    );
    // MutatingAdmissionPolicies served too, as behind their feature gate.
    let mut catalogue = Catalogue::builtin();
    let gates = capstan::catalogue::gates::ApiGates::parse(
        &["MutatingAdmissionPolicy=true".into()],
        &["api/beta=true".into()],
    )
    .expect("gates");
    catalogue.enable_gated(&gates);
    let state = AppState::new(catalogue, storage, "127.0.0.1:0".into());
    capstan::controllers::bootstrap::bootstrap(&state)
        .await
        .expect("system namespaces");
    state
}

/// The chain `yaml` configures (None: the default chain).
pub fn chain_of(state: &AppState, runtime: &PluginRuntime, yaml: Option<&str>) -> Chain {
    let entries = match yaml {
        Some(text) => parse(text).expect("config").expect("admission entries"),
        None => default_chain(&public_builtins()).expect("default chain"),
    };
    let loaded = assemble(&entries, runtime, state.reader()).expect("assemble");
    Chain::new(
        loaded,
        state.registry.clone(),
        &state.catalogue.get(),
        Default::default(),
    )
}

/// How a webhook answers a request (the AdmissionReview's `request`):
/// its `response` without the uid.
pub type Decide = fn(&Value) -> Value;

/// An HTTPS webhook on loopback answering with `decide`; its URL and CA (PEM).
pub async fn start_webhook(decide: Decide) -> (String, String) {
    let ca_key = rcgen::KeyPair::generate().expect("key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("ca");
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .expect("params")
        .signed_by(&key, &ca, &ca_key)
        .expect("cert");
    let der = rustls::pki_types::CertificateDer::from(cert.der().to_vec());
    let key_der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).expect("key der");
    let tls = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![der], key_der)
        .expect("tls");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!(
        "https://127.0.0.1:{}/validate",
        listener.local_addr().expect("addr").port()
    );
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    tokio::spawn(serve(listener, acceptor, decide));
    (url, ca.pem())
}

async fn serve(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    decide: Decide,
) {
    while let Ok((tcp, _)) = listener.accept().await {
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let svc = hyper::service::service_fn(
                move |req: http::Request<hyper::body::Incoming>| async move {
                    let body = req
                        .into_body()
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    let review: Value = serde_json::from_slice(&body).unwrap_or_default();
                    let request = &review["request"];
                    let mut response = decide(request);
                    response["uid"] = request["uid"].clone();
                    let answer = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                        "response": response});
                    Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(
                        bytes::Bytes::from(answer.to_string()),
                    )))
                },
            );
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
                .await;
        });
    }
}

/// Registers the webhook at `url` for creates of `resources` (core group).
pub async fn register_webhook(state: &AppState, url: &str, ca_pem: &str, resources: &[&str]) {
    use base64::Engine;
    let res = state
        .catalogue
        .builtin()
        .lookup(
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
        )
        .expect("served");
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let config = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "bench"},
        "webhooks": [{"name": "bench.capstan.dev", "clientConfig": {"url": url, "caBundle": ca},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": resources}],
            "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"]}]});
    state
        .registry
        .create(res, None, config, WriteOptions::default())
        .await
        .expect("webhook configuration");
    // The chain learns of webhook configurations through the watch.
    tokio::time::sleep(Duration::from_millis(500)).await;
}
