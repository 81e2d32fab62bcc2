//! One PolicyBundle's load: fetch its bundle (pulled from a registry into
//! the cache, or its path on disk resolved and confined, `paths.rs`), read
//! it (signatures verified, every blob's digest checked) and compile the
//! selected policies, off the async workers. What it built is returned,
//! not put in effect: the controller does that if the load is still current.
//!
//! Bounds: fetching and reading must finish within the fetch timeout
//! (`--policy-bundle-fetch-timeout`, default [`FETCH_TIMEOUT`]; kube has no
//! such source, the bound is ours), else the load is refused with a
//! `Timeout` condition and tried again later. At most [`FETCHES`] fetches
//! or reads run at once across all PolicyBundles (each may hold up to
//! `MAX_BUNDLE_BYTES`), and a read that overran its deadline keeps its
//! slot until it ends (a blocking read cannot be cancelled; special files
//! are never opened, so only a stalled file system can do that); at most
//! [`COMPILES`] compilations at once (CPU-bound).

use super::conditions::{refusal, step, Outcome, Step};
use super::loaded::{build, Built, CelContext, Context, Refusal};
use super::metrics::PolicyMetrics;
use super::paths::BundleRoots;
use super::source;
use super::spec::Spec;
use crate::cosign::PublicKey;
use crate::policy::bundles::registry::{Access, SCHEME};
use crate::policy::bundles::Bundle;
use crate::wasm::{ObjectReader, PluginRuntime};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// The default bound on fetching and reading one bundle.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(120);
/// Fetches and reads at once, across PolicyBundles.
pub const FETCHES: usize = 4;
/// Compilations at once, across PolicyBundles.
pub const COMPILES: usize = 2;

/// What loading a bundle needs; shared by every PolicyBundle's load.
pub struct Loader {
    pub data_dir: PathBuf,
    pub roots: BundleRoots,
    pub fetch_timeout: Duration,
    pub runtime: Arc<PluginRuntime>,
    pub reader: Arc<dyn ObjectReader>,
    pub metrics: Arc<PolicyMetrics>,
    /// How registry bundles are reached (`--insecure-registry`).
    pub access: Access,
    /// `--policy-verification-key`s: when any, every bundle must be signed by one.
    pub server_keys: Vec<PublicKey>,
    /// What bundled admission policies read and ask.
    pub cel: CelContext,
    fetches: Arc<Semaphore>,
    compiles: Arc<Semaphore>,
}

/// A bundle read and checked, with the steps that got it.
struct Read {
    verified: Option<Step>,
    bundle: Result<Bundle, Refusal>,
}

impl Loader {
    pub fn new(
        data_dir: PathBuf,
        runtime: Arc<PluginRuntime>,
        reader: Arc<dyn ObjectReader>,
        metrics: Arc<PolicyMetrics>,
    ) -> Loader {
        Loader {
            roots: BundleRoots::new(&data_dir, &[]),
            data_dir,
            fetch_timeout: FETCH_TIMEOUT,
            runtime,
            reader,
            metrics,
            access: Access::default(),
            server_keys: Vec::new(),
            cel: CelContext::default(),
            fetches: Arc::new(Semaphore::new(FETCHES)),
            compiles: Arc::new(Semaphore::new(COMPILES)),
        }
    }

    /// Loads PolicyBundle `item` (named `name`): what happened, and what
    /// was built when it succeeded.
    pub async fn load(&self, name: &str, item: &Value) -> (Outcome, Option<Built>) {
        let mut outcome = Outcome::default();
        let built = self.try_load(name, item, &mut outcome).await;
        let built = match built {
            Ok(built) => {
                let digest = outcome.loaded.clone().unwrap_or_default();
                let policies = built.entries.iter().map(|e| e.config.name.clone());
                outcome.result = Ok((digest, policies.collect()));
                Some(built)
            }
            Err(r) => {
                outcome.result = Err(r);
                None
            }
        };
        (outcome, built)
    }

    async fn try_load(
        &self,
        name: &str,
        item: &Value,
        out: &mut Outcome,
    ) -> Result<Built, Refusal> {
        let spec = Spec::of(item).map_err(|m| refusal("InvalidSpec", m))?;
        out.source = spec.bundle.clone();
        let keys = self.key_sets(item).map_err(|m| refusal("InvalidSpec", m))?;
        let fetched = self.fetch_and_read(item, &spec, keys, out);
        let read = match tokio::time::timeout(self.fetch_timeout, fetched).await {
            Ok(read) => read?,
            Err(_) => return Err(self.timed_out(&spec.bundle, out)),
        };
        out.verified = read.verified;
        let bundle = read.bundle?;
        out.loaded = Some(bundle.manifest_digest.clone());
        let _compiling = self.compiles.acquire().await;
        let ctx = (
            self.runtime.clone(),
            self.reader.clone(),
            self.metrics.clone(),
            self.cel.clone(),
        );
        let name = name.to_string();
        tokio::task::spawn_blocking(move || {
            let (runtime, reader, metrics, cel) = ctx;
            let ctx = Context {
                runtime: &runtime,
                reader,
                metrics,
                cel,
            };
            build(&ctx, &name, &spec, &bundle)
        })
        .await
        .map_err(|e| refusal("InternalError", e.to_string()))?
    }

    /// The bundle fetched and read, holding one of the [`FETCHES`] slots
    /// (kept by a blocking read until it ends, even past the deadline).
    async fn fetch_and_read(
        &self,
        item: &Value,
        spec: &Spec,
        keys: Vec<Vec<PublicKey>>,
        out: &mut Outcome,
    ) -> Result<Read, Refusal> {
        let slot = self.fetches.clone().acquire_owned().await;
        let path = self.fetch(item, &spec.bundle, &keys, out).await?;
        let shown = spec.bundle.clone();
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            read(&path, &shown, &keys)
        })
        .await
        .map_err(|e| refusal("InternalError", e.to_string()))
    }

    /// The refusal of a load whose fetch or read overran the deadline.
    fn timed_out(&self, bundle: &str, out: &mut Outcome) -> Refusal {
        let message = format!(
            "bundle {bundle}: not fetched and read within {:?} (a registry or a file system that does not answer, or too slowly); tried again later",
            self.fetch_timeout
        );
        if bundle.starts_with(SCHEME) || out.pulled.is_none() {
            out.pulled = Some(step(false, "Timeout", message.clone()));
        }
        refusal("Timeout", message)
    }

    /// The key sets a bundle must satisfy: the server's, the spec's.
    fn key_sets(&self, item: &Value) -> Result<Vec<Vec<PublicKey>>, String> {
        let spec_keys = source::spec_keys(item.get("spec").unwrap_or(&Value::Null))?;
        Ok([self.server_keys.clone(), spec_keys]
            .into_iter()
            .filter(|set| !set.is_empty())
            .collect())
    }

    /// The bundle's layout on disk: pulled (or found pinned in the cache)
    /// for a registry reference, else the path, resolved and confined.
    async fn fetch(
        &self,
        item: &Value,
        bundle: &str,
        keys: &[Vec<PublicKey>],
        out: &mut Outcome,
    ) -> Result<PathBuf, Refusal> {
        if !bundle.starts_with(SCHEME) {
            return self.on_disk(bundle, out).await;
        }
        let pin = source::pinned(item.get("status"), bundle);
        match source::pull(&self.data_dir, &self.access, bundle, pin, keys).await {
            Ok(pulled) => {
                out.pulled = Some(step(true, "Pulled", pulled.how));
                Ok(pulled.path)
            }
            Err(e) => {
                let message = format!("bundle {bundle}: {e}");
                out.pulled = Some(step(false, "PullFailed", message.clone()));
                Err(refusal("PullFailed", message))
            }
        }
    }

    /// A path bundle, its symlinks resolved and checked against the roots.
    async fn on_disk(&self, bundle: &str, out: &mut Outcome) -> Result<PathBuf, Refusal> {
        let (roots, named) = (self.roots.clone(), bundle.to_string());
        let resolved = tokio::task::spawn_blocking(move || roots.resolve(&named))
            .await
            .map_err(|e| refusal("InternalError", e.to_string()))?;
        match resolved {
            Ok(path) => {
                let m = format!("bundle {bundle} is read from disk");
                out.pulled = Some(step(true, "OnDisk", m));
                Ok(path)
            }
            Err((reason, message)) => {
                out.pulled = Some(step(false, reason, message.clone()));
                Err(refusal(reason, message))
            }
        }
    }
}

/// Verifies and reads a bundle (file reads, digests: blocking).
fn read(path: &Path, shown: &str, keys: &[Vec<PublicKey>]) -> Read {
    let verified = verify(path, shown, keys);
    if let Some(Step {
        ok: false,
        reason,
        message,
    }) = &verified
    {
        let bundle = Err(refusal(reason, message.clone()));
        return Read { verified, bundle };
    }
    let bundle =
        crate::policy::bundles::load(path).map_err(|e| refusal("InvalidBundle", e.to_string()));
    Read { verified, bundle }
}

/// Each key set (one of whose keys must have signed the bundle) checked;
/// None when no verification is asked for.
fn verify(path: &Path, shown: &str, keys: &[Vec<PublicKey>]) -> Option<Step> {
    if keys.is_empty() {
        let m = "no public keys are configured: signatures are not checked".to_string();
        return Some(step(true, "NotRequired", m));
    }
    for set in keys {
        if let Err(e) = crate::policy::bundles::signatures::verify(path, set) {
            let reason = match e.is_unsigned() {
                true => "Unsigned",
                false => "SignatureInvalid",
            };
            return Some(step(false, reason, e.shown_as(shown).to_string()));
        }
    }
    Some(step(
        true,
        "SignatureVerified",
        format!("bundle {shown}: signed by a trusted key"),
    ))
}
