//! The "simple signing" payload cosign signs, the signature manifest that
//! carries it, and the check of a signature against public keys: the
//! signature verifies over the payload's exact bytes, the payload is of
//! type `cosign container image signature`, and its
//! `critical.image.docker-manifest-digest` is the digest being verified.

use super::{PrivateKey, PublicKey, SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Value};

pub const SIGNATURE_TYPE: &str = "cosign container image signature";

/// The payload for `digest` of the image at `reference` (the repository, as cosign writes it).
pub fn payload(reference: &str, digest: &str) -> Vec<u8> {
    let doc = json!({
        "critical": {
            "identity": {"docker-reference": reference},
            "image": {"docker-manifest-digest": digest},
            "type": SIGNATURE_TYPE,
        },
        "optional": null,
    });
    doc.to_string().into_bytes()
}

/// One signature: the payload blob and the base64 signature of it.
#[derive(Clone, Debug)]
pub struct Signed {
    pub payload: Vec<u8>,
    pub signature: String,
}

/// Signs `digest` with `key`.
pub fn sign(key: &PrivateKey, reference: &str, digest: &str) -> Result<Signed, String> {
    let payload = payload(reference, digest);
    let signature = B64.encode(key.sign(&payload)?);
    Ok(Signed { payload, signature })
}

/// Why no signature was accepted.
#[derive(Debug, PartialEq)]
pub enum Rejection {
    /// No signature at all.
    Unsigned,
    /// Signatures, none valid for `digest` under the keys (each one's reason).
    Invalid(Vec<String>),
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejection::Unsigned => write!(f, "no signature found"),
            Rejection::Invalid(why) => write!(
                f,
                "no signature is valid for the given public keys ({})",
                why.join("; ")
            ),
        }
    }
}

/// The index of the first of `keys` that a signature of `digest` among
/// `signed` verifies with, and that signature's payload.
pub fn verify(
    signed: &[Signed],
    digest: &str,
    keys: &[PublicKey],
) -> Result<(usize, Value), Rejection> {
    if signed.is_empty() {
        return Err(Rejection::Unsigned);
    }
    let mut why = Vec::new();
    for s in signed {
        let Ok(raw) = B64.decode(s.signature.trim()) else {
            why.push("a signature annotation is not base64".into());
            continue;
        };
        let Some(key) = keys.iter().position(|k| k.verifies(&s.payload, &raw)) else {
            why.push(
                "a signature does not verify with any key (wrong key or tampered payload)".into(),
            );
            continue;
        };
        match claims(&s.payload, digest) {
            Ok(doc) => return Ok((key, doc)),
            Err(e) => why.push(e),
        }
    }
    Err(Rejection::Invalid(why))
}

/// The payload's claims: its type, and that it names `digest`.
fn claims(payload: &[u8], digest: &str) -> Result<Value, String> {
    let doc: Value =
        serde_json::from_slice(payload).map_err(|e| format!("a payload is not JSON: {e}"))?;
    let kind = doc.pointer("/critical/type").and_then(Value::as_str);
    if kind != Some(SIGNATURE_TYPE) {
        return Err(format!(
            "a payload's critical.type is {kind:?}, not {SIGNATURE_TYPE:?}"
        ));
    }
    let named = doc
        .pointer("/critical/image/docker-manifest-digest")
        .and_then(Value::as_str);
    match named == Some(digest) {
        true => Ok(doc),
        false => Err(format!(
            "a valid signature is for {}, not {digest}",
            named.unwrap_or("no digest")
        )),
    }
}

/// A signature manifest as cosign pushes it: an image config naming the
/// payloads as its layers' diff_ids, and one simple-signing layer per signature.
/// Returns the manifest's bytes and the blobs it names (config and payloads).
pub fn manifest(signed: &[Signed]) -> (Vec<u8>, Vec<(String, Vec<u8>)>) {
    let digests: Vec<String> = signed
        .iter()
        .map(|s| crate::cosign::digest(&s.payload))
        .collect();
    let config = json!({
        "architecture": "", "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}], "os": "",
        "rootfs": {"type": "layers", "diff_ids": digests}, "config": {},
    })
    .to_string()
    .into_bytes();
    let config_digest = crate::cosign::digest(&config);
    let layers: Vec<Value> = signed
        .iter()
        .zip(&digests)
        .map(|(s, d)| {
            json!({"mediaType": SIMPLE_SIGNING_MEDIA_TYPE, "size": s.payload.len(), "digest": d,
                   "annotations": {SIGNATURE_ANNOTATION: s.signature}})
        })
        .collect();
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "size": config.len(), "digest": config_digest},
        "layers": layers,
    });
    let mut blobs = vec![(config_digest, config)];
    blobs.extend(
        digests
            .into_iter()
            .zip(signed.iter().map(|s| s.payload.clone())),
    );
    (manifest.to_string().into_bytes(), blobs)
}

/// The signature layers of a signature manifest: (payload digest, size, base64 signature).
pub fn layers(manifest: &[u8]) -> Result<Vec<(String, u64, String)>, String> {
    let doc: Value =
        serde_json::from_slice(manifest).map_err(|e| format!("the signature manifest: {e}"))?;
    let layers = doc
        .get("layers")
        .and_then(Value::as_array)
        .ok_or("the signature manifest has no layers")?;
    let mut found = Vec::new();
    for layer in layers.iter().take(super::MAX_SIGNATURES) {
        if layer.get("mediaType").and_then(Value::as_str) != Some(SIMPLE_SIGNING_MEDIA_TYPE) {
            continue;
        }
        let (Some(digest), Some(size), Some(sig)) = (
            layer.get("digest").and_then(Value::as_str),
            layer.get("size").and_then(Value::as_u64),
            layer
                .pointer(&format!(
                    "/annotations/{}",
                    SIGNATURE_ANNOTATION.replace('/', "~1")
                ))
                .and_then(Value::as_str),
        ) else {
            continue;
        };
        found.push((digest.to_string(), size, sig.to_string()));
    }
    Ok(found)
}
