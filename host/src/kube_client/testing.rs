//! Test support: a throwaway PKI, a kubeconfig for it, and a loopback TLS server
//! (HTTP/2 and/or HTTP/1.1 by ALPN) that hands requests to a test handler.

use super::kubeconfig::Kubeconfig;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::convert::Infallible;
use std::sync::Arc;

/// Response body type of test servers.
pub type TestBody = BoxBody<Bytes, Infallible>;

/// A test request handler; the flag says whether the client presented a certificate.
pub type Handler =
    Arc<dyn Fn(Request<Incoming>, bool) -> BoxFuture<'static, Response<TestBody>> + Send + Sync>;

/// A CA plus a server certificate for 127.0.0.1/localhost and a client certificate.
pub struct TestPki {
    pub ca_pem: String,
    pub server_cert_pem: String,
    pub server_key_pem: String,
    pub client_cert_pem: String,
    pub client_key_pem: String,
}

pub fn test_pki() -> TestPki {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    let server = CertificateParams::new(names)
        .unwrap()
        .signed_by(&server_key, &ca, &ca_key)
        .unwrap();
    let client_key = KeyPair::generate().unwrap();
    let client = CertificateParams::new(Vec::<String>::new())
        .unwrap()
        .signed_by(&client_key, &ca, &ca_key)
        .unwrap();
    TestPki {
        ca_pem: ca.pem(),
        server_cert_pem: server.pem(),
        server_key_pem: server_key.serialize_pem(),
        client_cert_pem: client.pem(),
        client_key_pem: client_key.serialize_pem(),
    }
}

/// A resolved kubeconfig trusting `pki`'s CA and using its client certificate.
pub fn kubeconfig_for(pki: &TestPki, server: &str) -> Kubeconfig {
    Kubeconfig {
        server: url::Url::parse(server).unwrap(),
        ca_pem: Some(pki.ca_pem.clone().into_bytes()),
        insecure_skip_tls_verify: false,
        tls_server_name: None,
        client_cert_pem: Some(pki.client_cert_pem.clone().into_bytes()),
        client_key_pem: Some(pki.client_key_pem.clone().into_bytes()),
        authorization: None,
    }
}

/// The same, as kubeconfig YAML text with inline data.
pub fn kubeconfig_yaml(pki: &TestPki, server: &str) -> String {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: {server}\n    certificate-authority-data: {}\nusers:\n- name: t\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\ncontexts:\n- name: t\n  context: {{cluster: t, user: t}}\ncurrent-context: t\n",
        b64(&pki.ca_pem),
        b64(&pki.client_cert_pem),
        b64(&pki.client_key_pem)
    )
}

/// A complete response body.
pub fn full(bytes: impl Into<Bytes>) -> TestBody {
    Full::new(bytes.into()).boxed()
}

/// Serves TLS on a loopback port offering `alpn`; returns the port.
pub async fn serve_tls(pki: &TestPki, alpn: Vec<Vec<u8>>, handler: Handler) -> u16 {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server_config(pki, alpn)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, handler) = (acceptor.clone(), handler.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let has_cert = tls.get_ref().1.peer_certificates().is_some();
                let svc = hyper::service::service_fn(move |req| {
                    let fut = handler(req, has_cert);
                    async move { Ok::<_, Infallible>(fut.await) }
                });
                let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                let _ = builder.serve_connection(TokioIo::new(tls), svc).await;
            });
        }
    });
    port
}

fn server_config(pki: &TestPki, alpn: Vec<Vec<u8>>) -> rustls::ServerConfig {
    let ca = CertificateDer::from_pem_slice(pki.ca_pem.as_bytes()).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .allow_unauthenticated()
    .build()
    .unwrap();
    let certs = CertificateDer::pem_slice_iter(pki.server_cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(pki.server_key_pem.as_bytes()).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)
        .unwrap();
    config.alpn_protocols = alpn;
    config
}
