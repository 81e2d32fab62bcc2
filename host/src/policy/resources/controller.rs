//! The PolicyBundle controller, run in every replica (each loads the same
//! bundles into its own chain; on etcd, not only in the leader): it lists
//! and watches the PolicyBundles and, for each new generation, loads its
//! bundle (`load.rs`) and swaps what was built into the `PolicySet`. A
//! bundle that cannot be loaded leaves the previous good state of that
//! PolicyBundle (or none) in effect; its status says why. A refused one is
//! tried again every [`RETRY`] (a bundle copied in after its PolicyBundle
//! was created is picked up).
//!
//! Each load runs in a task of its own, so a slow or hanging source (a
//! trickling registry, a huge file) never delays another PolicyBundle's
//! load, nor the watch: a deleted PolicyBundle's policies leave the chain
//! as soon as the deletion is seen, and its load in progress is dropped. A
//! load only puts its result in effect if it is still the PolicyBundle's
//! current one (not superseded by a newer generation, nor deleted).

use super::conditions::{desired_status, Outcome, MAX_MESSAGE};
use super::load::Loader;
use super::loaded::{Built, PolicySet};
use super::paths::BundleRoots;
use crate::apimachinery::conditions::same_status;
use crate::apimachinery::meta;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::policy_bundle::{GROUP, PLURAL, VERSION};
use crate::catalogue::ResourceInfo;
use crate::cosign::PublicKey;
use crate::policy::bundles::registry::Access;
use crate::registry::NoAdmission;
use crate::registry::{ListQuery, Registry, WriteOptions};
use crate::wasm::{ObjectReader, PluginRuntime};
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// How often a refused bundle is tried again.
pub const RETRY: Duration = Duration::from_secs(10);

pub struct Controller {
    pub registry: Registry,
    pub resource: ResourceInfo,
    pub set: Arc<PolicySet>,
    loader: Loader,
    /// Per PolicyBundle: the (uid, generation) last acted on, and when it
    /// was refused (None: in effect).
    seen: Mutex<HashMap<String, (Key, Option<Instant>)>>,
    /// Per PolicyBundle: its load in progress (or last finished).
    workers: Mutex<HashMap<String, Worker>>,
    epochs: AtomicU64,
}

type Key = (String, i64);

/// A PolicyBundle's load task: which generation, and which start (epoch).
struct Worker {
    key: Key,
    epoch: u64,
    task: JoinHandle<()>,
}

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
        let loader = Loader::new(data_dir, runtime, reader, set.metrics.clone());
        Some(Controller {
            registry,
            resource,
            set,
            loader,
            seen: Mutex::default(),
            workers: Mutex::default(),
            epochs: AtomicU64::new(0),
        })
    }

    /// Registry access and the keys every bundle must be signed with.
    pub fn with_registry(mut self, access: Access, server_keys: Vec<PublicKey>) -> Controller {
        self.loader.access = access;
        self.loader.server_keys = server_keys;
        self
    }

    /// Where bundled admission policies read (params, namespaces) and who
    /// answers their `authorizer` checks.
    pub fn with_admission_policies(mut self, cel: super::loaded::CelContext) -> Controller {
        self.loader.cel = cel;
        self
    }

    /// Where bundle paths may lead (`--policy-bundle-dir`) and how long a
    /// fetch and read may take (`--policy-bundle-fetch-timeout`).
    pub fn with_sources(mut self, roots: BundleRoots, fetch_timeout: Duration) -> Controller {
        self.loader.roots = roots;
        self.loader.fetch_timeout = fetch_timeout;
        self
    }

    /// Follows the PolicyBundles until the process ends.
    pub fn spawn(self) -> JoinHandle<()> {
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

    /// Nothing of the deleted PolicyBundles in effect, and a load started
    /// for every PolicyBundle whose generation is new or due for a retry.
    /// Never waits for a load.
    async fn sync(self: &Arc<Self>) -> ApiResult<()> {
        let items = self
            .registry
            .list(&self.resource, None, &ListQuery::default())
            .await?
            .items;
        let names: HashSet<String> = items
            .iter()
            .filter_map(meta::name)
            .map(str::to_string)
            .collect();
        self.forget_deleted(&names);
        for item in items {
            self.start_if_due(item);
        }
        Ok(())
    }

    /// Drops the deleted PolicyBundles' policies and loads in progress.
    fn forget_deleted(&self, names: &HashSet<String>) {
        let mut workers = self.workers();
        workers.retain(|name, w| {
            let keep = names.contains(name);
            if !keep {
                w.task.abort();
            }
            keep
        });
        for gone in self.set.bundles().iter().filter(|b| !names.contains(*b)) {
            self.set.remove(gone);
            tracing::info!(policy_bundle = %gone, "policy bundle removed");
        }
        drop(workers);
        if let Ok(mut seen) = self.seen.lock() {
            seen.retain(|n, _| names.contains(n));
        }
    }

    /// Starts `item`'s load unless one for its generation is running or it
    /// is not due; a load of an older generation is dropped.
    fn start_if_due(self: &Arc<Self>, item: Value) {
        let name = meta::name(&item).unwrap_or_default().to_string();
        let key = key_of(&item);
        let mut workers = self.workers();
        if let Some(w) = workers.get(&name).filter(|w| !w.task.is_finished()) {
            if w.key == key {
                return;
            }
            w.task.abort();
        } else if !self.due(&name, &key) {
            return;
        }
        let epoch = self.epochs.fetch_add(1, Ordering::Relaxed);
        let this = self.clone();
        let task = tokio::spawn(async move { this.reconcile(&item, epoch).await });
        workers.insert(name, Worker { key, epoch, task });
    }

    fn workers(&self) -> MutexGuard<'_, HashMap<String, Worker>> {
        self.workers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether generation `key` of `name` is new, or was refused a while ago.
    fn due(&self, name: &str, key: &Key) -> bool {
        let Ok(seen) = self.seen.lock() else {
            return true;
        };
        match seen.get(name) {
            Some((seen_key, refused)) if seen_key == key => {
                refused.is_some_and(|at| at.elapsed() >= RETRY)
            }
            _ => true,
        }
    }

    async fn reconcile(&self, item: &Value, epoch: u64) {
        let name = meta::name(item).unwrap_or_default().to_string();
        let (outcome, built) = self.loader.load(&name, item).await;
        if let Some(built) = built {
            if !self.commit(&name, epoch, built) {
                return;
            }
        }
        let refused = match &outcome.result {
            Ok((digest, policies)) => {
                tracing::info!(policy_bundle = %name, %digest, ?policies, "policy bundle loaded");
                None
            }
            Err(r) => {
                let message = crate::policy::bundles::clip(&r.message, MAX_MESSAGE);
                tracing::warn!(policy_bundle = %name, reason = r.reason, %message, "policy bundle refused");
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

    /// Puts `built` in effect if load `epoch` is still `name`'s current
    /// one (under the lock a deletion takes); false when it is not.
    fn commit(&self, name: &str, epoch: u64, built: Built) -> bool {
        let workers = self.workers();
        let current = workers.get(name).is_some_and(|w| w.epoch == epoch);
        if current {
            self.set.load(name, built);
        }
        current
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
            tracking: None,
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
