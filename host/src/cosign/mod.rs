//! Signatures compatible with cosign's key-based ones. A signature of an
//! image manifest (digest `sha256:<hex>`) is an OCI image manifest tagged
//! `sha256-<hex>.sig` in the same repository, with one layer per signature:
//! media type [`SIMPLE_SIGNING_MEDIA_TYPE`], the "simple signing" payload
//! (`simple_signing.rs`) as its blob and the base64 ASN.1 ECDSA signature of
//! that blob in its [`SIGNATURE_ANNOTATION`]. `keys.rs` reads and writes
//! cosign's key files.

pub mod keys;
pub mod simple_signing;

pub use keys::{PrivateKey, PublicKey};

/// The media type of a signature layer (cosign's `SimpleSigningMediaType`).
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the base64 signature (cosign's `static.SignatureAnnotationKey`).
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// At most this many signature layers are read from a `.sig` manifest.
pub const MAX_SIGNATURES: usize = 16;
/// A payload blob's bound.
pub const MAX_PAYLOAD_BYTES: u64 = 64 << 10;

/// The tag of the signatures of `digest` (`sha256:<hex>` → `sha256-<hex>.sig`).
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// `sha256:<hex>` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    let hex: String = d.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests;
