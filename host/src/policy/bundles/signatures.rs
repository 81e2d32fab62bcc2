//! cosign signatures of a bundle kept in its layout, as `cosign save` keeps
//! them: the signature manifest is a second entry of `index.json`, of kind
//! `dev.cosignproject.cosign/sigs` (the bundle's entry: `.../image`) and
//! tagged `sha256-<hex>.sig` (`org.opencontainers.image.ref.name`), its
//! config and payload blobs beside the bundle's. A registry bundle is pulled into such
//! a layout with its signatures (`registry.rs`), so verification is one
//! check on disk either way.

use super::layout::{blob_path, Layout, KIND, KIND_IMAGE, KIND_SIGNATURES, REF_NAME};
use super::MAX_JSON_BYTES;
use crate::cosign::simple_signing::{self, Rejection, Signed};
use crate::cosign::{PrivateKey, PublicKey, MAX_PAYLOAD_BYTES};
use oci_spec::image::{Descriptor, DescriptorBuilder, MediaType};
use serde_json::{json, Value};
use std::path::Path;

/// The signatures of `digest` found in the layout (none: an empty list).
pub fn read(layout: &Layout, digest: &str) -> Result<Vec<Signed>, String> {
    let Some(descriptor) = layout.signature_descriptor(digest) else {
        return Ok(Vec::new());
    };
    let manifest = layout.blob(descriptor, MAX_JSON_BYTES)?;
    from_manifest(&manifest, |d, size| {
        let d = descriptor_of(d, size, "application/octet-stream")?;
        layout.blob(&d, MAX_PAYLOAD_BYTES)
    })
}

/// The signatures a signature manifest carries, each payload fetched by `blob(digest, size)`.
pub fn from_manifest(
    manifest: &[u8],
    mut blob: impl FnMut(&str, u64) -> Result<Vec<u8>, String>,
) -> Result<Vec<Signed>, String> {
    let mut signed = Vec::new();
    for (digest, size, signature) in simple_signing::layers(manifest)? {
        if size > MAX_PAYLOAD_BYTES {
            return Err(format!(
                "signature payload {digest}: {size} bytes, more than {MAX_PAYLOAD_BYTES}"
            ));
        }
        signed.push(Signed {
            payload: blob(&digest, size)?,
            signature,
        });
    }
    Ok(signed)
}

fn descriptor_of(digest: &str, size: u64, media_type: &str) -> Result<Descriptor, String> {
    let digest: oci_spec::image::Digest = digest
        .parse()
        .map_err(|e| format!("digest {digest:?}: {e}"))?;
    DescriptorBuilder::default()
        .media_type(MediaType::from(media_type))
        .digest(digest)
        .size(size)
        .build()
        .map_err(|e| e.to_string())
}

/// Why a bundle's signatures were not accepted; the text names the bundle
/// (as [`VerifyError::shown_as`] says it), its digest and why.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The layout, or its bundle's manifest, cannot be read.
    #[error("bundle {bundle}: {reason}")]
    Layout { bundle: String, reason: String },
    /// The signature manifest kept for the digest cannot be read.
    #[error("bundle {bundle} ({digest}): {reason}")]
    Signatures {
        bundle: String,
        digest: String,
        reason: String,
    },
    /// Read, and no signature verifies under the keys (or there is none).
    #[error("bundle {bundle} ({digest}): {rejection}")]
    Rejected {
        bundle: String,
        digest: String,
        rejection: Rejection,
    },
}

impl VerifyError {
    /// Whether the bundle carries no signature at all.
    pub fn is_unsigned(&self) -> bool {
        matches!(
            self,
            VerifyError::Rejected {
                rejection: Rejection::Unsigned,
                ..
            }
        )
    }

    /// The same error naming the bundle as the user gave it (a registry
    /// reference, a PolicyBundle's path) rather than where it was read.
    pub fn shown_as(mut self, name: &str) -> VerifyError {
        match &mut self {
            VerifyError::Layout { bundle, .. }
            | VerifyError::Signatures { bundle, .. }
            | VerifyError::Rejected { bundle, .. } => *bundle = name.to_string(),
        }
        self
    }
}

/// Verifies the layout's bundle against `keys`: its digest and the payload
/// of the signature that verified.
pub fn verify(path: &Path, keys: &[PublicKey]) -> Result<(String, Value), VerifyError> {
    let bundle = path.display().to_string();
    let layout = Layout::open(path).map_err(|reason| VerifyError::Layout {
        bundle: bundle.clone(),
        reason,
    })?;
    let digest = match layout.bundle_descriptor() {
        Ok(d) => d.digest().to_string(),
        Err(reason) => return Err(VerifyError::Layout { bundle, reason }),
    };
    let signed = match read(&layout, &digest) {
        Ok(signed) => signed,
        Err(reason) => {
            return Err(VerifyError::Signatures {
                bundle,
                digest,
                reason,
            })
        }
    };
    match simple_signing::verify(&signed, &digest, keys) {
        Ok((_, payload)) => Ok((digest, payload)),
        Err(rejection) => Err(VerifyError::Rejected {
            bundle,
            digest,
            rejection,
        }),
    }
}

/// Signs the layout's bundle with `key`, adding the signature to those
/// already kept for its digest; returns the digest.
pub fn sign(path: &Path, key: &PrivateKey, reference: &str) -> Result<String, String> {
    let layout = Layout::open(path)?;
    let mut bundle = layout.bundle_descriptor()?.clone();
    let mut annotations = bundle.annotations().clone().unwrap_or_default();
    annotations.insert(KIND.into(), KIND_IMAGE.into());
    bundle.set_annotations(Some(annotations));
    let digest = bundle.digest().to_string();
    let mut signed = read(&layout, &digest)?;
    signed.push(simple_signing::sign(key, reference, &digest)?);
    let mut files = layout.files()?;
    let (manifest, blobs) = simple_signing::manifest(&signed);
    let sig_digest = crate::cosign::digest(&manifest);
    for (d, bytes) in blobs {
        files.insert(blob_path(&d), bytes);
    }
    let entry = json!({
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": sig_digest, "size": manifest.len(),
        "annotations": {REF_NAME: crate::cosign::signature_tag(&digest), KIND: KIND_SIGNATURES},
    });
    files.insert(blob_path(&sig_digest), manifest);
    let index = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [serde_json::to_value(&bundle).map_err(|e| e.to_string())?, entry],
    });
    files.insert("index.json".into(), index.to_string().into_bytes());
    super::layout::write(path, &files).map_err(|e| format!("{e:#}"))?;
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A built bundle as a tarball and a layout directory.
    fn built(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
        super::super::tests::source(dir, "deny-service-external-ips", "admission");
        let (tar, layout) = (dir.join("b.tar"), dir.join("layout"));
        super::super::build(dir, None, &tar).unwrap();
        super::super::build(dir, None, &layout).unwrap();
        (tar, layout)
    }

    #[test]
    fn a_signature_kept_in_the_layout_verifies_and_the_bundle_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        for path in <[_; 2]>::from(built(dir.path())) {
            let key = PrivateKey::generate().unwrap();
            let e = verify(&path, &[key.public_key()]).unwrap_err();
            assert!(
                e.is_unsigned() && e.to_string().ends_with("no signature found"),
                "{e}"
            );
            let digest = sign(&path, &key, "capstan.dev/bundles/b").unwrap();
            // A second signature is added beside the first, as cosign adds them.
            let other = PrivateKey::generate().unwrap();
            sign(&path, &other, "capstan.dev/bundles/b").unwrap();
            for k in [&key, &other] {
                let (verified, payload) = verify(&path, &[k.public_key()]).unwrap();
                assert_eq!(verified, digest);
                assert_eq!(
                    payload["critical"]["image"]["docker-manifest-digest"],
                    digest.as_str()
                );
            }
            let stranger = PrivateKey::generate().unwrap().public_key();
            let e = verify(&path, &[stranger]).unwrap_err();
            assert!(!e.is_unsigned(), "{e}");
            let e = e.to_string();
            assert!(
                e.contains(&digest) && e.contains("does not verify with any key"),
                "{e}"
            );
            assert_eq!(super::super::load(&path).unwrap().manifest_digest, digest);
        }
    }

    #[test]
    fn signatures_are_found_by_cosign_saves_kind_annotation_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (_, layout) = built(dir.path());
        let key = PrivateKey::generate().unwrap();
        let digest = sign(&layout, &key, "capstan.dev/bundles/b").unwrap();
        let index_path = layout.join("index.json");
        let mut index: Value =
            serde_json::from_slice(&std::fs::read(&index_path).unwrap()).unwrap();
        let sig = &mut index["manifests"][1]["annotations"];
        assert_eq!(sig[KIND], KIND_SIGNATURES);
        sig.as_object_mut().unwrap().remove(REF_NAME);
        assert_eq!(index["manifests"][0]["annotations"][KIND], KIND_IMAGE);
        std::fs::write(&index_path, index.to_string()).unwrap();
        assert_eq!(verify(&layout, &[key.public_key()]).unwrap().0, digest);
    }
}
