//! The HTTPS front door: rustls with optional client certificates, HTTP/1.1
//! and HTTP/2, and the router that sends each request to health, discovery,
//! OpenAPI or the resource handlers.

use crate::auth::authenticate::Credentials;
use crate::auth::{impersonate, Attributes, UserInfo};
use crate::state::AppState;
use crate::status::ApiError;
use crate::{discovery_routes, handlers, health, request_info};
use anyhow::{Context, Result};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use std::path::Path;
use std::sync::Arc;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// Whether the TLS peer presented a client certificate our CA verified, and
/// the user the authentication chain made of it (kept for the connection:
/// the certificate cannot change within it).
#[derive(Clone, Debug, Default)]
pub struct PeerIdentity {
    pub certificate: Option<Vec<u8>>,
    certificate_user: Arc<std::sync::OnceLock<UserInfo>>,
}

impl PeerIdentity {
    pub fn new(certificate: Option<Vec<u8>>) -> Self {
        PeerIdentity {
            certificate,
            certificate_user: Default::default(),
        }
    }
}

/// TLS settings from the PKI files: our serving certificate; client certificates
/// are optional but, when given, must chain to our CA.
pub fn tls_config(pki: &crate::pki::PkiPaths) -> Result<rustls::ServerConfig> {
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

/// Accepts connections forever.
pub async fn serve(
    listener: TcpListener,
    tls: rustls::ServerConfig,
    app: axum::Router,
) -> Result<()> {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                continue;
            }
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(%peer, error = %e, "could not set TCP_NODELAY");
        }
        let acceptor = acceptor.clone();
        let app = app.clone();
        tokio::spawn(async move {
            let tls = match acceptor.accept(tcp).await {
                Ok(s) => s,
                Err(e) => return tracing::debug!(%peer, error = %e, "TLS handshake failed"),
            };
            let certificate = tls
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|c| c.first())
                .map(|c| c.to_vec());
            let identity = PeerIdentity::new(certificate);
            let svc =
                hyper::service::service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
                    req.extensions_mut().insert(identity.clone());
                    app.clone().oneshot(req.map(Body::new))
                });
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            if let Err(e) = builder
                .serve_connection_with_upgrades(TokioIo::new(tls), svc)
                .await
            {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
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

/// Authenticates, resolves impersonation and authorizes the request; the
/// user it acts as is put into its extensions.
async fn admit_request(
    state: &AppState,
    req: &mut Request,
    resource: Option<&request_info::ResourceRequest>,
) -> Result<(), ApiError> {
    let peer = req
        .extensions()
        .get::<PeerIdentity>()
        .cloned()
        .unwrap_or_default();
    let creds = Credentials::new(peer.certificate.clone(), req.headers())?;
    let auth = &state.auth;
    let requester = authenticate(state, &peer, &creds).await?;
    let user = impersonate::resolve(&auth.authorizer, requester, req.headers()).await?;
    let path = req.uri().path();
    if !is_public(path) {
        let attrs = Attributes::of_request(user.clone(), req.method(), path, resource);
        auth.authorizer.check(&attrs).await?;
    }
    req.extensions_mut().insert(user);
    Ok(())
}

/// The requester; a certificate-only request reuses its connection's result.
async fn authenticate(
    state: &AppState,
    peer: &PeerIdentity,
    creds: &Credentials,
) -> Result<UserInfo, ApiError> {
    let certificate_only = creds.token.is_none() && peer.certificate.is_some();
    if let Some(user) = peer.certificate_user.get().filter(|_| certificate_only) {
        return Ok(user.clone());
    }
    let user = state.auth.authenticator.authenticate(creds).await?;
    if certificate_only {
        let _ = peer.certificate_user.set(user.clone());
    }
    Ok(user)
}

async fn route(state: &AppState, mut req: Request) -> Response {
    let path = req.uri().path().to_string();
    let query = req.uri().query().map(String::from);
    let resource = request_info::parse(req.method(), &path, query.as_deref());
    if let Err(e) = admit_request(state, &mut req, resource.as_ref()).await {
        return e.into_response();
    }
    let verbose = query.as_deref().is_some_and(|q| {
        q.split('&')
            .any(|p| p == "verbose" || p.starts_with("verbose="))
    });
    if let Some(resp) = health::probe(state, &path, verbose).await {
        return resp;
    }
    if path == "/version" || path == "/version/" {
        let mut resp = health::version().to_string().into_response();
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        return resp;
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
    discovery_routes::serve(state, &path, query.as_deref(), &accept)
        .unwrap_or_else(|| ApiError::no_such_route().into_response())
}

/// Creates the data directory (and its parents) if needed.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating data directory {}", dir.display()))
}
