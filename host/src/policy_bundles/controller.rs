//! The PolicyBundle controller, run in every replica (each loads the same
//! bundles into its own chain; on etcd, not only in the leader): it lists
//! and watches the PolicyBundles and, for each new generation, loads its
//! bundle (`bundles::load`: digests, shape, worlds), compiles the selected
//! policies off the async workers and swaps them into the `PolicySet`. A
//! bundle that cannot be loaded leaves the previous good state of that
//! PolicyBundle (or none) in effect; its status says why. A refused one is
//! tried again every [`RETRY`] (a bundle copied in after its PolicyBundle
//! was created is picked up). Deleted PolicyBundles' policies stop running.

use super::loaded::{build, Built, Context, PolicySet, Refusal};
use super::resource::{GROUP, PLURAL, VERSION};
use super::source;
use super::spec::{bundle_path, Spec};
use crate::admission::NoAdmission;
use crate::bundles::registry::{Access, SCHEME};
use crate::catalogue::ResourceInfo;
use crate::controllers::crd_names::{same_status, set_condition};
use crate::cosign::PublicKey;
use crate::plugins::{ObjectReader, PluginRuntime};
use crate::registry::{meta, ListQuery, Registry, WriteOptions};
use crate::status::{ApiError, ApiResult};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a refused bundle is tried again.
pub const RETRY: Duration = Duration::from_secs(10);

pub struct Controller {
    pub registry: Registry,
    pub resource: ResourceInfo,
    pub data_dir: PathBuf,
    pub runtime: Arc<PluginRuntime>,
    pub reader: Arc<dyn ObjectReader>,
    pub set: Arc<PolicySet>,
    /// How registry bundles are reached (`--insecure-registry`).
    pub access: Access,
    /// `--policy-verification-key`s: when any, every bundle must be signed by one.
    pub server_keys: Vec<PublicKey>,
    /// Per PolicyBundle: the (uid, generation) last acted on, and when it
    /// was refused (None: in effect).
    seen: Mutex<HashMap<String, (Key, Option<Instant>)>>,
}

type Key = (String, i64);

impl Controller {
    /// None when the catalogue does not serve PolicyBundles.
    pub fn new(
        registry: Registry,
        catalogue: &crate::catalogue::Catalogue,
        data_dir: PathBuf,
        runtime: Arc<PluginRuntime>,
        reader: Arc<dyn ObjectReader>,
        set: Arc<PolicySet>,
    ) -> Option<Controller> {
        let resource = catalogue.lookup(GROUP, VERSION, PLURAL)?.clone();
        Some(Controller {
            registry,
            resource,
            data_dir,
            runtime,
            reader,
            set,
            access: Access::default(),
            server_keys: Vec::new(),
            seen: Mutex::default(),
        })
    }

    /// Registry access and the keys every bundle must be signed with.
    pub fn with_registry(mut self, access: Access, server_keys: Vec<PublicKey>) -> Controller {
        self.access = access;
        self.server_keys = server_keys;
        self
    }

    /// Follows the PolicyBundles until the process ends.
    pub fn spawn(self) -> tokio::task::JoinHandle<()> {
        let this = Arc::new(self);
        tokio::spawn(async move {
            loop {
                if let Err(e) = this.follow().await {
                    tracing::warn!(error = %e.message, "PolicyBundle watch restarting");
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        })
    }

    /// Syncs now, on every change, and every [`RETRY`], until the watch ends.
    async fn follow(self: &Arc<Self>) -> ApiResult<()> {
        let internal = |e: crate::storage::StorageError| ApiError::internal(e.to_string());
        let storage = &self.registry.storage;
        let prefix = crate::registry::keys::prefix(&self.resource, None);
        let revision = storage.current_revision().await.map_err(internal)?;
        let mut events = storage.watch(&prefix, revision).await.map_err(internal)?;
        let mut tick = tokio::time::interval(RETRY);
        loop {
            self.sync().await?;
            tokio::select! {
                ev = events.next() => match ev {
                    Some(ev) => { ev.map_err(internal)?; }
                    None => return Ok(()),
                },
                _ = tick.tick() => {}
            }
        }
    }

    /// Every PolicyBundle's current generation in effect (or refused), and
    /// nothing of the deleted ones.
    async fn sync(&self) -> ApiResult<()> {
        let items = self
            .registry
            .list(&self.resource, None, &ListQuery::default())
            .await?
            .items;
        let names: Vec<&str> = items.iter().filter_map(meta::name).collect();
        for gone in self
            .set
            .bundles()
            .iter()
            .filter(|b| !names.contains(&b.as_str()))
        {
            self.set.remove(gone);
            tracing::info!(policy_bundle = %gone, "policy bundle removed");
        }
        if let Ok(mut seen) = self.seen.lock() {
            seen.retain(|n, _| names.contains(&n.as_str()));
        }
        for item in &items {
            if self.due(item) {
                self.reconcile(item).await;
            }
        }
        Ok(())
    }

    /// Whether `item`'s generation is new, or was refused a while ago.
    fn due(&self, item: &Value) -> bool {
        let Ok(seen) = self.seen.lock() else {
            return true;
        };
        match seen.get(meta::name(item).unwrap_or_default()) {
            Some((key, refused)) if *key == key_of(item) => {
                refused.is_some_and(|at| at.elapsed() >= RETRY)
            }
            _ => true,
        }
    }

    async fn reconcile(&self, item: &Value) {
        let name = meta::name(item).unwrap_or_default().to_string();
        let outcome = self.load(&name, item).await;
        let refused = match &outcome.result {
            Ok((digest, policies)) => {
                tracing::info!(policy_bundle = %name, %digest, ?policies, "policy bundle loaded");
                None
            }
            Err(r) => {
                tracing::warn!(policy_bundle = %name, reason = r.reason, message = %r.message, "policy bundle refused");
                Some(Instant::now())
            }
        };
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(name.clone(), (key_of(item), refused));
        }
        if let Err(e) = self.write_status(&name, item, &outcome).await {
            tracing::warn!(policy_bundle = %name, error = %e.message, "PolicyBundle status not written");
        }
    }

    /// Pulls (a registry bundle), verifies, loads and builds `item`'s
    /// bundle off the async workers and puts it in effect.
    async fn load(&self, name: &str, item: &Value) -> Outcome {
        let mut outcome = Outcome::default();
        outcome.result = self.try_load(name, item, &mut outcome).await;
        outcome
    }

    async fn try_load(
        &self,
        name: &str,
        item: &Value,
        out: &mut Outcome,
    ) -> Result<(String, Vec<String>), Refusal> {
        let spec = Spec::of(item).map_err(|m| refusal("InvalidSpec", m))?;
        out.source = spec.bundle.clone();
        let keys = self.key_sets(item).map_err(|m| refusal("InvalidSpec", m))?;
        let path = self.fetch(item, &spec.bundle, &keys, out).await?;
        let (runtime, reader) = (self.runtime.clone(), self.reader.clone());
        let metrics = self.set.metrics.clone();
        let name_owned = name.to_string();
        let shown = spec.bundle.clone();
        let done = tokio::task::spawn_blocking(move || {
            let ctx = Context {
                runtime: &runtime,
                reader,
                metrics,
            };
            load_blocking(&path, &shown, &keys, &ctx, &name_owned, &spec)
        })
        .await
        .map_err(|e| refusal("InternalError", e.to_string()))?;
        out.verified = done.verified;
        out.loaded = done.loaded;
        let built = done.built?;
        let digest = out.loaded.clone().unwrap_or_default();
        let policies = built
            .entries
            .iter()
            .map(|e| e.config.name.clone())
            .collect();
        self.set.load(name, built);
        Ok((digest, policies))
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
    /// for a registry reference, else the path.
    async fn fetch(
        &self,
        item: &Value,
        bundle: &str,
        keys: &[Vec<PublicKey>],
        out: &mut Outcome,
    ) -> Result<PathBuf, Refusal> {
        if !bundle.starts_with(SCHEME) {
            out.pulled = Some(step(
                true,
                "OnDisk",
                format!("bundle {bundle} is read from disk"),
            ));
            return bundle_path(&self.data_dir, bundle).map_err(|m| refusal("InvalidSpec", m));
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

    async fn write_status(&self, name: &str, item: &Value, outcome: &Outcome) -> ApiResult<()> {
        let generation = key_of(item).1;
        let status = desired_status(item.get("status"), generation, outcome);
        if item.get("status").is_some_and(|s| same_status(s, &status)) {
            return Ok(());
        }
        let opts = WriteOptions {
            dry_run: false,
            admit: &NoAdmission,
            propagation: Default::default(),
        };
        let set = move |mut obj: Value| {
            obj["status"] = status.clone();
            Ok(obj)
        };
        match self
            .registry
            .guaranteed_update(&self.resource, None, name, opts, &set)
            .await
        {
            Err(e) if e.code == 404 => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

/// What the blocking part of a load found: the signature check, the
/// digest of the bundle once read (None: not read), the built policies.
struct Blocking {
    verified: Option<Step>,
    loaded: Option<String>,
    built: Result<Built, Refusal>,
}

/// Verifies, reads and compiles a bundle (CPU-heavy: off the async workers).
fn load_blocking(
    path: &std::path::Path,
    shown: &str,
    keys: &[Vec<PublicKey>],
    ctx: &Context<'_>,
    name: &str,
    spec: &Spec,
) -> Blocking {
    let verified = verify(path, shown, keys);
    if let Some(Step {
        ok: false,
        reason,
        message,
    }) = &verified
    {
        let built = Err(refusal(reason, message.clone()));
        return Blocking {
            verified,
            loaded: None,
            built,
        };
    }
    let bundle = match crate::bundles::load(path) {
        Ok(bundle) => bundle,
        Err(e) => {
            let reason = match path.exists() {
                true => "InvalidBundle",
                false => "BundleNotFound",
            };
            let built = Err(refusal(reason, format!("{e:#}")));
            return Blocking {
                verified,
                loaded: None,
                built,
            };
        }
    };
    Blocking {
        verified,
        loaded: Some(bundle.manifest_digest.clone()),
        built: build(ctx, name, spec, &bundle),
    }
}

fn refusal(reason: &'static str, message: String) -> Refusal {
    Refusal { reason, message }
}

/// One step's condition (Pulled, Verified).
#[derive(Clone, Debug)]
pub struct Step {
    pub ok: bool,
    pub reason: &'static str,
    pub message: String,
}

fn step(ok: bool, reason: &'static str, message: String) -> Step {
    Step {
        ok,
        reason,
        message,
    }
}

/// What a load did: its steps and its result (the digest and policies in effect).
pub struct Outcome {
    pub source: String,
    pub pulled: Option<Step>,
    pub verified: Option<Step>,
    /// The digest of the bundle read and checked (None: not read).
    pub loaded: Option<String>,
    pub result: Result<(String, Vec<String>), Refusal>,
}

impl Default for Outcome {
    fn default() -> Outcome {
        Outcome {
            source: String::new(),
            pulled: None,
            verified: None,
            loaded: None,
            result: Err(refusal("InternalError", "not loaded".into())),
        }
    }
}

/// Each key set (one of whose keys must have signed the bundle) checked;
/// None when no verification is asked for.
fn verify(path: &std::path::Path, shown: &str, keys: &[Vec<PublicKey>]) -> Option<Step> {
    if keys.is_empty() {
        let m = "no public keys are configured: signatures are not checked".to_string();
        return Some(step(true, "NotRequired", m));
    }
    for set in keys {
        if let Err(e) = crate::bundles::signatures::verify(path, set) {
            let message = e.replacen(
                &format!("bundle {}", path.display()),
                &format!("bundle {shown}"),
                1,
            );
            let reason = match message.contains("no signature found") {
                true => "Unsigned",
                false => "SignatureInvalid",
            };
            return Some(step(false, reason, message));
        }
    }
    Some(step(
        true,
        "SignatureVerified",
        format!("bundle {shown}: signed by a trusted key"),
    ))
}

fn key_of(item: &Value) -> Key {
    let uid = item
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let generation = item
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    (uid.to_string(), generation)
}

/// The status after a load of `generation`: Pulled, Verified, Loaded
/// (the bundle read, its digests checked), Compiled (the selected policies
/// built; Unknown when the bundle was not read) and Ready conditions; after a refusal, the digest and policies of the state
/// still in effect.
pub fn desired_status(old: Option<&Value>, generation: i64, outcome: &Outcome) -> Value {
    let mut status = old.cloned().unwrap_or(json!({}));
    status["observedGeneration"] = json!(generation);
    let condition = |kind: &str, ok: bool, reason: &str, message: &str| {
        let verdict = match (ok, reason) {
            (true, "NotRequired" | "BundleNotRead") => "Unknown",
            (true, _) => "True",
            (false, _) => "False",
        };
        json!({"type": kind, "status": verdict,
               "reason": reason, "message": message,
               "lastTransitionTime": meta::now(), "observedGeneration": generation})
    };
    for (kind, s) in [("Pulled", &outcome.pulled), ("Verified", &outcome.verified)] {
        if let Some(s) = s {
            set_condition(&mut status, condition(kind, s.ok, s.reason, &s.message));
        }
    }
    let loaded = match &outcome.loaded {
        Some(digest) => step(
            true,
            "Loaded",
            format!("bundle {digest}: every blob's digest checked"),
        ),
        None => match &outcome.result {
            Err(r) => step(false, r.reason, r.message.clone()),
            Ok(_) => step(true, "Loaded", String::new()),
        },
    };
    set_condition(
        &mut status,
        condition("Loaded", loaded.ok, loaded.reason, &loaded.message),
    );
    let compiled = match (&outcome.result, &outcome.loaded) {
        (Ok((_, policies)), _) => step(
            true,
            "Compiled",
            format!("compiled: {}", policies.join(", ")),
        ),
        (Err(r), Some(_)) => step(false, r.reason, r.message.clone()),
        (Err(_), None) => step(true, "BundleNotRead", "the bundle was not read".to_string()),
    };
    set_condition(
        &mut status,
        condition("Compiled", compiled.ok, compiled.reason, &compiled.message),
    );
    match &outcome.result {
        Ok((digest, policies)) => {
            status["digest"] = json!(digest);
            status["source"] = json!(outcome.source);
            status["policies"] = json!(policies);
            let ready = format!("in effect: {}", policies.join(", "));
            set_condition(
                &mut status,
                condition("Ready", true, "PoliciesInEffect", &ready),
            );
        }
        Err(r) => {
            let kept = match status.get("digest").and_then(Value::as_str) {
                Some(d) => format!("{}; the previous bundle ({d}) stays in effect", r.message),
                None => format!("{}; none of its policies are in effect", r.message),
            };
            set_condition(&mut status, condition("Ready", false, r.reason, &kept));
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conditions(status: &Value) -> Vec<(String, String, String)> {
        status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap().to_string();
                (s("type"), s("status"), s("reason"))
            })
            .collect()
    }

    #[test]
    fn a_refusal_keeps_the_previous_bundle_and_says_so() {
        let good = Outcome {
            loaded: Some("sha256:aa".to_string()),
            result: Ok(("sha256:aa".to_string(), vec!["b/p".to_string()])),
            ..Outcome::default()
        };
        let first = desired_status(None, 1, &good);
        assert_eq!(
            conditions(&first),
            [
                ("Loaded".into(), "True".into(), "Loaded".into()),
                ("Compiled".into(), "True".into(), "Compiled".into()),
                ("Ready".into(), "True".into(), "PoliciesInEffect".into())
            ]
        );
        let uncompiled = Outcome {
            loaded: Some("sha256:cc".to_string()),
            result: Err(refusal("InvalidSettings", "policy p: settings: bad".into())),
            ..Outcome::default()
        };
        assert_eq!(
            conditions(&desired_status(Some(&first), 2, &uncompiled)),
            [
                ("Loaded".into(), "True".into(), "Loaded".into()),
                ("Compiled".into(), "False".into(), "InvalidSettings".into()),
                ("Ready".into(), "False".into(), "InvalidSettings".into())
            ]
        );
        let bad = Outcome {
            result: Err(refusal(
                "InvalidBundle",
                "bundle x.tar: blob sha256:bb: tampered".into(),
            )),
            ..Outcome::default()
        };
        let second = desired_status(Some(&first), 2, &bad);
        assert_eq!(second["observedGeneration"], 2);
        assert_eq!(second["digest"], "sha256:aa");
        assert_eq!(
            conditions(&second)[1],
            ("Compiled".into(), "Unknown".into(), "BundleNotRead".into())
        );
        assert_eq!(
            second["conditions"][2]["message"],
            "bundle x.tar: blob sha256:bb: tampered; the previous bundle (sha256:aa) stays in effect"
        );
        assert_eq!(second["conditions"][2]["reason"], "InvalidBundle");
        let never = desired_status(None, 1, &bad);
        assert!(never["conditions"][2]["message"]
            .as_str()
            .unwrap()
            .ends_with("none of its policies are in effect"));
    }
}
