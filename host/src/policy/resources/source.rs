//! Where a PolicyBundle's bundle comes from, and what must have signed it.
//!
//! `spec.bundle` is a path (under `<data-dir>/bundles/` when relative) or a
//! registry reference `registry://host[:port]/repo:tag` (or `@sha256:...`),
//! as Kubewarden's `module:`. A registry bundle is pulled with its cosign
//! signatures into `<data-dir>/bundles/oci/sha256-<hex>/` (an OCI image
//! layout) and pinned: the status records the digest and the `bundle` it
//! came from, and until `bundle` changes a retry or a restart loads that
//! digest (from the cache, else pulled by digest), so a moved tag never
//! changes policy silently.
//!
//! Verification: the server's `--policy-verification-key`s and the spec's
//! `verification.publicKeys` are each a set of which one key must have
//! signed the bundle (cosign key-based signatures, `crate::cosign`).

use crate::cosign::PublicKey;
use crate::policy::bundles::registry::{self, Access, Registry};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a registry bundle resolved to.
pub struct Pulled {
    pub path: PathBuf,
    pub digest: String,
    /// How it was obtained, for the Pulled condition.
    pub how: String,
}

/// The digest a PolicyBundle's status pins for `bundle`, if any.
pub fn pinned(status: Option<&Value>, bundle: &str) -> Option<String> {
    let status = status?;
    let source = status.get("source").and_then(Value::as_str)?;
    match source == bundle {
        true => status
            .get("digest")
            .and_then(Value::as_str)
            .map(str::to_string),
        false => None,
    }
}

/// The cache directory of `digest`.
pub fn cache_dir(data_dir: &Path, digest: &str) -> PathBuf {
    data_dir
        .join("bundles")
        .join("oci")
        .join(digest.replacen(':', "-", 1))
}

/// Pulls `bundle` (a `registry://` reference) into the cache, or finds it
/// there when `pin` names a cached digest that still verifies with `keys`.
pub async fn pull(
    data_dir: &Path,
    access: &Access,
    bundle: &str,
    pin: Option<String>,
    keys: &[Vec<PublicKey>],
) -> Result<Pulled, String> {
    let reference = registry::parse_reference(bundle)?;
    if let Some(digest) = &pin {
        let path = cache_dir(data_dir, digest);
        let (cached, keys) = (path.clone(), keys.to_vec());
        // File reads and signature checks: off the async workers.
        let usable = tokio::task::spawn_blocking(move || {
            cached.exists()
                && keys
                    .iter()
                    .all(|set| crate::policy::bundles::signatures::verify(&cached, set).is_ok())
        })
        .await
        .unwrap_or(false);
        if usable {
            let how = format!("{digest} pinned, from the cache");
            return Ok(Pulled {
                path,
                digest: digest.clone(),
                how,
            });
        }
    }
    let by = match &pin {
        Some(d) => oci_client::Reference::with_digest(
            reference.registry().to_string(),
            reference.repository().to_string(),
            d.clone(),
        ),
        None => reference.clone(),
    };
    let (digest, files) = Registry::new(access.clone()).pull(&by).await?;
    let path = cache_dir(data_dir, &digest);
    let target = path.clone();
    tokio::task::spawn_blocking(move || write_cache(&target, &files))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("caching {digest}: {e:#}"))?;
    let how = match pin {
        Some(_) => format!(
            "{digest} pinned, pulled by digest from {}",
            registry::repository(&reference)
        ),
        None => format!("{digest} pulled from {}", by.whole()),
    };
    Ok(Pulled { path, digest, how })
}

/// Writes the layout beside its place, then renames it in (a reader never sees half of it).
fn write_cache(path: &Path, files: &crate::policy::bundles::layout::Files) -> anyhow::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let staging = parent.join(format!(".staging-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&staging)?;
    crate::policy::bundles::layout::write(&staging, files)?;
    let _ = std::fs::remove_dir_all(path);
    std::fs::rename(&staging, path)?;
    Ok(())
}

/// The spec's `verification.publicKeys`, parsed.
pub fn spec_keys(spec: &Value) -> Result<Vec<PublicKey>, String> {
    let Some(keys) = spec
        .pointer("/verification/publicKeys")
        .and_then(Value::as_array)
    else {
        return Ok(Vec::new());
    };
    keys.iter()
        .enumerate()
        .map(|(i, k)| {
            PublicKey::from_pem(k.as_str().unwrap_or_default())
                .map_err(|e| format!("spec.verification.publicKeys[{i}]: {e}"))
        })
        .collect()
}

/// Reads the server's `--policy-verification-key` files.
pub fn read_server_keys(paths: &[PathBuf]) -> anyhow::Result<Vec<PublicKey>> {
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p)
                .map_err(|e| anyhow::anyhow!("--policy-verification-key {}: {e}", p.display()))?;
            PublicKey::from_pem(&text)
                .map_err(|e| anyhow::anyhow!("--policy-verification-key {}: {e}", p.display()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_digest_stays_pinned_until_the_bundle_changes() {
        let status = json!({"digest": "sha256:aa", "source": "registry://r:5000/p:v1"});
        assert_eq!(
            pinned(Some(&status), "registry://r:5000/p:v1").as_deref(),
            Some("sha256:aa")
        );
        assert_eq!(pinned(Some(&status), "registry://r:5000/p:v2"), None);
        assert_eq!(pinned(None, "registry://r:5000/p:v1"), None);
        assert_eq!(
            cache_dir(Path::new("/d"), "sha256:aa"),
            Path::new("/d/bundles/oci/sha256-aa")
        );
    }

    #[test]
    fn spec_keys_name_the_bad_one() {
        let e = spec_keys(&json!({"verification": {"publicKeys": ["nope"]}})).unwrap_err();
        assert!(e.starts_with("spec.verification.publicKeys[0]: "), "{e}");
        assert!(spec_keys(&json!({})).unwrap().is_empty());
    }
}
