//! JWS compact serialization (header.payload.signature, unpadded base64url)
//! for ES256, with kube's unverified issuer pre-check
//! (pkg/serviceaccount/jwt.go `hasCorrectIssuer`).

use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::Signature;
use serde::Deserialize;

use crate::config::PublicKey;

/// Go's `base64.RawURLEncoding`: no padding, trailing bits tolerated.
const RAW_URL: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// go-jose's error for any failed signature check (`ErrCryptoFailure`).
pub const CRYPTO_FAILURE: &str = "go-jose/go-jose: error in cryptographic primitive";

/// A parsed, not yet verified, JWS.
#[derive(Debug)]
pub struct Jws<'a> {
    signing_input: &'a str,
    header: Header,
    pub payload: Vec<u8>,
    signature: Vec<u8>,
}

/// The protected header fields that matter here.
#[derive(Debug, Deserialize)]
struct Header {
    #[serde(default)]
    alg: String,
    #[serde(default)]
    kid: Option<String>,
}

/// Whether `token` looks like a compact JWS whose unverified `iss` is `issuer`.
pub fn issuer_matches(token: &str, issuer: &str) -> bool {
    #[derive(Deserialize)]
    struct Unverified {
        #[serde(default)]
        iss: String,
    }
    if token.trim_start().starts_with('{') {
        return false;
    }
    let parts: Vec<&str> = token.split('.').collect();
    let [_, payload, _] = parts.as_slice() else {
        return false;
    };
    RAW_URL
        .decode(payload)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Unverified>(&bytes).ok())
        .is_some_and(|claims| claims.iss == issuer)
}

impl<'a> Jws<'a> {
    /// Splits and decodes a compact JWS; `None` when it is not one.
    pub fn parse(token: &'a str) -> Option<Self> {
        let (signing_input, signature) = token.rsplit_once('.')?;
        let (header, payload) = signing_input.split_once('.')?;
        if payload.contains('.') {
            return None;
        }
        let header: Header = serde_json::from_slice(&RAW_URL.decode(header).ok()?).ok()?;
        Some(Jws {
            signing_input,
            header,
            payload: RAW_URL.decode(payload).ok()?,
            signature: RAW_URL.decode(signature).ok()?,
        })
    }

    /// The header's key ID, if any.
    pub fn kid(&self) -> Option<&str> {
        self.header.kid.as_deref()
    }

    /// Whether one of `keys` signed this JWS with ES256.
    pub fn verified_by(&self, keys: &[&PublicKey]) -> bool {
        if self.header.alg != "ES256" {
            return false;
        }
        let Ok(signature) = Signature::from_slice(&self.signature) else {
            return false;
        };
        keys.iter().any(|k| {
            k.key
                .verify(self.signing_input.as_bytes(), &signature)
                .is_ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(text: &str) -> String {
        RAW_URL.encode(text)
    }

    #[test]
    fn issuer_precheck_needs_three_parts_and_the_issuer() {
        let payload = b64(r#"{"iss":"https://k"}"#);
        assert!(issuer_matches(&format!("h.{payload}.s"), "https://k"));
        assert!(!issuer_matches(&format!("h.{payload}.s"), "https://other"));
        assert!(!issuer_matches(&format!("h.{payload}"), "https://k"));
        assert!(!issuer_matches(&format!("h.{payload}.s.x"), "https://k"));
        assert!(!issuer_matches(&format!(" {{h.{payload}.s"), "https://k"));
        assert!(!issuer_matches(
            &format!("h.{}.s", b64(r#"{"iss":7}"#)),
            "https://k"
        ));
        assert!(!issuer_matches(&format!("h.{payload}=.s"), "https://k"));
        assert!(!issuer_matches("opaque-token", "https://k"));
    }

    #[test]
    fn parse_reads_header_and_rejects_malformed_tokens() {
        let header = b64(r#"{"alg":"ES256","kid":"k1"}"#);
        let token = format!("{header}.{}.AAAA", b64("{}"));
        let jws = Jws::parse(&token).unwrap();
        assert_eq!(jws.kid(), Some("k1"));
        assert_eq!(jws.payload, b"{}");
        assert!(Jws::parse(&format!("{header}.e30")).is_none());
        assert!(Jws::parse(&format!("{header}.e30.A.A")).is_none());
        assert!(Jws::parse(&format!("{}.e30.AAAA", b64("not json"))).is_none());
        assert!(Jws::parse(&format!("{header}.e30.***")).is_none());
    }

    #[test]
    fn wrong_algorithm_or_signature_size_never_verifies() {
        let none = format!("{}.e30.", b64(r#"{"alg":"none"}"#));
        assert!(!Jws::parse(&none).unwrap().verified_by(&[]));
        let short = format!("{}.e30.AAAA", b64(r#"{"alg":"ES256"}"#));
        assert!(!Jws::parse(&short).unwrap().verified_by(&[]));
    }
}
