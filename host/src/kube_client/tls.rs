//! rustls client configuration (ring provider) built from a kubeconfig: the cluster CA
//! (or no verification with `insecure-skip-tls-verify`), the client certificate, and
//! the ALPN protocols to offer.

use super::kubeconfig::Kubeconfig;
use anyhow::{anyhow, bail, Context, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use std::sync::Arc;

/// ALPN identifier for HTTP/2.
pub const ALPN_H2: &[u8] = b"h2";
/// ALPN identifier for HTTP/1.1.
pub const ALPN_HTTP1: &[u8] = b"http/1.1";

/// A client config for `kc`, offering HTTP/2 first unless `allow_h2` is false.
pub fn client_config(kc: &Kubeconfig, allow_h2: bool) -> Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?;
    let builder = if kc.insecure_skip_tls_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyServerCert(provider)))
    } else {
        builder.with_root_certificates(roots(kc)?)
    };
    let mut config = match (&kc.client_cert_pem, &kc.client_key_pem) {
        (Some(cert), Some(key)) => builder
            .with_client_auth_cert(certificates(cert)?, private_key(key)?)
            .context("client certificate and key do not match")?,
        (Some(_), None) | (None, Some(_)) => {
            bail!("kubeconfig user has a client certificate or key but not both")
        }
        (None, None) => builder.with_no_client_auth(),
    };
    config.alpn_protocols = if allow_h2 {
        vec![ALPN_H2.to_vec(), ALPN_HTTP1.to_vec()]
    } else {
        vec![ALPN_HTTP1.to_vec()]
    };
    Ok(config)
}

fn roots(kc: &Kubeconfig) -> Result<RootCertStore> {
    let pem = kc.ca_pem.as_deref().ok_or_else(|| {
        anyhow!("cluster has no certificate-authority(-data) and insecure-skip-tls-verify is off")
    })?;
    let mut store = RootCertStore::empty();
    for cert in certificates(pem).context("certificate-authority")? {
        store.add(cert).context("adding CA certificate")?;
    }
    Ok(store)
}

fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .context("parsing PEM certificates")?;
    if certs.is_empty() {
        bail!("no PEM certificate found");
    }
    Ok(certs)
}

fn private_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_slice(pem).context("parsing PEM private key")
}

/// Verifier for `insecure-skip-tls-verify`: any certificate, but handshake signatures
/// are still checked so the connection is at least self-consistent.
#[derive(Debug)]
struct AcceptAnyServerCert(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyServerCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube_client::testing::{kubeconfig_for, test_pki};

    #[test]
    fn builds_config_with_client_certificate_and_h2_alpn() {
        let pki = test_pki();
        let kc = kubeconfig_for(&pki, "https://127.0.0.1:1");
        let config = client_config(&kc, true).unwrap();
        assert!(config.client_auth_cert_resolver.has_certs());
        assert_eq!(
            config.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        let config = client_config(&kc, false).unwrap();
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }

    #[test]
    fn rejects_missing_ca_mismatched_key_and_garbage() {
        let pki = test_pki();
        let mut kc = kubeconfig_for(&pki, "https://127.0.0.1:1");
        kc.ca_pem = None;
        let err = client_config(&kc, true).unwrap_err().to_string();
        assert!(err.contains("certificate-authority"), "{err}");
        kc.insecure_skip_tls_verify = true;
        assert!(client_config(&kc, true).is_ok());
        kc.client_key_pem = None;
        let err = client_config(&kc, true).unwrap_err().to_string();
        assert!(err.contains("not both"), "{err}");
        kc.client_key_pem = Some(b"not a key".to_vec());
        assert!(client_config(&kc, true).is_err());
        kc.client_key_pem = Some(test_pki().client_key_pem.into_bytes());
        let err = client_config(&kc, true).unwrap_err().to_string();
        assert!(err.contains("do not match"), "{err}");
    }
}
