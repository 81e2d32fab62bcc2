//! A watch cache in front of any [`Storage`], like kube-apiserver's cacher.
//!
//! A background reflector lists everything under a prefix ("/registry/") at
//! some revision, then follows the inner store's watch from it, keeping the
//! latest value of every live key and a bounded ring of recent events.
//!
//! Served from memory (while synced):
//! - `range`/`count` at the latest revision, after waiting (bounded by
//!   [`CacheOptions::sync_wait`]) until the cache has caught up with the
//!   inner store's current revision: consistent reads, read-your-writes.
//!   When the store's revision moved for keys outside the prefix (etcd's
//!   compaction marker, other tenants), no event would ever bring the cache
//!   there, so it asks the store for a progress report (etcd's
//!   RequestProgress, as kube-apiserver does);
//! - `range` at a past revision the ring still covers (at or above both the
//!   ring's base and the store's compaction point);
//! - `watch` from a revision the ring covers: ring replay, then live events
//!   through a bounded per-watcher channel; a watcher that falls behind is cut
//!   off with [`StorageError::Unavailable`].
//!
//! Everything else (writes, `get`, revisions, compaction, readiness, requests
//! outside the prefix, revisions the ring no longer covers, and every request
//! while the cache is not synced) is delegated to the inner store.

mod live;
mod memory;
pub mod metrics;
pub use memory::MemoryUse;
mod read;
mod reflector;
mod state;
#[cfg(test)]
mod tests;
mod watchers;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::storage::{
    Event, KeyValue, ProgressRequest, RangeRequest, RangeResult, Revision, Storage, StorageError,
    StorageResult, WatchStream,
};
use read::Selector;
use state::CacheState;

/// How long a latest read waits for events before asking for progress.
const PROGRESS_PAUSE: Duration = Duration::from_millis(10);

/// Tunables of [`CachedStorage::start_with`].
#[derive(Clone, Debug)]
pub struct CacheOptions {
    /// Keys cached; requests for other prefixes are delegated.
    pub prefix: String,
    /// Recent events kept for watch replay and reads at past revisions.
    pub ring_capacity: usize,
    /// Events buffered per watcher before it is cut off.
    pub watcher_capacity: usize,
    /// How long a latest read waits for the cache to catch up before it
    /// falls back to the inner store.
    pub sync_wait: Duration,
    /// Page size of the initial list.
    pub list_page: usize,
    /// Pause before retrying a failed list or watch of the inner store.
    pub retry_backoff: Duration,
    /// How often the inner store's compaction point is re-read (compactions
    /// through the cache are seen at once).
    pub compaction_poll: Duration,
}

impl Default for CacheOptions {
    fn default() -> Self {
        CacheOptions {
            prefix: "/registry/".into(),
            ring_capacity: 10_000,
            watcher_capacity: 1024,
            sync_wait: Duration::from_secs(3),
            list_page: 1000,
            retry_backoff: Duration::from_millis(500),
            compaction_poll: Duration::from_secs(10),
        }
    }
}

/// Counters of how requests were served.
#[derive(Debug, Default)]
pub struct CacheStats {
    /// Range/count/watch calls answered from memory.
    pub served_from_memory: AtomicU64,
    /// Range/count/watch calls passed to the inner store.
    pub delegated: AtomicU64,
}

/// State shared by the [`CachedStorage`] handle and its reflector task.
struct Shared {
    inner: Arc<dyn Storage>,
    options: CacheOptions,
    state: RwLock<CacheState>,
    /// The cache's revision, for catch-up waits.
    revision: watch::Sender<Revision>,
    /// Asks the current inner watch for a progress report, if it can.
    progress: Mutex<Option<ProgressRequest>>,
    stats: CacheStats,
    metrics: Arc<metrics::CacheMetrics>,
}

impl Shared {
    fn read_state(&self) -> RwLockReadGuard<'_, CacheState> {
        // Cache updates do not panic half-way in practice; if one did, the
        // reflector task is gone and `synced` stays as it was, so keep going.
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_state(&self) -> RwLockWriteGuard<'_, CacheState> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn set_synced(&self, synced: bool) {
        self.write_state().synced = synced;
    }

    /// Applies one inner watch event and wakes catch-up waiters.
    fn apply(&self, event: Event) {
        self.metrics.received(&event.kv.key, event.revision());
        let revision = {
            let mut state = self.write_state();
            state.apply(event);
            state.revision
        };
        self.revision.send_replace(revision);
    }

    /// Applies a progress report of the inner watch and wakes waiters.
    fn progress(&self, reported: Revision) {
        let revision = {
            let mut state = self.write_state();
            state.progress(reported);
            state.revision
        };
        self.revision.send_replace(revision);
    }

    fn set_progress_request(&self, request: Option<ProgressRequest>) {
        *self.progress.lock().unwrap_or_else(PoisonError::into_inner) = request;
    }

    /// Asks the inner watch for a progress report; false if it cannot.
    async fn request_progress(&self) -> bool {
        let request = self
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match request {
            Some(request) => {
                request().await;
                true
            }
            None => false,
        }
    }

    /// Raises the known compaction point to `compacted`.
    fn note_compacted(&self, compacted: Revision) {
        let mut state = self.write_state();
        state.compacted = state.compacted.max(compacted);
    }

    fn count_memory(&self) {
        self.stats
            .served_from_memory
            .fetch_add(1, Ordering::Relaxed);
    }

    fn count_delegated(&self) {
        self.stats.delegated.fetch_add(1, Ordering::Relaxed);
    }
}

/// A [`Storage`] decorator that serves reads and watches from memory.
/// Dropping it stops its reflector task and ends its watchers' streams.
pub struct CachedStorage {
    shared: Arc<Shared>,
    reflector: JoinHandle<()>,
}

impl Drop for CachedStorage {
    fn drop(&mut self) {
        self.reflector.abort();
    }
}

impl CachedStorage {
    /// Starts caching `inner` with default options. Must be called within a
    /// tokio runtime; until the first list completes, requests are delegated.
    pub fn start(inner: Arc<dyn Storage>) -> CachedStorage {
        Self::start_with(inner, CacheOptions::default())
    }

    /// Starts caching `inner` with `options`. Must be called within a tokio runtime.
    pub fn start_with(inner: Arc<dyn Storage>, options: CacheOptions) -> CachedStorage {
        let state = CacheState::new(options.ring_capacity, options.watcher_capacity);
        let shared = Arc::new(Shared {
            inner,
            options,
            state: RwLock::new(state),
            revision: watch::Sender::new(0),
            progress: Mutex::new(None),
            stats: CacheStats::default(),
            metrics: Arc::default(),
        });
        let reflector = tokio::spawn(reflector::run(shared.clone()));
        CachedStorage { shared, reflector }
    }

    /// Waits up to `timeout` for the cache to be synced; true if it is.
    pub async fn wait_synced(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.is_synced() {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Whether the cache currently follows the inner store.
    pub fn is_synced(&self) -> bool {
        self.shared.read_state().synced
    }

    /// The revision the cache reflects.
    pub fn cached_revision(&self) -> Revision {
        self.shared.read_state().revision
    }

    /// Number of watchers fed from memory.
    pub fn watcher_count(&self) -> usize {
        self.shared.read_state().watchers.len()
    }

    /// Estimated heap bytes of cached keys, values and the event ring.
    /// Walks the whole cache.
    pub fn memory_bytes(&self) -> MemoryUse {
        memory::estimate(&self.shared.read_state())
    }

    /// How requests were served so far.
    /// kube's watch cache metrics, for `/metrics`.
    pub fn metrics(&self) -> Arc<metrics::CacheMetrics> {
        self.shared.metrics.clone()
    }

    pub fn stats(&self) -> &CacheStats {
        &self.shared.stats
    }

    /// Whether `prefix` lies inside the cached key space.
    fn in_scope(&self, prefix: &str) -> bool {
        prefix.starts_with(&self.shared.options.prefix)
    }

    /// Waits until the cache reflects every write the inner store had
    /// committed when this was called. False (read from the store instead)
    /// when not synced, on errors, or after [`CacheOptions::sync_wait`].
    async fn catch_up(&self) -> bool {
        if !self.is_synced() {
            return false;
        }
        let target = match self.shared.inner.current_revision().await {
            Ok(revision) => revision,
            Err(err) => {
                tracing::debug!(%err, "watch cache could not read the store's revision");
                return false;
            }
        };
        let reached = self.wait_for_revision(target).await;
        if !reached {
            tracing::warn!(
                target,
                cached = self.cached_revision(),
                "watch cache lags; reading from the store"
            );
        }
        reached
    }

    /// Whether the synced cache reflects `seen` (a write already committed),
    /// waiting for its event if needed: no question to the store.
    async fn reached(&self, seen: Revision) -> bool {
        if !self.is_synced() {
            return false;
        }
        self.cached_revision() >= seen || self.wait_for_revision(seen).await
    }

    /// Waits up to [`CacheOptions::sync_wait`] for the cache to reach
    /// `target`: first for events, then asking for progress reports (twice
    /// at least: the first one only vouches for the revision before it).
    async fn wait_for_revision(&self, target: Revision) -> bool {
        let deadline = tokio::time::Instant::now() + self.shared.options.sync_wait;
        let mut revisions = self.shared.revision.subscribe();
        let mut pause = PROGRESS_PAUSE;
        loop {
            let until = deadline.min(tokio::time::Instant::now() + pause);
            let wait = revisions.wait_for(|cached| *cached >= target);
            if let Ok(result) = tokio::time::timeout_at(until, wait).await {
                return result.is_ok();
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            if !self.shared.request_progress().await {
                pause = self.shared.options.sync_wait;
            }
        }
    }

    /// Answers `req` from memory if the cache can, else `None`.
    async fn range_from_memory(&self, req: &RangeRequest<'_>) -> Option<RangeResult> {
        if !self.in_scope(req.prefix) {
            return None;
        }
        let sel = Selector {
            prefix: req.prefix,
            start_after: req.start_after,
        };
        match req.revision.filter(|r| *r > 0) {
            None => {
                if !self.catch_up().await {
                    return None;
                }
                let state = self.shared.read_state();
                state
                    .synced
                    .then(|| read::range_latest(&state, sel, req.limit))
            }
            Some(at) => {
                let state = self.shared.read_state();
                state
                    .covers_read(at)
                    .then(|| read::range_at(&state, sel, req.limit, at))
            }
        }
    }

    async fn range_impl(&self, req: RangeRequest<'_>) -> StorageResult<RangeResult> {
        if let Some(result) = self.range_from_memory(&req).await {
            self.shared.count_memory();
            let n = result.kvs.len();
            self.shared.metrics.listed(req.prefix, n, n);
            return Ok(result);
        }
        self.shared.count_delegated();
        self.shared.inner.range(req).await
    }

    async fn count_impl(&self, prefix: &str) -> StorageResult<i64> {
        if self.in_scope(prefix) && self.catch_up().await {
            let state = self.shared.read_state();
            if state.synced {
                self.shared.count_memory();
                return Ok(read::count(&state, prefix));
            }
        }
        self.shared.count_delegated();
        self.shared.inner.count(prefix).await
    }

    /// Registers a watcher fed from memory, if the ring covers `after`.
    fn watch_from_memory(&self, prefix: &str, after: Revision) -> Option<WatchStream> {
        if !self.in_scope(prefix) {
            return None;
        }
        let mut state = self.shared.write_state();
        if !state.covers_watch(after) {
            return None;
        }
        let replay: Vec<Event> = state
            .events_after(after)
            .filter(|e| e.kv.key.starts_with(prefix))
            .cloned()
            .collect();
        Some(state.watchers.add(prefix, after, replay))
    }

    async fn watch_impl(&self, prefix: &str, after: Revision) -> StorageResult<WatchStream> {
        if let Some(stream) = self.watch_from_memory(prefix, after) {
            self.shared.count_memory();
            return Ok(stream);
        }
        self.shared.count_delegated();
        self.shared.inner.watch(prefix, after).await
    }

    async fn compact_impl(&self, revision: Revision) -> StorageResult<()> {
        let result = self.shared.inner.compact(revision).await;
        match &result {
            Ok(()) => self.shared.note_compacted(revision),
            Err(StorageError::Compacted { compacted, .. }) => {
                self.shared.note_compacted(*compacted)
            }
            Err(_) => {}
        }
        result
    }
}

impl Storage for CachedStorage {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StorageResult<Option<KeyValue>>> {
        self.shared.inner.get(key)
    }

    fn range<'a>(&'a self, req: RangeRequest<'a>) -> BoxFuture<'a, StorageResult<RangeResult>> {
        Box::pin(self.range_impl(req))
    }

    fn count<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, StorageResult<i64>> {
        Box::pin(self.count_impl(prefix))
    }

    fn get_recent<'a>(
        &'a self,
        key: &'a str,
        seen: Revision,
    ) -> BoxFuture<'a, StorageResult<Option<KeyValue>>> {
        Box::pin(async move {
            if self.in_scope(key) && self.reached(seen).await {
                let found = {
                    let state = self.shared.read_state();
                    state.synced.then(|| state.live.get(key).cloned())
                };
                if let Some(found) = found {
                    self.shared.count_memory();
                    return Ok(found);
                }
            }
            self.shared.count_delegated();
            self.shared.inner.get(key).await
        })
    }

    fn range_recent<'a>(
        &'a self,
        req: RangeRequest<'a>,
        seen: Revision,
    ) -> BoxFuture<'a, StorageResult<RangeResult>> {
        Box::pin(async move {
            let latest = req.revision.is_none_or(|r| r <= 0);
            if latest && self.in_scope(req.prefix) && self.reached(seen).await {
                let sel = Selector {
                    prefix: req.prefix,
                    start_after: req.start_after,
                };
                let found = {
                    let state = self.shared.read_state();
                    state
                        .synced
                        .then(|| read::range_latest(&state, sel, req.limit))
                };
                if let Some(result) = found {
                    self.shared.count_memory();
                    return Ok(result);
                }
            }
            self.range_impl(req).await
        })
    }

    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.shared.inner.create(key, value)
    }

    fn update<'a>(
        &'a self,
        key: &'a str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.shared.inner.update(key, value, expected_mod_revision)
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected_mod_revision: Option<Revision>,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.shared.inner.delete(key, expected_mod_revision)
    }

    fn current_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        self.shared.inner.current_revision()
    }

    fn watch<'a>(
        &'a self,
        prefix: &'a str,
        after_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<WatchStream>> {
        Box::pin(self.watch_impl(prefix, after_revision))
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, StorageResult<()>> {
        Box::pin(self.compact_impl(revision))
    }

    fn compacted_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        self.shared.inner.compacted_revision()
    }

    fn is_ready(&self) -> BoxFuture<'_, StorageResult<()>> {
        self.shared.inner.is_ready()
    }
}
