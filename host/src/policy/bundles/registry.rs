//! Bundles in an OCI registry: push a layout's image manifest and blobs
//! unchanged (oci-client over rustls; the CLI's, towards a registry the
//! operator chose), so the registry's digest is the layout's; pull one back
//! into a layout with its cosign signatures (`sha256-<hex>.sig`), and push
//! signatures. References are `host[:port]/repo[:tag|@sha256:...]`,
//! optionally written `registry://...` as in PolicyBundles. Registries are
//! reached over HTTPS, plain HTTP only for the `insecure` ones.
//! Credentials: anonymous, or basic auth from the docker config
//! (`$DOCKER_CONFIG/config.json`, `~/.docker/config.json`) when asked.
//!
//! Pulls (what the server does) never trust the registry: they go through
//! our own bounded GETs (`registry/transport.rs`, `registry/puller.rs`: every
//! wait, body, error body, token answer and redirect bounded), every
//! manifest within [`MAX_JSON_BYTES`], every blob within its bound and its
//! descriptor's size and checked against its digest, [`MAX_BUNDLE_BYTES`]
//! in all, the whole pull within [`PULL_DEADLINE`].

#[cfg(test)]
mod hostile_tests;
mod puller;
mod transport;

use super::layout::{
    blob_path, check_shape, Files, Layout, KIND, KIND_IMAGE, KIND_SIGNATURES, REF_NAME,
};
use super::{
    parse_error, ARTIFACT_TYPE, MAX_BUNDLE_BYTES, MAX_COMPONENT_BYTES, MAX_JSON_BYTES, MAX_POLICIES,
};
use crate::cosign::simple_signing::{self, Signed};
use crate::cosign::{signature_tag, PrivateKey, MAX_PAYLOAD_BYTES};
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};
use oci_spec::image::ImageManifest;
use puller::Puller;
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use transport::Http;

/// The scheme a PolicyBundle's `bundle` uses for a registry reference.
pub const SCHEME: &str = "registry://";
const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// A whole pull (manifests, blobs, signatures) must finish within this
/// (kube has no registry pulls; a PolicyBundle's load has its own, shorter, deadline).
pub const PULL_DEADLINE: Duration = Duration::from_secs(600);

/// A registry reference: `registry://` is optional; a tag or a digest is required.
pub fn parse_reference(text: &str) -> Result<Reference, String> {
    let bare = text.strip_prefix(SCHEME).unwrap_or(text);
    let reference: Reference = bare
        .parse()
        .map_err(|e| format!("{text:?} is not a registry reference: {e}"))?;
    if !bare.contains('/') {
        return Err(format!(
            "{text:?}: a registry reference names a host and a repository (host[:port]/repo:tag)"
        ));
    }
    Ok(reference)
}

/// The repository of a reference as cosign names it (`host/repo`).
pub fn repository(reference: &Reference) -> String {
    format!("{}/{}", reference.registry(), reference.repository())
}

/// How to reach registries.
#[derive(Clone, Debug, Default)]
pub struct Access {
    /// `host:port`s reached over plain HTTP.
    pub insecure: Vec<String>,
    /// Use the docker config's credentials.
    pub docker_config: bool,
}

pub struct Registry {
    client: Client,
    access: Access,
}

impl Registry {
    pub fn new(access: Access) -> Registry {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let config = ClientConfig {
            protocol: ClientProtocol::HttpsExcept(access.insecure.clone()),
            platform_resolver: None,
            connect_timeout: Some(Duration::from_secs(10)),
            read_timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        };
        Registry {
            client: Client::new(config),
            access,
        }
    }

    fn auth(&self, reference: &Reference) -> RegistryAuth {
        match self.access.docker_config {
            true => docker_config_auth(reference.resolve_registry()),
            false => RegistryAuth::Anonymous,
        }
    }

    async fn authenticate(
        &self,
        reference: &Reference,
        op: RegistryOperation,
    ) -> Result<(), String> {
        self.client
            .auth(reference, &self.auth(reference), op)
            .await
            .map(|_| ())
            .map_err(|e| format!("{}: authentication: {e}", reference.whole()))
    }

    /// Pushes the layout's bundle (and the signatures it keeps) to `reference`; its digest.
    pub async fn push(&self, layout: &Layout, reference: &Reference) -> Result<String, String> {
        self.authenticate(reference, RegistryOperation::Push)
            .await?;
        let bundle = layout.bundle_descriptor()?;
        let digest = bundle.digest().to_string();
        self.push_manifest(layout, bundle, reference).await?;
        if let Some(sig) = layout.signature_descriptor(&digest) {
            let tag = tagged(reference, &signature_tag(&digest));
            self.push_manifest(layout, sig, &tag).await?;
        }
        Ok(digest)
    }

    async fn push_manifest(
        &self,
        layout: &Layout,
        descriptor: &oci_spec::image::Descriptor,
        reference: &Reference,
    ) -> Result<(), String> {
        let bytes = layout.blob(descriptor, MAX_JSON_BYTES)?;
        let manifest: ImageManifest = serde_json::from_slice(&bytes)
            .map_err(|e| format!("manifest {}: {e}", descriptor.digest()))?;
        for d in
            std::iter::once(manifest.config()).chain(manifest.layers().iter().take(MAX_POLICIES))
        {
            let digest = d.digest().to_string();
            let exists = self
                .client
                .blob_exists(reference, &digest)
                .await
                .unwrap_or(false);
            if !exists {
                let blob = layout.blob(d, MAX_COMPONENT_BYTES)?;
                self.client
                    .push_blob(reference, blob, &digest)
                    .await
                    .map_err(|e| format!("pushing blob {digest}: {e}"))?;
            }
        }
        self.push_raw_manifest(reference, bytes).await
    }

    async fn push_raw_manifest(&self, reference: &Reference, bytes: Vec<u8>) -> Result<(), String> {
        let content_type = http::HeaderValue::from_static(MANIFEST_TYPE);
        self.client
            .push_manifest_raw(reference, bytes, content_type)
            .await
            .map(|_| ())
            .map_err(|e| format!("pushing the manifest to {}: {e}", reference.whole()))
    }

    /// The bundle at `reference` with its signatures, as the files of a
    /// layout, and its digest. A reference by digest is checked against it.
    /// Within [`PULL_DEADLINE`], and [`MAX_BUNDLE_BYTES`] in all.
    pub async fn pull(&self, reference: &Reference) -> Result<(String, Files), String> {
        self.pull_within(reference, PULL_DEADLINE).await
    }

    /// As [`Registry::pull`], within `deadline`.
    pub async fn pull_within(
        &self,
        reference: &Reference,
        deadline: Duration,
    ) -> Result<(String, Files), String> {
        let puller = self.puller(reference)?;
        let pull = self.pull_from(&puller, reference);
        tokio::time::timeout(deadline, pull)
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "{}: the pull did not finish within {deadline:?}",
                    transport::clip(&reference.whole())
                ))
            })
    }

    async fn pull_from(
        &self,
        puller: &Puller,
        reference: &Reference,
    ) -> Result<(String, Files), String> {
        let (bytes, digest) = fetch_manifest(puller, reference).await?;
        let manifest: ImageManifest = serde_json::from_slice(&bytes)
            .map_err(|e| format!("manifest {digest}: {}", parse_error(&e)))?;
        check_shape(&manifest).map_err(|e| format!("manifest {digest}: {e}"))?;
        let mut files = Budget::new(MAX_BUNDLE_BYTES);
        for d in std::iter::once(manifest.config()).chain(manifest.layers()) {
            let max = match d == manifest.config() {
                true => MAX_JSON_BYTES,
                false => MAX_COMPONENT_BYTES,
            };
            let blob = fetch_blob(puller, d.digest().as_ref(), d.size(), max.min(files.left()))
                .await
                .map_err(|e| format!("manifest {digest}: {e}"))?;
            files.insert(blob_path(d.digest().as_ref()), blob)?;
        }
        files.insert(blob_path(&digest), bytes.to_vec())?;
        let mut entries = vec![json!({"mediaType": MANIFEST_TYPE, "digest": digest,
            "size": bytes.len(), "artifactType": ARTIFACT_TYPE,
            "annotations": {REF_NAME: reference.tag().unwrap_or("latest"), KIND: KIND_IMAGE}})];
        if let Some(entry) = pull_signatures(puller, &digest, &mut files).await? {
            entries.push(entry);
        }
        let mut files = files.files;
        let index = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                           "manifests": entries});
        files.insert("index.json".into(), index.to_string().into_bytes());
        files.insert(
            "oci-layout".into(),
            super::layout::oci_layout_file().map_err(|e| e.to_string())?,
        );
        Ok((digest, files))
    }

    /// The bounded puller of `reference`'s repository.
    fn puller(&self, reference: &Reference) -> Result<Puller, String> {
        let http = Http {
            insecure: self.access.insecure.clone(),
        };
        Puller::new(http, reference, &self.auth(reference))
    }

    /// Signs the bundle at `reference` with `key` and pushes the signature
    /// (added to those already at its `.sig` tag); the digest signed.
    pub async fn sign(&self, reference: &Reference, key: &PrivateKey) -> Result<String, String> {
        self.authenticate(reference, RegistryOperation::Push)
            .await?;
        let puller = self.puller(reference)?;
        let (bytes, digest) = fetch_manifest(&puller, reference).await?;
        let manifest: ImageManifest = serde_json::from_slice(&bytes)
            .map_err(|e| format!("manifest {digest}: {}", parse_error(&e)))?;
        check_shape(&manifest).map_err(|e| format!("manifest {digest}: {e}"))?;
        let sig_ref = tagged(reference, &signature_tag(&digest));
        let mut signed = existing_signatures(&puller, &sig_ref).await?;
        signed.push(simple_signing::sign(key, &repository(reference), &digest)?);
        let (manifest, blobs) = simple_signing::manifest(&signed);
        for (d, blob) in blobs {
            self.client
                .push_blob(&sig_ref, blob, &d)
                .await
                .map_err(|e| format!("pushing blob {d}: {e}"))?;
        }
        self.push_raw_manifest(&sig_ref, manifest).await?;
        Ok(digest)
    }
}

/// The signature manifest of `digest` and its blobs into `files`; its index entry.
async fn pull_signatures(
    puller: &Puller,
    digest: &str,
    files: &mut Budget,
) -> Result<Option<serde_json::Value>, String> {
    let tag = signature_tag(digest);
    let Some((bytes, sig_digest)) = puller.manifest(&tag, MAX_JSON_BYTES).await? else {
        return Ok(None);
    };
    let config: ImageManifest = serde_json::from_slice(&bytes)
        .map_err(|e| format!("signature manifest {sig_digest}: {}", parse_error(&e)))?;
    let c = config.config();
    let max = MAX_JSON_BYTES.min(files.left());
    let blob = fetch_blob(puller, c.digest().as_ref(), c.size(), max).await?;
    files.insert(blob_path(c.digest().as_ref()), blob)?;
    for (d, size, _) in simple_signing::layers(&bytes)? {
        let blob = fetch_blob(puller, &d, size, MAX_PAYLOAD_BYTES.min(files.left())).await?;
        files.insert(blob_path(&d), blob)?;
    }
    files.insert(blob_path(&sig_digest), bytes.clone())?;
    Ok(Some(
        json!({"mediaType": MANIFEST_TYPE, "digest": sig_digest,
                   "size": bytes.len(), "annotations": {REF_NAME: tag, KIND: KIND_SIGNATURES}}),
    ))
}

async fn existing_signatures(puller: &Puller, sig_ref: &Reference) -> Result<Vec<Signed>, String> {
    let tag = sig_ref.tag().unwrap_or_default();
    let Some((bytes, _)) = puller.manifest(tag, MAX_JSON_BYTES).await? else {
        return Ok(Vec::new());
    };
    let mut signed = Vec::new();
    for (d, size, signature) in simple_signing::layers(&bytes)? {
        let payload = fetch_blob(puller, &d, size, MAX_PAYLOAD_BYTES).await?;
        signed.push(Signed { payload, signature });
    }
    Ok(signed)
}

/// The manifest `reference` names (by digest, else by tag), within
/// [`MAX_JSON_BYTES`], and its digest.
async fn fetch_manifest(
    puller: &Puller,
    reference: &Reference,
) -> Result<(Vec<u8>, String), String> {
    let at = reference.digest().or(reference.tag()).unwrap_or("latest");
    puller
        .manifest(at, MAX_JSON_BYTES)
        .await
        .map_err(|e| format!("{}: {e}", transport::clip(&reference.whole())))?
        .ok_or_else(|| {
            format!(
                "{}: manifest unknown (not in the registry)",
                transport::clip(&reference.whole())
            )
        })
}

/// A blob, refused past `max` bytes or when it is not `size` bytes or
/// its digest is not `digest`.
async fn fetch_blob(puller: &Puller, digest: &str, size: u64, max: u64) -> Result<Vec<u8>, String> {
    if size > max {
        return Err(format!(
            "blob {digest}: its size {size} is more than the bound {max}"
        ));
    }
    puller.blob(digest, size).await
}

/// The files of a pull, refused past a total.
struct Budget {
    files: Files,
    used: u64,
    max: u64,
}

impl Budget {
    fn new(max: u64) -> Budget {
        Budget {
            files: Files::new(),
            used: 0,
            max,
        }
    }

    fn left(&self) -> u64 {
        self.max - self.used
    }

    fn insert(&mut self, path: String, bytes: Vec<u8>) -> Result<(), String> {
        let len = bytes.len() as u64;
        if len > self.left() {
            return Err(format!("the bundle is more than {} bytes in all", self.max));
        }
        self.used += len;
        self.files.insert(path, bytes);
        Ok(())
    }
}

/// The same repository at another tag.
fn tagged(reference: &Reference, tag: &str) -> Reference {
    Reference::with_tag(
        reference.registry().to_string(),
        reference.repository().to_string(),
        tag.to_string(),
    )
}

/// Basic credentials for `registry` from the docker config, else anonymous.
/// Credential helpers (`credsStore`, `credHelpers`) are not consulted.
fn docker_config_auth(registry: &str) -> RegistryAuth {
    let dir = std::env::var_os("DOCKER_CONFIG")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".docker")));
    let Some(text) = dir.and_then(|d| std::fs::read(d.join("config.json")).ok()) else {
        return RegistryAuth::Anonymous;
    };
    auth_from_config(&text, registry).unwrap_or(RegistryAuth::Anonymous)
}

fn auth_from_config(text: &[u8], registry: &str) -> Option<RegistryAuth> {
    use base64::Engine;
    let doc: serde_json::Value = serde_json::from_slice(text).ok()?;
    let auths = doc.get("auths")?.as_object()?;
    let entry = auths.iter().find_map(|(k, v)| {
        let host = k
            .trim_start_matches("https://")
            .trim_start_matches("http://");
        (host.split('/').next() == Some(registry)).then_some(v)
    })?;
    if let Some(encoded) = entry.get("auth").and_then(|a| a.as_str()) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()?;
        let (user, pass) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
        return Some(RegistryAuth::Basic(user.into(), pass.into()));
    }
    let user = entry.get("username")?.as_str()?;
    let pass = entry.get("password")?.as_str()?;
    Some(RegistryAuth::Basic(user.into(), pass.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_name_a_host_a_repository_and_a_tag_or_digest() {
        let r = parse_reference("registry://127.0.0.1:5000/policies/baseline:v1").unwrap();
        assert_eq!(
            (r.registry(), r.repository(), r.tag()),
            ("127.0.0.1:5000", "policies/baseline", Some("v1"))
        );
        assert_eq!(repository(&r), "127.0.0.1:5000/policies/baseline");
        let d = "sha256:f3cfc9d0dbf931d3db4685ec659b7ac68e2a578219da4aae65427886e649b06b";
        let r = parse_reference(&format!("localhost:5000/p@{d}")).unwrap();
        assert_eq!(r.digest(), Some(d));
        assert_eq!(
            tagged(&r, "sha256-x.sig").whole(),
            "localhost:5000/p:sha256-x.sig"
        );
        for bad in [
            "registry://",
            "registry://host/UPPER:1",
            "baseline",
            "a/b:c:d",
        ] {
            assert!(parse_reference(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn basic_credentials_come_from_the_docker_config() {
        let config = br#"{"auths": {"https://reg.example:5000": {"auth": "dXNlcjpwYXNz"},
            "other.example": {"username": "u", "password": "p"}}}"#;
        let basic = |r| match auth_from_config(config, r) {
            Some(RegistryAuth::Basic(u, p)) => Some((u, p)),
            _ => None,
        };
        assert_eq!(
            basic("reg.example:5000"),
            Some(("user".into(), "pass".into()))
        );
        assert_eq!(basic("other.example"), Some(("u".into(), "p".into())));
        assert_eq!(basic("nowhere.example"), None);
    }
}
