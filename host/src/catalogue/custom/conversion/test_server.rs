//! A loopback HTTPS conversion webhook for the tests: a self-signed CA:TRUE
//! certificate for 127.0.0.1 (its own caBundle), and a handler that answers
//! each ConversionReview it receives.

use base64::Engine;
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use std::sync::{Arc, Mutex};

type Answer = dyn Fn(&Value) -> String + Send + Sync;

pub(super) struct HookServer {
    pub url: String,
    /// base64 PEM, as a CRD's `caBundle`.
    pub ca_bundle: String,
    /// Every review received.
    pub received: Arc<Mutex<Vec<Value>>>,
}

impl HookServer {
    pub(super) fn received(&self) -> Vec<Value> {
        self.received.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// Starts the server on a free port; `answer` turns a review into the body answered.
pub(super) async fn start(answer: impl Fn(&Value) -> String + Send + Sync + 'static) -> HookServer {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).unwrap();
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(cert.pem());
    let der = rustls::pki_types::CertificateDer::from(cert.der().to_vec());
    let key_der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
    let tls = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![der], key_der)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Arc::new(Mutex::new(Vec::new()));
    let answer: Arc<Answer> = Arc::new(answer);
    let seen = received.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, answer, seen) = (acceptor.clone(), answer.clone(), seen.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper::service::service_fn(move |req| {
                    let (answer, seen) = (answer.clone(), seen.clone());
                    async move { respond(req, &*answer, &seen).await }
                });
                let io = hyper_util::rt::TokioIo::new(tls);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });
    HookServer {
        url: format!("https://127.0.0.1:{port}/convert"),
        ca_bundle,
        received,
    }
}

async fn respond(
    req: http::Request<hyper::body::Incoming>,
    answer: &Answer,
    seen: &Mutex<Vec<Value>>,
) -> Result<http::Response<Full<bytes::Bytes>>, std::convert::Infallible> {
    let body = req.into_body().collect().await.map(|b| b.to_bytes());
    let review: Value = body
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    if let Ok(mut seen) = seen.lock() {
        seen.push(review.clone());
    }
    let text = answer(&review);
    Ok(http::Response::new(Full::new(bytes::Bytes::from(text))))
}
