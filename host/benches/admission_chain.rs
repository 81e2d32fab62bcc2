//! Added latency per request of admission, in process and side by side in
//! one run: (a) one trivial Wasm plugin (deny-service-external-ips, with
//! rules that reach ConfigMaps, so it is called and admits at once), the same
//! entry with its own rules (Services only: never called for a ConfigMap),
//! (b) the default chain of built-ins and, alone, the two of them a
//! ConfigMap create reaches, (c) the same trivial logic as an HTTPS webhook
//! on loopback (registered through a ValidatingWebhookConfiguration, as a
//! user would). The store is SQLite behind the watch cache, as the server
//! runs it. Each figure is the p50 and p99 of mutate + validate for one
//! ConfigMap create: the empty chain is printed as the baseline.
//! `cargo bench --bench admission_chain`.

use capstan::admission::assemble::{assemble, public_builtins};
use capstan::admission::config::{default_chain, parse};
use capstan::admission::review::ReviewRequest;
use capstan::admission::Chain;
use capstan::catalogue::Catalogue;
use capstan::plugins::PluginRuntime;
use capstan::registry::WriteOptions;
use capstan::state::AppState;
use capstan::storage::sqlite::SqliteStorage;
use capstan::storage::CachedStorage;
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CALLS: usize = 2000;

fn request() -> ReviewRequest {
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

async fn time(chain: &Chain) -> (Duration, Duration) {
    let (req, warnings) = (request(), Mutex::new(Vec::new()));
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, "data": {"k": "v"}});
    let mut samples = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        let out = chain
            .mutate(&req, obj.clone(), None, &warnings)
            .await
            .expect("mutate");
        chain
            .validate(&req, Some(&out), None, &warnings)
            .await
            .expect("validate");
        samples.push(started.elapsed());
    }
    samples.sort();
    (samples[CALLS / 2], samples[CALLS * 99 / 100])
}

fn chain_of(state: &AppState, runtime: &PluginRuntime, yaml: Option<&str>) -> Chain {
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

/// An HTTPS webhook on loopback that admits everything but Services with
/// externalIPs; returns its URL and CA (PEM).
async fn start_webhook() -> (String, String) {
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
    tokio::spawn(serve(
        listener,
        tokio_rustls::TlsAcceptor::from(Arc::new(tls)),
    ));
    (url, ca.pem())
}

async fn serve(listener: tokio::net::TcpListener, acceptor: tokio_rustls::TlsAcceptor) {
    while let Ok((tcp, _)) = listener.accept().await {
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let svc = hyper::service::service_fn(
                |req: http::Request<hyper::body::Incoming>| async move {
                    let body = req
                        .into_body()
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    let review: Value = serde_json::from_slice(&body).unwrap_or_default();
                    let request = &review["request"];
                    let allowed = request["object"]["spec"]["externalIPs"]
                        .as_array()
                        .is_none_or(|a| a.is_empty());
                    let answer = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                    "response": {"uid": request["uid"], "allowed": allowed}});
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

async fn register_webhook(state: &AppState, url: &str, ca_pem: &str) {
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
        "metadata": {"name": "trivial"},
        "webhooks": [{"name": "trivial.bench", "clientConfig": {"url": url, "caBundle": ca},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps", "services"]}],
            "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"]}]});
    state
        .registry
        .create(res, None, config, WriteOptions::default())
        .await
        .expect("webhook configuration");
}

/// Rules that make the trivial plugin see ConfigMap creates (the webhook's).
const TRIVIAL_RULES: &str = ", rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [configmaps, services]}]";

/// A chain of the trivial plugin with `rules` ("": its manifest's).
fn trivial(rules: &str) -> String {
    format!("admission:\n- {{name: trivial, module: 'builtin:deny-service-external-ips', phases: [validating]{rules}}}")
}

/// A chain of one built-in with its manifest's phases and rules.
fn alone(name: &str) -> String {
    format!("admission:\n- {{name: {name}, module: 'builtin:{name}'}}")
}

fn print(label: &str, (p50, p99): (Duration, Duration), base: Duration) {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "| {label} | {:.0} | {:.0} | {:.0} |",
        us(p50),
        us(p99),
        us(p50) - us(base)
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let sqlite = Arc::new(SqliteStorage::open(&dir.path().join("db")).expect("store"));
        let storage = Arc::new(CachedStorage::start(sqlite));
        assert!(
            storage.wait_synced(Duration::from_secs(10)).await,
            "cache synced"
        );
        let state = AppState::new(Catalogue::builtin(), storage, "127.0.0.1:0".into());
        capstan::controllers::bootstrap::bootstrap(&state)
            .await
            .expect("system namespaces");
        let runtime = PluginRuntime::new(Some(dir.path().join("cache"))).expect("runtime");
        let none = chain_of(&state, &runtime, Some("admission: []"));
        let one = chain_of(&state, &runtime, Some(&trivial(TRIVIAL_RULES)));
        let unmatched = chain_of(&state, &runtime, Some(&trivial("")));
        let default = chain_of(&state, &runtime, None);
        let lifecycle = chain_of(&state, &runtime, Some(&alone("namespace-lifecycle")));
        let quota = chain_of(&state, &runtime, Some(&alone("resource-quota")));
        let base = time(&none).await;
        println!("| admission | p50 µs | p99 µs | added p50 µs |\n|---|---|---|---|");
        print("none", base, base.0);
        let wasm = time(&one).await;
        print("(a) one trivial Wasm plugin", wasm, base.0);
        print(
            "(a) the same, rules not matching",
            time(&unmatched).await,
            base.0,
        );
        print("(b) default chain", time(&default).await, base.0);
        print(
            "(b) namespace-lifecycle alone",
            time(&lifecycle).await,
            base.0,
        );
        print("(b) resource-quota alone", time(&quota).await, base.0);
        let (url, ca) = start_webhook().await;
        register_webhook(&state, &url, &ca).await;
        let webhook = chain_of(&state, &runtime, Some("admission:\n- webhooks: validating"));
        tokio::time::sleep(Duration::from_millis(500)).await;
        let https = time(&webhook).await;
        print("(c) trivial HTTPS webhook", https, base.0);
        let added = |d: Duration| (d.as_secs_f64() - base.0.as_secs_f64()).max(1e-7);
        println!(
            "\n(c) / (a), added p50: {:.1}×",
            added(https.0) / added(wasm.0)
        );
    });
}
