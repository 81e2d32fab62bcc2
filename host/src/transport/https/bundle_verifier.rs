//! How a webhook's serving certificate is checked against its caBundle:
//! webpki's chain verification, and one case webpki refuses but Go's
//! crypto/x509 (kube-apiserver's client) accepts: a server certificate that
//! is itself one of the caBundle's certificates, such as the self-signed
//! CA:TRUE certificate `openssl req -x509` makes (webpki: CaUsedAsEndEntity).
//! Such a certificate is trusted as the anchor it is (byte for byte the one
//! configured; neither Go nor webpki checks an anchor's own signature); its
//! validity period and its name (SAN) are still checked, and the handshake
//! signature still proves the server holds its key.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, Error, RootCertStore, SignatureScheme};
use std::sync::Arc;

#[derive(Debug)]
pub struct BundleVerifier {
    webpki: Arc<WebPkiServerVerifier>,
    bundle: Vec<CertificateDer<'static>>,
}

impl BundleVerifier {
    /// A verifier trusting exactly `bundle` (at least one certificate).
    pub fn new(bundle: Vec<CertificateDer<'static>>) -> Result<Self, String> {
        let mut roots = RootCertStore::empty();
        for cert in &bundle {
            roots
                .add(cert.clone())
                .map_err(|e| format!("caBundle: {e}"))?;
        }
        let webpki = WebPkiServerVerifier::builder(Arc::new(roots))
            .build()
            .map_err(|e| format!("caBundle: {e}"))?;
        Ok(BundleVerifier { webpki, bundle })
    }

    /// The checks of a server certificate that is one of the bundle's own.
    fn verify_anchor(
        &self,
        cert: &CertificateDer<'_>,
        name: &ServerName<'_>,
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let (not_before, not_after) =
            validity(cert).ok_or(Error::InvalidCertificate(CertificateError::BadEncoding))?;
        let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
        if now < not_before {
            return Err(Error::InvalidCertificate(CertificateError::NotValidYet));
        }
        if now > not_after {
            return Err(Error::InvalidCertificate(CertificateError::Expired));
        }
        rustls::client::verify_server_name(&ParsedCertificate::try_from(cert)?, name)?;
        Ok(ServerCertVerified::assertion())
    }
}

impl ServerCertVerifier for BundleVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let verdict = self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match verdict {
            Err(_) if self.bundle.iter().any(|c| c == end_entity) => {
                self.verify_anchor(end_entity, server_name, now)
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// notBefore and notAfter of a DER certificate, in seconds since the epoch.
fn validity(der: &[u8]) -> Option<(i64, i64)> {
    let (certificate, _) = element(der, 0x30)?;
    let (tbs, _) = element(certificate, 0x30)?;
    let mut rest = tbs;
    if rest.first() == Some(&0xa0) {
        rest = element(rest, 0xa0)?.1; // version
    }
    for _ in 0..3 {
        rest = next(rest)?.2; // serialNumber, signature, issuer
    }
    let (validity, _) = element(rest, 0x30)?;
    let (tag, not_before, rest) = next(validity)?;
    let not_before = time(tag, not_before)?;
    let (tag, not_after, _) = next(rest)?;
    Some((not_before, time(tag, not_after)?))
}

/// The content of the DER element at the start of `input` when its tag is
/// `tag`, and what follows it.
fn element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (found, content, rest) = next(input)?;
    (found == tag).then_some((content, rest))
}

/// Tag, content and the rest, of the DER element at the start of `input`.
fn next(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = match first {
        0..=0x7f => (usize::from(first), rest),
        0x81..=0x84 => {
            let n = usize::from(first & 0x7f);
            let bytes = rest.get(..n)?;
            let len = bytes
                .iter()
                .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
            (len, &rest[n..])
        }
        _ => return None,
    };
    let content = rest.get(..len)?;
    Some((tag, content, &rest[len..]))
}

/// A UTCTime (0x17, `YYMMDDHHMMSSZ`) or GeneralizedTime (0x18,
/// `YYYYMMDDHHMMSSZ`) as seconds since the epoch.
fn time(tag: u8, content: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(content).ok()?;
    let full = match tag {
        0x17 => {
            let year: u32 = text.get(..2)?.parse().ok()?;
            let century = if year >= 50 { "19" } else { "20" };
            format!("{century}{text}")
        }
        0x18 => text.to_string(),
        _ => return None,
    };
    let parsed = chrono::NaiveDateTime::parse_from_str(&full, "%Y%m%d%H%M%SZ").ok()?;
    Some(parsed.and_utc().timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn self_signed_ca(names: &[&str], years: (i32, i32)) -> CertificateDer<'static> {
        let key = rcgen::KeyPair::generate().unwrap();
        let names = names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let mut params = rcgen::CertificateParams::new(names).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.not_before = rcgen::date_time_ymd(years.0, 1, 1);
        params.not_after = rcgen::date_time_ymd(years.1, 1, 1);
        let cert = params.self_signed(&key).unwrap();
        CertificateDer::from(cert.der().to_vec())
    }

    fn verify(
        bundle: &[&CertificateDer<'static>],
        leaf: &CertificateDer<'_>,
        name: &str,
    ) -> Result<ServerCertVerified, Error> {
        let verifier = BundleVerifier::new(bundle.iter().map(|c| (*c).clone()).collect()).unwrap();
        let name = ServerName::try_from(name.to_string()).unwrap();
        verifier.verify_server_cert(leaf, &[], &name, &[], UnixTime::now())
    }

    #[test]
    fn a_self_signed_ca_given_as_its_own_bundle_is_accepted_for_its_name() {
        let cert = self_signed_ca(&["127.0.0.1", "hook.example"], (2020, 2090));
        assert!(verify(&[&cert], &cert, "127.0.0.1").is_ok());
        assert!(verify(&[&cert], &cert, "hook.example").is_ok());
        let err = verify(&[&cert], &cert, "127.0.0.2").unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. })
            ),
            "{err:?}"
        );
    }

    #[test]
    fn expired_or_foreign_self_signed_certificates_are_refused() {
        let expired = self_signed_ca(&["127.0.0.1"], (2000, 2001));
        let err = verify(&[&expired], &expired, "127.0.0.1").unwrap_err();
        assert_eq!(err, Error::InvalidCertificate(CertificateError::Expired));
        let future = self_signed_ca(&["127.0.0.1"], (2080, 2090));
        let err = verify(&[&future], &future, "127.0.0.1").unwrap_err();
        assert_eq!(
            err,
            Error::InvalidCertificate(CertificateError::NotValidYet)
        );
        let other = self_signed_ca(&["127.0.0.1"], (2020, 2090));
        let trusted = self_signed_ca(&["127.0.0.1"], (2020, 2090));
        assert!(verify(&[&trusted], &other, "127.0.0.1").is_err());
    }

    #[test]
    fn validity_reads_utc_and_generalized_times() {
        let cert = self_signed_ca(&["x"], (1999, 2051));
        assert_eq!(validity(&cert), Some((915_148_800, 2_556_144_000)));
        assert_eq!(validity(&cert[..cert.len() / 2]), None);
        assert_eq!(validity(b"\x30\x85"), None);
    }
}
