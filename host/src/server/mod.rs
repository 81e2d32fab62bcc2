//! The HTTPS front door: rustls with optional client certificates, HTTP/1.1
//! and HTTP/2, and the router that sends each request to health, discovery,
//! OpenAPI or the resource handlers.

pub mod accept;
pub mod connection;
pub mod discovery_routes;
pub mod health;
pub mod held_body;
pub mod panic_recovery;
pub mod unread_body;

use crate::api::handlers;
use crate::api::inflight::RequestKind;
use crate::api::request_metrics::{Answered, RequestLabels};
use crate::api::state::AppState;
use crate::apimachinery::request_info;
use crate::apimachinery::status::ApiError;
use crate::apimachinery::user::UserInfo;
use crate::audit::{self, policy::Stage, Recording};
use crate::auth::authenticate::Credentials;
use crate::auth::{impersonate, Attributes};
use anyhow::{Context, Result};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Whether the TLS peer presented a client certificate our CA verified, and
/// the user the authentication chain made of it (kept for the connection:
/// the certificate cannot change within it).
#[derive(Clone, Debug, Default)]
pub struct PeerIdentity {
    pub certificate: Option<Vec<u8>>,
    certificate_user: Arc<std::sync::OnceLock<UserInfo>>,
    /// The certificate's notAfter (Unix seconds), read once.
    certificate_expiry: Arc<std::sync::OnceLock<Option<i64>>>,
    /// The client's address (audit events' sourceIPs).
    pub address: Option<std::net::IpAddr>,
}

impl PeerIdentity {
    pub fn new(certificate: Option<Vec<u8>>, address: Option<std::net::IpAddr>) -> Self {
        PeerIdentity {
            certificate,
            certificate_user: Default::default(),
            certificate_expiry: Default::default(),
            address,
        }
    }
}

/// TLS settings from the PKI files: our serving certificate; client certificates
/// are optional but, when given, must chain to our CA.
pub fn tls_config(pki: &crate::certificates::pki::PkiPaths) -> Result<rustls::ServerConfig> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&pki.serving_cert)
        .context("reading serving certificate")?
        .collect::<Result<_, _>>()?;
    let key = PrivateKeyDer::from_pem_file(&pki.serving_key).context("reading serving key")?;
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_file_iter(&pki.ca_cert)? {
        roots.add(ca?)?;
    }
    let verifier = WebPkiClientVerifier::builder(Arc::new(roots))
        .allow_unauthenticated()
        .build()?;
    let mut config = rustls::ServerConfig::builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

pub fn router(state: Arc<AppState>) -> axum::Router {
    axum::Router::new().fallback(entry).with_state(state)
}

/// Accepts connections until dropped, each served with `timeouts` and
/// told to close once `shutdown` begins.
pub async fn serve(
    listener: TcpListener,
    tls: rustls::ServerConfig,
    app: axum::Router,
    (timeouts, shutdown): (connection::Timeouts, crate::api::shutdown::Shutdown),
) -> Result<()> {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let mut backoff = accept::Backoff::default();
    loop {
        let (tcp, peer) = accept::next(&listener, &mut backoff).await;
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(%peer, error = %e, "could not set TCP_NODELAY");
        }
        let limits = (timeouts, shutdown.clone());
        let serving = connection::serve(tcp, peer, acceptor.clone(), app.clone(), limits);
        tokio::spawn(serving);
    }
}

/// Paths anyone may read, as system:public-info-viewer allows on a real cluster.
fn is_public(path: &str) -> bool {
    let first = path
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default();
    matches!(first, "healthz" | "livez" | "readyz" | "version")
}

async fn entry(State(state): State<Arc<AppState>>, req: Request) -> Response {
    let started = std::time::Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let resp = route(&state, req).await;
    tracing::debug!(%method, %path, status = resp.status().as_u16(), micros = started.elapsed().as_micros() as u64, "request");
    resp
}

/// What admitting a request holds until its response is sent: an
/// in-flight permit or a priority level's seat.
type Slot = Option<Box<dyn std::any::Any + Send>>;

/// Resolves impersonation, takes an in-flight slot (a priority level's
/// seat under API Priority and Fairness) and authorizes the request
/// (kube's filter order after authentication); the user it acts as is put
/// into its extensions, and the decision into its audit event. The slot
/// is held until the response is sent; the FlowSchema's and priority
/// level's UIDs come with it.
async fn admit_request(
    state: &AppState,
    req: &mut Request,
    resource: Option<&request_info::ResourceRequest>,
    requester: UserInfo,
    audit: Option<&Recording>,
) -> Result<(Slot, Option<(String, String)>), ApiError> {
    let auth = &state.auth;
    let impersonating = req.headers().contains_key(impersonate::USER);
    let user = impersonate::resolve(&auth.authorizer, requester, req.headers()).await?;
    if let (Some(r), true) = (audit, impersonating) {
        r.impersonated(&user);
    }
    let path = req.uri().path();
    let kind = RequestKind {
        method: req.method(),
        path,
        resource,
    };
    let flow = match &state.flow_control {
        Some(fc) => {
            let classified = crate::api::flowcontrol::config::Request {
                user: &user,
                method: kind.method,
                path,
                resource,
            };
            fc.admit(&classified, !kind.is_long_running()).await
        }
        None => None,
    };
    let (slot, uids): (Slot, _) = match flow {
        Some(admitted) => {
            let admitted = admitted?;
            let seat = admitted
                .seat
                .map(|s| Box::new(s) as Box<dyn std::any::Any + Send>);
            (seat, Some(admitted.uids))
        }
        None => {
            let permit = state.inflight.admit(&kind, &user)?;
            (
                permit.map(|p| Box::new(p) as Box<dyn std::any::Any + Send>),
                None,
            )
        }
    };
    let (allowed, reason) = if is_public(path) {
        (true, String::new())
    } else {
        let named = resource.map(|r| r.for_authorization(req.uri().query()));
        let attrs = Attributes::of_request(user.clone(), req.method(), path, named.as_deref());
        let started = std::time::Instant::now();
        let span = crate::telemetry::otel::Span::start(|| "Authorize", Vec::new);
        let decision = span.run(auth.authorizer.authorize(&attrs)).await;
        span.set("decision", decision.result());
        (state.auth_metrics).authorized(decision.result(), started.elapsed());
        if !decision.allowed() {
            if let Some(r) = audit {
                r.annotate("authorization.k8s.io/decision", "forbid");
                r.annotate("authorization.k8s.io/reason", decision.reason());
            }
            return Err(crate::auth::authorize::forbidden(&attrs, decision.reason()));
        }
        (true, decision.reason().to_string())
    };
    if let (Some(r), true) = (audit, allowed) {
        r.annotate("authorization.k8s.io/decision", "allow");
        r.annotate("authorization.k8s.io/reason", &reason);
    }
    req.extensions_mut().insert(user);
    Ok((slot, uids))
}

/// The requester; a certificate-only request reuses its connection's result.
async fn authenticate(
    state: &AppState,
    peer: PeerIdentity,
    creds: Result<Credentials, ApiError>,
) -> Result<UserInfo, ApiError> {
    let creds = creds?;
    if let Some(der) = &peer.certificate {
        let expiry = peer
            .certificate_expiry
            .get_or_init(|| crate::api::client_certificates::not_after(der));
        if let Some(at) = expiry {
            state.certificates.observe(*at);
        }
    }
    let certificate_only = creds.token.is_none() && peer.certificate.is_some();
    if let Some(user) = peer.certificate_user.get().filter(|_| certificate_only) {
        return Ok(user.clone());
    }
    let started = std::time::Instant::now();
    let span = crate::telemetry::otel::Span::start(|| "Authenticate", Vec::new);
    let user = span
        .run(state.auth.authenticator.authenticate(&creds))
        .await;
    span.set("authenticated", user.is_ok());
    (state.auth_metrics).authenticated(user.is_ok(), started.elapsed());
    let user = user?;
    if certificate_only {
        let _ = peer.certificate_user.set(user.clone());
    }
    Ok(user)
}

async fn route(state: &AppState, req: Request) -> Response {
    let started = std::time::Instant::now();
    let path = req.uri().path().to_string();
    let query = req.uri().query().map(String::from);
    let resource = request_info::parse(req.method(), &path, query.as_deref());
    let labels = resource.as_ref().map(RequestLabels::of);
    let long_running = RequestKind {
        method: req.method(),
        path: &path,
        resource: resource.as_ref(),
    }
    .is_long_running();
    let mutating = !matches!(*req.method(), http::Method::GET | http::Method::HEAD);
    let inflight = (!long_running).then(|| state.requests.inflight(mutating));
    let audit_id = audit_id(req.headers());
    let peer = req
        .extensions()
        .get::<PeerIdentity>()
        .cloned()
        .unwrap_or_default();
    let creds = Credentials::new(peer.certificate.clone(), req.headers());
    let trace = crate::telemetry::otel::RequestTrace::start(
        req.headers(),
        || crate::telemetry::otel::request::span_name(req.method(), resource.as_ref()),
        || crate::telemetry::otel::request::http_attributes(&req),
    );
    let served = crate::telemetry::webhook_time::timing_webhooks(async {
        match authenticate(state, peer, creds).await {
            Ok(requester) => {
                let recording = audit_start(state, &req, resource.as_ref(), &requester, &audit_id);
                // Boxed: the request's whole future, kept off the stack of
                // the futures wrapping it.
                let serve = Box::pin(serve_authenticated(
                    state,
                    req,
                    resource,
                    requester,
                    (recording.clone(), &audit_id),
                ));
                let serve = crate::server::panic_recovery::recovering(
                    &state.audit,
                    recording.clone(),
                    serve,
                );
                match recording {
                    Some(r) => audit::scope(r, serve).await,
                    None => serve.await,
                }
            }
            Err(e) => {
                audit_unauthenticated(state, &req, resource.as_ref(), &audit_id, &e);
                e.into_response()
            }
        }
    });
    let (mut resp, webhook_seconds) = trace.run(served).await;
    trace.finish(resp.status().as_u16());
    if let Ok(id) = http::HeaderValue::from_str(&audit_id) {
        resp.headers_mut().insert("audit-id", id);
    }
    let Some(labels) = labels else {
        return resp;
    };
    let served = |l: &RequestLabels| l.served_by(&state.catalogue.get());
    let bytes = hyper::body::Body::size_hint(resp.body()).exact();
    let answered = Answered {
        code: resp.status().as_u16(),
        seconds: (!long_running).then(|| started.elapsed().as_secs_f64()),
        webhook_seconds,
        bytes,
    };
    state.requests.record(labels.clone(), answered, served);
    match (long_running && resp.status().is_success(), inflight) {
        (true, _) => held_body::hold(resp, state.requests.long_running(labels)),
        (false, Some(slot)) => held_body::hold(resp, slot),
        (false, None) => resp,
    }
}

/// Admits and serves an authenticated request within its deadline; its
/// audit event written when the response is complete (for a watch, when
/// its stream ends).
async fn serve_authenticated(
    state: &AppState,
    mut req: Request,
    resource: Option<request_info::ResourceRequest>,
    requester: UserInfo,
    (recording, audit_id): (Option<Arc<Recording>>, &str),
) -> Response {
    let path = req.uri().path().to_string();
    let kind = RequestKind {
        method: req.method(),
        path: &path,
        resource: resource.as_ref(),
    };
    let deadline = state.inflight.deadline(&kind);
    let long_running = kind.is_long_running();
    let audit = recording.as_deref();
    let resp = match admit_request(state, &mut req, resource.as_ref(), requester, audit).await {
        Ok((slot, uids)) => {
            let handler = handler_span(&req, resource.as_ref(), audit_id);
            let serving = within(deadline, serve_admitted(state, req, resource));
            let mut served = handler.run(serving).await;
            handler.set("http.status_code", i64::from(served.status().as_u16()));
            if let Some((schema, level)) = uids {
                flow_headers(&mut served, &schema, &level);
            }
            match slot {
                Some(slot) => held_body::hold(served, slot),
                None => served,
            }
        }
        Err(e) => e.into_response(),
    };
    let Some(recording) = recording else {
        return resp;
    };
    recording.set_code(resp.status().as_u16());
    let auditor = state.audit.clone();
    if long_running && resp.status().is_success() {
        auditor.emit(&recording, Stage::ResponseStarted);
        return held_body::hold(resp, AuditComplete { auditor, recording });
    }
    auditor.emit(&recording, Stage::ResponseComplete);
    resp
}

/// kube's handler span (`Create`, `List`, ...) of a resource request.
fn handler_span(
    req: &Request,
    resource: Option<&request_info::ResourceRequest>,
    audit_id: &str,
) -> crate::telemetry::otel::Span {
    use crate::telemetry::otel::{request, Span};
    match resource {
        Some(r) => Span::start(
            || request::handler_name(r.verb),
            || request::handler_attributes(req, r, audit_id),
        ),
        None => Span::none(),
    }
}

/// kube's `X-Kubernetes-PF-FlowSchema-UID` and `-PriorityLevel-UID`.
fn flow_headers(resp: &mut Response, schema: &str, level: &str) {
    for (name, uid) in [
        ("x-kubernetes-pf-flowschema-uid", schema),
        ("x-kubernetes-pf-prioritylevel-uid", level),
    ] {
        if let Ok(v) = http::HeaderValue::from_str(uid) {
            resp.headers_mut().insert(name, v);
        }
    }
}

/// Writes a long-running request's ResponseComplete event when its
/// response body ends (or is dropped).
struct AuditComplete {
    auditor: Arc<audit::Auditor>,
    recording: Arc<Recording>,
}

impl Drop for AuditComplete {
    fn drop(&mut self) {
        self.auditor.emit(&self.recording, Stage::ResponseComplete);
    }
}

/// The request's audit ID: the client's `Audit-ID`, else a new UUID.
fn audit_id(headers: &http::HeaderMap) -> String {
    headers
        .get("audit-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128)
        .map(String::from)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string())
}

fn audit_request<'a>(
    req: &'a Request,
    resource: Option<&'a request_info::ResourceRequest>,
    audit_id: &str,
) -> audit::event::Request<'a> {
    let peer = req.extensions().get::<PeerIdentity>();
    audit::event::Request {
        audit_id: audit_id.to_string(),
        method: req.method(),
        uri: req.uri(),
        headers: req.headers(),
        source_ip: peer.and_then(|p| p.address).map(|a| a.to_string()),
        resource,
    }
}

/// The request's audit state, if the policy records it; its
/// RequestReceived event written.
fn audit_start(
    state: &AppState,
    req: &Request,
    resource: Option<&request_info::ResourceRequest>,
    requester: &UserInfo,
    audit_id: &str,
) -> Option<Arc<Recording>> {
    let decision = state
        .audit
        .decide(requester, req.method(), req.uri().path(), resource)?;
    let about = audit_request(req, resource, audit_id);
    let recording = Arc::new(Recording::new(decision, requester.clone(), &about));
    state.audit.emit(&recording, Stage::RequestReceived);
    Some(recording)
}

/// kube's event of a request that failed authentication: its user empty,
/// written once, at ResponseStarted.
fn audit_unauthenticated(
    state: &AppState,
    req: &Request,
    resource: Option<&request_info::ResourceRequest>,
    audit_id: &str,
    error: &ApiError,
) {
    let nobody = UserInfo::default();
    let Some(decision) = state
        .audit
        .decide(&nobody, req.method(), req.uri().path(), resource)
    else {
        return;
    };
    let about = audit_request(req, resource, audit_id);
    let recording = Recording::new(decision, nobody, &about);
    recording.set_response(&error.to_status());
    recording.set_code(error.code);
    state.audit.emit(&recording, Stage::ResponseStarted);
}

/// The response, or kube's 504 when `deadline` passes first (the request
/// timeout filter's answer).
async fn within(
    deadline: Option<std::time::Duration>,
    serve: impl Future<Output = Response>,
) -> Response {
    let Some(deadline) = deadline else {
        return serve.await;
    };
    let until = std::time::Instant::now() + deadline;
    match tokio::time::timeout(deadline, crate::cpu::with_deadline(until, serve)).await {
        Ok(resp) => resp,
        Err(_) => ApiError::request_timeout().into_response(),
    }
}

/// Serves a request that passed authentication, the in-flight limit and
/// authorization.
async fn serve_admitted(
    state: &AppState,
    req: Request,
    resource: Option<request_info::ResourceRequest>,
) -> Response {
    let path = req.uri().path().to_string();
    let query = req.uri().query().map(String::from);
    let verbose = query.as_deref().is_some_and(|q| {
        q.split('&')
            .any(|p| p == "verbose" || p.starts_with("verbose="))
    });
    if let Some(resp) = health::probe(state, &path, verbose).await {
        return resp;
    }
    if path == "/version" || path == "/version/" {
        let mut resp = crate::apimachinery::version::version()
            .to_string()
            .into_response();
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        return resp;
    }
    if path == "/metrics" && req.method() == http::Method::GET {
        return crate::telemetry::metrics::serve(&state.metrics);
    }
    if let Some(ri) = resource {
        let (parts, body) = req.into_parts();
        return handlers::handle(state, ri, parts, body).await;
    }
    if req.method() != http::Method::GET && req.method() != http::Method::HEAD {
        return ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )
        .into_response();
    }
    let accept = req
        .headers()
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let if_none_match = req
        .headers()
        .get(http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok());
    discovery_routes::serve(state, &path, query.as_deref(), &accept, if_none_match)
        .unwrap_or_else(|| not_found(state, &path))
}

/// A Status under `/api` and the served groups, Go's plain 404 elsewhere.
fn not_found(state: &AppState, path: &str) -> Response {
    let group = path
        .strip_prefix("/apis/")
        .map(|rest| rest.split('/').next().unwrap_or(""));
    let in_api = path == "/api" || path.starts_with("/api/");
    match group {
        Some(g) if state.catalogue.get().serves_group(g) => {
            ApiError::no_such_route().into_response()
        }
        None if in_api => ApiError::no_such_route().into_response(),
        _ => crate::apimachinery::status::page_not_found(),
    }
}

/// Creates the data directory (and its parents) if needed.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating data directory {}", dir.display()))
}
