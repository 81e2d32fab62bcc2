//! Tests of the watch cache over SQLite: the full conformance suite plus the
//! cache's own behaviour (memory serving, slow watchers, memory estimate).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::StreamExt;

use super::{CacheOptions, CachedStorage};
use crate::storage::conformance::{self, Backend};
use crate::storage::{
    KeyValue, RangeRequest, RangeResult, Revision, SqliteStorage, Storage, StorageError,
    StorageResult, WatchStream,
};

const SYNC: Duration = Duration::from_secs(5);

/// A SQLite database in a temporary directory, cached on every `open`.
struct TempCached {
    dir: tempfile::TempDir,
}

impl TempCached {
    fn new() -> Self {
        TempCached {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn sqlite(&self) -> SqliteStorage {
        SqliteStorage::open(&self.dir.path().join("state.sqlite")).expect("open sqlite")
    }
}

impl Backend for TempCached {
    type Store = CachedStorage;
    fn open(&self) -> BoxFuture<'_, StorageResult<CachedStorage>> {
        Box::pin(async move {
            let cache = CachedStorage::start(Arc::new(self.sqlite()));
            assert!(cache.wait_synced(SYNC).await, "cache synced");
            Ok(cache)
        })
    }
}

conformance::storage_conformance_tests!(TempCached::new());

/// Counts the range and watch calls that reach the inner store.
struct Counting {
    inner: SqliteStorage,
    gets: AtomicU64,
    revisions: AtomicU64,
    ranges: AtomicU64,
    counts: AtomicU64,
    watches: AtomicU64,
}

impl Storage for Counting {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StorageResult<Option<KeyValue>>> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        self.inner.get(key)
    }
    fn range<'a>(&'a self, req: RangeRequest<'a>) -> BoxFuture<'a, StorageResult<RangeResult>> {
        self.ranges.fetch_add(1, Ordering::SeqCst);
        self.inner.range(req)
    }
    fn count<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, StorageResult<i64>> {
        self.counts.fetch_add(1, Ordering::SeqCst);
        self.inner.count(prefix)
    }
    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.inner.create(key, value)
    }
    fn update<'a>(
        &'a self,
        key: &'a str,
        value: Bytes,
        expected: Revision,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.inner.update(key, value, expected)
    }
    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected: Option<Revision>,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.inner.delete(key, expected)
    }
    fn current_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        self.revisions.fetch_add(1, Ordering::SeqCst);
        self.inner.current_revision()
    }
    fn watch<'a>(
        &'a self,
        prefix: &'a str,
        after: Revision,
    ) -> BoxFuture<'a, StorageResult<WatchStream>> {
        self.watches.fetch_add(1, Ordering::SeqCst);
        self.inner.watch(prefix, after)
    }
    fn compact(&self, revision: Revision) -> BoxFuture<'_, StorageResult<()>> {
        self.inner.compact(revision)
    }
    fn compacted_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        self.inner.compacted_revision()
    }
    fn is_ready(&self) -> BoxFuture<'_, StorageResult<()>> {
        self.inner.is_ready()
    }
}

/// A synced cache over a counting SQLite store.
async fn counted(db: &TempCached, options: CacheOptions) -> (Arc<Counting>, CachedStorage) {
    let inner = Arc::new(Counting {
        inner: db.sqlite(),
        gets: AtomicU64::new(0),
        revisions: AtomicU64::new(0),
        ranges: AtomicU64::new(0),
        counts: AtomicU64::new(0),
        watches: AtomicU64::new(0),
    });
    let cache = CachedStorage::start_with(inner.clone(), options);
    assert!(cache.wait_synced(SYNC).await, "cache synced");
    (inner, cache)
}

fn val(s: &str) -> Bytes {
    Bytes::from(s.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recent_reads_ask_the_store_nothing_once_the_cache_saw_the_write() {
    let db = TempCached::new();
    let (inner, cache) = counted(&db, CacheOptions::default()).await;
    let prefix = "/registry/namespaces/";
    let written = cache.create(&format!("{prefix}a"), val("v")).await.unwrap();
    let key = format!("{prefix}a");
    assert!(
        cache.range(RangeRequest::prefix(prefix)).await.is_ok(),
        "caught up"
    );
    let gets = inner.gets.load(Ordering::SeqCst);
    let revisions = inner.revisions.load(Ordering::SeqCst);
    let ranges = inner.ranges.load(Ordering::SeqCst);
    let rev = written.mod_revision;
    let seen = cache.get_recent(&key, rev).await.unwrap();
    assert_eq!(seen.expect("in memory").mod_revision, rev);
    let listed = cache.range_recent(RangeRequest::prefix(prefix), rev);
    assert_eq!(listed.await.unwrap().kvs.len(), 1);
    let missing = format!("{prefix}b");
    assert!(cache.get_recent(&missing, rev).await.unwrap().is_none());
    assert_eq!(inner.gets.load(Ordering::SeqCst), gets);
    assert_eq!(inner.revisions.load(Ordering::SeqCst), revisions);
    assert_eq!(inner.ranges.load(Ordering::SeqCst), ranges);
    // A consistent read asks the store how far it got.
    cache.range(RangeRequest::prefix(prefix)).await.unwrap();
    assert!(inner.revisions.load(Ordering::SeqCst) > revisions);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recent_read_waits_for_the_write_it_must_not_miss() {
    let db = TempCached::new();
    let (inner, cache) = counted(&db, CacheOptions::default()).await;
    let key = "/registry/namespaces/a";
    // Written behind the cache's back: the cache learns of it by its watch.
    let written = inner.create(key, val("v1")).await.unwrap();
    let seen = cache.get_recent(key, written.mod_revision).await.unwrap();
    assert_eq!(seen.expect("found").mod_revision, written.mod_revision);
    let updated = inner
        .update(key, val("v2"), written.mod_revision)
        .await
        .unwrap();
    let range = cache.range_recent(
        RangeRequest::prefix("/registry/namespaces/"),
        updated.mod_revision,
    );
    assert_eq!(range.await.unwrap().kvs[0].value, val("v2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_at_latest_and_recent_past_revisions_come_from_memory() {
    let db = TempCached::new();
    let (inner, cache) = counted(&db, CacheOptions::default()).await;
    let prefix = "/registry/pods/ns/";
    let mut revisions = Vec::new();
    for i in 0..10 {
        let kv = cache
            .create(&format!("{prefix}p{i}"), val("v"))
            .await
            .unwrap();
        revisions.push(kv.mod_revision);
    }
    cache.delete(&format!("{prefix}p3"), None).await.unwrap();
    let before = inner.ranges.load(Ordering::SeqCst);
    let latest = cache.range(RangeRequest::prefix(prefix)).await.unwrap();
    assert_eq!(latest.kvs.len(), 9);
    assert_eq!(cache.count(prefix).await.unwrap(), 9);
    for (i, rev) in revisions.iter().enumerate() {
        let at = RangeRequest {
            revision: Some(*rev),
            ..RangeRequest::prefix(prefix)
        };
        let old = cache.range(at).await.unwrap();
        assert_eq!(old.revision, *rev);
        assert_eq!(old.kvs.len(), i + 1, "state at revision {rev}");
        // The same answer as the store gives.
        assert_eq!(old, inner.inner.range(at).await.unwrap());
    }
    assert_eq!(
        inner.ranges.load(Ordering::SeqCst),
        before,
        "no range reached the store"
    );
    assert_eq!(inner.counts.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paged_past_reads_match_the_store_exactly() {
    let db = TempCached::new();
    let (inner, cache) = counted(&db, CacheOptions::default()).await;
    let prefix = "/registry/cm/";
    for i in 0..30 {
        cache
            .create(&format!("{prefix}k{:02}", (i * 7) % 30), val("1"))
            .await
            .unwrap();
    }
    let pinned = cache.current_revision().await.unwrap();
    for i in (0..30).step_by(3) {
        let key = format!("{prefix}k{i:02}");
        let kv = cache.get(&key).await.unwrap().unwrap();
        cache.update(&key, val("2"), kv.mod_revision).await.unwrap();
        cache
            .delete(&format!("{prefix}k{:02}", i + 1), None)
            .await
            .unwrap();
        cache
            .create(&format!("{prefix}k{i:02}x"), val("n"))
            .await
            .unwrap();
    }
    let current = cache.current_revision().await.unwrap();
    for at in [pinned - 5, pinned, pinned + 7, current] {
        for (start_after, limit) in [
            (None, Some(4)),
            (Some("/registry/cm/k10"), Some(3)),
            (Some("/registry/"), None),
            (None, Some(0)),
        ] {
            let req = RangeRequest {
                prefix,
                start_after,
                limit,
                revision: Some(at),
            };
            let want = inner.inner.range(req).await.unwrap();
            assert_eq!(
                cache.range(req).await.unwrap(),
                want,
                "at {at} after {start_after:?} limit {limit:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_right_after_a_write_sees_it() {
    let db = TempCached::new();
    let (inner, cache) = counted(&db, CacheOptions::default()).await;
    let prefix = "/registry/ryw/";
    for i in 0..50 {
        let key = format!("{prefix}k{i}");
        let kv = cache.create(&key, val("v")).await.unwrap();
        let got = cache.range(RangeRequest::prefix(&key)).await.unwrap();
        assert_eq!(got.kvs, std::slice::from_ref(&kv));
        assert!(got.revision >= kv.mod_revision);
        cache.delete(&key, None).await.unwrap();
        assert_eq!(cache.count(prefix).await.unwrap(), 0);
    }
    assert_eq!(
        inner.ranges.load(Ordering::SeqCst),
        1,
        "only the initial list"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_that_never_reads_is_cut_off_and_others_continue() {
    let db = TempCached::new();
    let options = CacheOptions {
        watcher_capacity: 4,
        ..CacheOptions::default()
    };
    let (inner, cache) = counted(&db, options).await;
    let prefix = "/registry/slow/";
    let mut stuck = cache.watch(prefix, 0).await.unwrap();
    let mut reader = cache.watch(prefix, 0).await.unwrap();
    assert_eq!(cache.watcher_count(), 2);
    assert_eq!(
        inner.watches.load(Ordering::SeqCst),
        1,
        "only the cache's own watch"
    );
    let writes = 20;
    let mut seen = Vec::new();
    for i in 0..writes {
        cache
            .create(&format!("{prefix}k{i}"), val("v"))
            .await
            .unwrap();
        // The reader keeps up (lockstep); the stuck watcher never reads.
        let item = tokio::time::timeout(SYNC, reader.next()).await.unwrap();
        seen.push(item.unwrap().unwrap().revision());
    }
    assert_eq!(seen, (1..=writes as i64).collect::<Vec<_>>());
    let mut items = Vec::new();
    while let Some(item) = tokio::time::timeout(SYNC, stuck.next()).await.unwrap() {
        items.push(item);
    }
    let (last, delivered) = items.split_last().unwrap();
    assert!(
        matches!(last, Err(StorageError::Unavailable(msg)) if msg.contains("behind")),
        "{last:?}"
    );
    assert_eq!(delivered.len(), 4, "the channel's capacity");
    for (i, event) in delivered.iter().enumerate() {
        assert_eq!(event.as_ref().unwrap().revision(), i as i64 + 1);
    }
    assert_eq!(cache.watcher_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_beyond_the_ring_or_outside_the_prefix_are_delegated() {
    let db = TempCached::new();
    let options = CacheOptions {
        ring_capacity: 5,
        ..CacheOptions::default()
    };
    let (inner, cache) = counted(&db, options).await;
    for i in 0..10 {
        cache
            .create(&format!("/registry/r/k{i}"), val("v"))
            .await
            .unwrap();
    }
    // Let the cache catch up so the ring has rolled over.
    cache.count("/registry/r/").await.unwrap();
    let before = inner.watches.load(Ordering::SeqCst);
    let mut old = cache.watch("/registry/r/", 2).await.unwrap();
    assert_eq!(inner.watches.load(Ordering::SeqCst), before + 1);
    assert_eq!(old.next().await.unwrap().unwrap().revision(), 3);
    let mut recent = cache.watch("/registry/r/", 6).await.unwrap();
    assert_eq!(
        inner.watches.load(Ordering::SeqCst),
        before + 1,
        "served from the ring"
    );
    assert_eq!(recent.next().await.unwrap().unwrap().revision(), 7);
    let _other = cache.watch("/other/", 0).await.unwrap();
    assert_eq!(inner.watches.load(Ordering::SeqCst), before + 2);
    let ranges = inner.ranges.load(Ordering::SeqCst);
    let at = |revision| RangeRequest {
        revision: Some(revision),
        ..RangeRequest::prefix("/registry/r/")
    };
    assert_eq!(cache.range(at(3)).await.unwrap().kvs.len(), 3);
    assert_eq!(
        inner.ranges.load(Ordering::SeqCst),
        ranges + 1,
        "below the ring: delegated"
    );
    assert_eq!(cache.range(at(7)).await.unwrap().kvs.len(), 7);
    assert_eq!(
        inner.ranges.load(Ordering::SeqCst),
        ranges + 1,
        "in the ring: memory"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_by_someone_else_is_learned() {
    let db = TempCached::new();
    let options = CacheOptions {
        compaction_poll: Duration::from_millis(20),
        ..CacheOptions::default()
    };
    let (inner, cache) = counted(&db, options).await;
    for i in 0..5 {
        cache
            .create(&format!("/registry/c/k{i}"), val("v"))
            .await
            .unwrap();
    }
    inner.inner.compact(4).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let at = RangeRequest {
        revision: Some(2),
        ..RangeRequest::prefix("/registry/c/")
    };
    assert!(matches!(
        cache.range(at).await,
        Err(StorageError::Compacted { compacted: 4, .. })
    ));
    assert!(matches!(
        cache.watch("/registry/c/", 3).await,
        Err(StorageError::Compacted { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_estimate_grows_with_cached_objects() {
    let db = TempCached::new();
    let (_inner, cache) = counted(&db, CacheOptions::default()).await;
    let empty = cache.memory_bytes().total();
    for i in 0..1000 {
        // Distinct buffers, as objects decoded from requests are.
        let value = Bytes::from(vec![b'x'; 1000]);
        cache
            .create(&format!("/registry/mem/k{i:04}"), value)
            .await
            .unwrap();
    }
    cache.count("/registry/mem/").await.unwrap();
    let full = cache.memory_bytes().total();
    // At least the values themselves, and not wildly more than 2x.
    assert!(full - empty >= 1000 * 1000, "{empty} -> {full}");
    assert!(
        full - empty <= 2 * 1000 * 1000 + 1000 * 600,
        "{empty} -> {full}"
    );
    tracing::info!(
        "memory per cached 1000-byte object: {} bytes",
        (full - empty) / 1000
    );
}

/// An inner store whose watches can be broken and refused on demand.
struct Flaky {
    inner: SqliteStorage,
    refuse_watches: std::sync::atomic::AtomicBool,
    breaks: tokio::sync::watch::Sender<u64>,
    ranges: AtomicU64,
}

impl Flaky {
    /// Ends every open watch stream with an error item.
    fn break_watches(&self) {
        self.breaks.send_modify(|n| *n += 1);
    }
}

impl Storage for Flaky {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StorageResult<Option<KeyValue>>> {
        self.inner.get(key)
    }
    fn range<'a>(&'a self, req: RangeRequest<'a>) -> BoxFuture<'a, StorageResult<RangeResult>> {
        self.ranges.fetch_add(1, Ordering::SeqCst);
        self.inner.range(req)
    }
    fn count<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, StorageResult<i64>> {
        self.inner.count(prefix)
    }
    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.inner.create(key, value)
    }
    fn update<'a>(
        &'a self,
        key: &'a str,
        value: Bytes,
        expected: Revision,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.inner.update(key, value, expected)
    }
    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected: Option<Revision>,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.inner.delete(key, expected)
    }
    fn current_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        self.inner.current_revision()
    }
    fn watch<'a>(
        &'a self,
        prefix: &'a str,
        after: Revision,
    ) -> BoxFuture<'a, StorageResult<WatchStream>> {
        Box::pin(async move {
            if self.refuse_watches.load(Ordering::SeqCst) {
                return Err(StorageError::Unavailable("refused".into()));
            }
            let stream = self.inner.watch(prefix, after).await?;
            let mut breaks = self.breaks.subscribe();
            breaks.mark_unchanged();
            let broken = async move {
                let _ = breaks.changed().await;
            };
            let end = futures_util::stream::once(async {
                Err(StorageError::Unavailable("watch broken".into()))
            });
            let stream: WatchStream = Box::pin(stream.take_until(broken).chain(end));
            Ok(stream)
        })
    }
    fn compact(&self, revision: Revision) -> BoxFuture<'_, StorageResult<()>> {
        self.inner.compact(revision)
    }
    fn compacted_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        self.inner.compacted_revision()
    }
    fn is_ready(&self) -> BoxFuture<'_, StorageResult<()>> {
        self.inner.is_ready()
    }
}

async fn flaky(db: &TempCached) -> (Arc<Flaky>, CachedStorage) {
    let inner = Arc::new(Flaky {
        inner: db.sqlite(),
        refuse_watches: Default::default(),
        breaks: tokio::sync::watch::Sender::new(0),
        ranges: AtomicU64::new(0),
    });
    let options = CacheOptions {
        retry_backoff: Duration::from_millis(20),
        ..CacheOptions::default()
    };
    let cache = CachedStorage::start_with(inner.clone(), options);
    assert!(cache.wait_synced(SYNC).await, "cache synced");
    (inner, cache)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_source_watch_is_resumed_without_disturbing_watchers() {
    let db = TempCached::new();
    let (inner, cache) = flaky(&db).await;
    let prefix = "/registry/resume/";
    let mut watch = cache.watch(prefix, 0).await.unwrap();
    for i in 0..3 {
        cache
            .create(&format!("{prefix}a{i}"), val("v"))
            .await
            .unwrap();
    }
    inner.break_watches();
    for i in 0..3 {
        cache
            .create(&format!("{prefix}b{i}"), val("v"))
            .await
            .unwrap();
    }
    for rev in 1..=6 {
        let item = tokio::time::timeout(SYNC, watch.next()).await.unwrap();
        assert_eq!(item.unwrap().unwrap().revision(), rev);
    }
    assert!(cache.wait_synced(SYNC).await);
    let ranges = inner.ranges.load(Ordering::SeqCst);
    assert_eq!(cache.count(prefix).await.unwrap(), 6);
    assert_eq!(
        cache
            .range(RangeRequest::prefix(prefix))
            .await
            .unwrap()
            .kvs
            .len(),
        6
    );
    assert_eq!(
        inner.ranges.load(Ordering::SeqCst),
        ranges,
        "served from memory again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_compacted_past_the_cache_is_relisted_and_watchers_are_told() {
    let db = TempCached::new();
    let (inner, cache) = flaky(&db).await;
    let prefix = "/registry/relist/";
    cache.create(&format!("{prefix}a"), val("v")).await.unwrap();
    let mut watch = cache.watch(prefix, 0).await.unwrap();
    // Let the cache see the first write before its source watch breaks.
    assert_eq!(cache.count(prefix).await.unwrap(), 1);
    inner.refuse_watches.store(true, Ordering::SeqCst);
    inner.break_watches();
    let gone = cache.create(&format!("{prefix}b"), val("v")).await.unwrap();
    cache.delete(&format!("{prefix}a"), None).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!cache.is_synced());
    // While unsynced, reads go to the store and stay correct.
    let ranges = inner.ranges.load(Ordering::SeqCst);
    assert_eq!(cache.count(prefix).await.unwrap(), 1);
    let keys = cache.range(RangeRequest::prefix(prefix)).await.unwrap().kvs;
    assert_eq!(keys, std::slice::from_ref(&gone));
    assert_eq!(inner.ranges.load(Ordering::SeqCst), ranges + 1);
    inner.inner.compact(3).await.unwrap();
    inner.refuse_watches.store(false, Ordering::SeqCst);
    assert!(cache.wait_synced(SYNC).await);
    let mut items = Vec::new();
    while let Some(item) = tokio::time::timeout(SYNC, watch.next()).await.unwrap() {
        items.push(item);
    }
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0].as_ref().unwrap().revision(), 1);
    assert!(matches!(&items[1], Err(StorageError::Unavailable(_))));
    let keys = cache.range(RangeRequest::prefix(prefix)).await.unwrap().kvs;
    assert_eq!(keys, [gone]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_per_10k_cached_objects() {
    let db = TempCached::new();
    let (_inner, cache) = counted(&db, CacheOptions::default()).await;
    let empty = cache.memory_bytes().total();
    for i in 0..10_000 {
        let value = format!(
            "{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"cm-{i:05}\",\"namespace\":\"default\",\"uid\":\"{i:036}\"}},\"data\":{{\"k\":\"{}\"}}}}",
            "v".repeat(300)
        );
        cache
            .create(
                &format!("/registry/configmaps/default/cm-{i:05}"),
                Bytes::from(value),
            )
            .await
            .unwrap();
    }
    cache.count("/registry/configmaps/").await.unwrap();
    let full = cache.memory_bytes().total();
    tracing::info!(
        "10k objects of ~430 bytes: {} bytes total, {} bytes per object (incl. 10k ring events)",
        full - empty,
        (full - empty) / 10_000
    );
    assert!(full > empty + 10_000 * 430);
}

fn put_event(key: &str, revision: Revision) -> crate::storage::Event {
    crate::storage::Event {
        kind: crate::storage::EventKind::Put,
        kv: KeyValue {
            key: key.into(),
            value: Bytes::from_static(b"{}"),
            create_revision: revision,
            mod_revision: revision,
            served: Default::default(),
        },
        prev: None,
    }
}

/// etcd-io/etcd#15220: a progress report may overtake an event of the same
/// revision, so a first report vouches for one revision less, a repeated
/// one is trusted, and an event behind a report is still applied.
#[test]
fn progress_reports_move_the_revision_without_losing_late_events() {
    let mut state = super::state::CacheState::new(10, 10);
    state.reset(Vec::new(), 5);
    state.progress(8);
    assert_eq!(state.revision, 7);
    state.apply(put_event("/registry/a", 8));
    assert_eq!(state.revision, 8);
    assert!(state.live.contains_key("/registry/a"), "late event applied");
    state.progress(9);
    state.progress(9);
    assert_eq!(state.revision, 9, "a repeated report is trusted");
    state.apply(put_event("/registry/b", 8));
    assert!(
        !state.live.contains_key("/registry/b"),
        "an event at or below the last one is a duplicate"
    );
}
