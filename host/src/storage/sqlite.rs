//! Embedded SQLite implementation of [`Storage`], laid out like kine: an
//! append-only revision log (see `sqlite/log.rs`) whose newest row per key is
//! the current state, so reads at past revisions and watch replay work.
//!
//! One writer thread owns the write connection and commits the writes
//! queued together in one transaction (group commit, `sqlite/writer.rs`), so
//! revisions are allocated and events broadcast strictly in order; a few
//! read-only connections serve reads on tokio's blocking pool. WAL journal
//! with `synchronous=FULL`: a write is on disk before it is acknowledged.

mod log;
mod watch;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use rusqlite::{Connection, ErrorCode, OpenFlags};
use tokio::sync::broadcast;

use crate::storage::{
    Event, KeyValue, RangeRequest, RangeResult, Revision, Storage, StorageError, StorageResult,
    WatchStream,
};
use log::KeyRange;
use writer::{WriteOp, Writer};

/// Revisions removed per transaction while compacting, so writers are never
/// stalled for long.
const COMPACT_CHUNK: Revision = 10_000;

/// Tunables of [`SqliteStorage::open_with`].
#[derive(Clone, Debug)]
pub struct SqliteOptions {
    /// Events buffered for live watchers; a watcher further behind than this
    /// receives an error item and its stream ends.
    pub watch_capacity: usize,
    /// Number of read-only connections.
    pub readers: usize,
    /// How long a connection waits on a locked database before failing.
    pub busy_timeout: Duration,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            watch_capacity: 4096,
            readers: 2,
            busy_timeout: Duration::from_secs(5),
        }
    }
}

/// The SQLite storage backend. Cheap to share behind an `Arc`.
pub struct SqliteStorage {
    shared: Arc<Shared>,
}

/// State shared with blocking tasks and watch streams.
struct Shared {
    writer: Writer,
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
    events: broadcast::Sender<Event>,
    path: PathBuf,
}

impl From<rusqlite::Error> for StorageError {
    fn from(err: rusqlite::Error) -> Self {
        let unavailable = matches!(
            err.sqlite_error_code(),
            Some(
                ErrorCode::DatabaseBusy
                    | ErrorCode::DatabaseLocked
                    | ErrorCode::CannotOpen
                    | ErrorCode::DiskFull
                    | ErrorCode::SystemIoFailure
                    | ErrorCode::ReadOnly
            )
        );
        if unavailable {
            StorageError::Unavailable(format!("sqlite: {err}"))
        } else {
            StorageError::Internal(format!("sqlite: {err}"))
        }
    }
}

fn lock(conn: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    // A panic while holding the lock rolled its transaction back on unwind,
    // so the connection is still sound.
    conn.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Runs `op` inside one read transaction (a consistent snapshot).
    fn read<T>(&self, op: impl FnOnce(&Connection) -> StorageResult<T>) -> StorageResult<T> {
        let n = self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len();
        let mut conn = lock(&self.readers[n]);
        let tx = conn.transaction()?;
        op(&tx)
    }
}

/// Runs `op` on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    shared: Arc<Shared>,
    op: impl FnOnce(&Shared) -> StorageResult<T> + Send + 'static,
) -> StorageResult<T> {
    tokio::task::spawn_blocking(move || op(&shared))
        .await
        .map_err(|e| StorageError::Internal(format!("storage task failed: {e}")))?
}

impl SqliteStorage {
    /// Opens (creating if needed) the database at `path` with default options.
    /// Blocking: call at startup or from a blocking task.
    pub fn open(path: &Path) -> StorageResult<Self> {
        Self::open_with(path, SqliteOptions::default())
    }

    /// Opens (creating if needed) the database at `path`.
    pub fn open_with(path: &Path, options: SqliteOptions) -> StorageResult<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                StorageError::Unavailable(format!("cannot create {}: {e}", dir.display()))
            })?;
        }
        let writer = Connection::open(path)?;
        writer.busy_timeout(options.busy_timeout)?;
        log::init_writer(&writer)?;
        let readers = (0..options.readers.max(1))
            .map(|_| open_reader(path, options.busy_timeout).map(Mutex::new))
            .collect::<StorageResult<Vec<_>>>()?;
        let (events, _) = broadcast::channel(options.watch_capacity.max(1));
        let shared = Shared {
            writer: Writer::start(writer, events.clone())?,
            readers,
            next_reader: AtomicUsize::new(0),
            events,
            path: path.to_path_buf(),
        };
        let (rev, compacted) =
            shared.read(|c| Ok((log::current_revision(c)?, log::compacted_revision(c)?)))?;
        tracing::info!(path = %path.display(), revision = rev, compacted, "opened sqlite storage");
        Ok(SqliteStorage {
            shared: Arc::new(shared),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Starts a background task that every `interval` compacts history older
    /// than `current - keep_revisions` (kube-apiserver compacts every 5
    /// minutes). The task stops once the last `Arc` of the storage is dropped.
    /// Must be called within a tokio runtime.
    pub fn start_compactor(self: &Arc<Self>, interval: Duration, keep_revisions: i64) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::error!("storage compactor not started: no tokio runtime");
            return;
        };
        let store = Arc::downgrade(self);
        runtime.spawn(compactor_loop(store, interval, keep_revisions));
    }

    /// Compacts at `current - keep_revisions` if that is past the current
    /// compaction point; returns the new compaction point, if any.
    pub async fn compact_keeping(&self, keep_revisions: i64) -> StorageResult<Option<Revision>> {
        let (current, compacted) = blocking(self.shared.clone(), |s| {
            s.read(|c| Ok((log::current_revision(c)?, log::compacted_revision(c)?)))
        })
        .await?;
        let target = current - keep_revisions.max(0);
        if target <= compacted {
            return Ok(None);
        }
        match self.compact_at(target).await {
            Ok(()) => Ok(Some(target)),
            // Someone else compacted further in the meantime.
            Err(StorageError::Compacted { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn compact_at(&self, revision: Revision) -> StorageResult<()> {
        let oldest = self
            .shared
            .writer
            .exclusive(move |c| begin_compaction(c, revision))
            .await?;
        let mut from = oldest.unwrap_or(revision + 1) - 1;
        let mut removed = 0;
        while from < revision {
            let to = revision.min(from.saturating_add(COMPACT_CHUNK));
            removed += self
                .shared
                .writer
                .exclusive(move |c| log::delete_history(c, from, to, revision))
                .await?;
            from = to;
        }
        tracing::info!(revision, removed, "compacted storage history");
        Ok(())
    }
}

fn open_reader(path: &Path, busy_timeout: Duration) -> StorageResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(busy_timeout)?;
    Ok(conn)
}

/// Validates and persists a new compaction point (before any row is removed,
/// so reads below it fail instead of seeing partial history); returns the
/// oldest revision still in the log.
fn begin_compaction(conn: &Connection, revision: Revision) -> StorageResult<Option<Revision>> {
    let current = log::current_revision(conn)?;
    let compacted = log::compacted_revision(conn)?;
    if revision > current {
        return Err(StorageError::FutureRevision {
            requested: revision,
            current,
        });
    }
    if revision <= compacted {
        return Err(StorageError::Compacted {
            requested: revision,
            compacted,
        });
    }
    log::set_compacted_revision(conn, revision)?;
    log::oldest_revision(conn)
}

async fn compactor_loop(store: Weak<SqliteStorage>, interval: Duration, keep_revisions: i64) {
    let mut ticker = tokio::time::interval(interval.max(Duration::from_millis(1)));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await; // the first tick completes immediately
    loop {
        ticker.tick().await;
        let Some(store) = store.upgrade() else {
            return;
        };
        if let Err(err) = store.compact_keeping(keep_revisions).await {
            tracing::warn!(%err, "storage compaction failed");
        }
    }
}

fn range_rows(
    conn: &Connection,
    prefix: &str,
    start_after: Option<&str>,
    limit: Option<usize>,
    revision: Option<Revision>,
) -> StorageResult<RangeResult> {
    let current = log::current_revision(conn)?;
    let at = revision.filter(|r| *r > 0).unwrap_or(current);
    if at > current {
        return Err(StorageError::FutureRevision {
            requested: at,
            current,
        });
    }
    let compacted = log::compacted_revision(conn)?;
    if at < compacted {
        return Err(StorageError::Compacted {
            requested: at,
            compacted,
        });
    }
    let limit = limit.filter(|n| *n > 0);
    // One extra row tells whether more keys follow.
    let sql_limit = limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX - 1) + 1);
    let range = KeyRange::prefix_after(prefix, start_after);
    let mut kvs = log::range_at(conn, &range, at, sql_limit)?;
    let more = limit.is_some_and(|n| kvs.len() > n);
    if let Some(n) = limit {
        kvs.truncate(n);
    }
    Ok(RangeResult {
        kvs,
        more,
        revision: at,
    })
}

impl Storage for SqliteStorage {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StorageResult<Option<KeyValue>>> {
        let key = key.to_string();
        Box::pin(blocking(self.shared.clone(), move |s| {
            s.read(|c| {
                Ok(log::latest_row(c, &key)?
                    .filter(|r| !r.deleted)
                    .map(|r| r.to_kv()))
            })
        }))
    }

    fn range<'a>(&'a self, req: RangeRequest<'a>) -> BoxFuture<'a, StorageResult<RangeResult>> {
        let prefix = req.prefix.to_string();
        let start_after = req.start_after.map(str::to_string);
        let (limit, revision) = (req.limit, req.revision);
        Box::pin(blocking(self.shared.clone(), move |s| {
            s.read(|c| range_rows(c, &prefix, start_after.as_deref(), limit, revision))
        }))
    }

    fn count<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, StorageResult<i64>> {
        let range = KeyRange::prefix(prefix);
        Box::pin(blocking(self.shared.clone(), move |s| {
            s.read(|c| log::count_live(c, &range))
        }))
    }

    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.shared.writer.submit(WriteOp::Create {
            key: key.to_string(),
            value,
        })
    }

    fn update<'a>(
        &'a self,
        key: &'a str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.shared.writer.submit(WriteOp::Update {
            key: key.to_string(),
            value,
            expected: expected_mod_revision,
        })
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected_mod_revision: Option<Revision>,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.shared.writer.submit(WriteOp::Delete {
            key: key.to_string(),
            expected: expected_mod_revision,
        })
    }

    fn current_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        Box::pin(blocking(self.shared.clone(), |s| {
            s.read(log::current_revision)
        }))
    }

    fn watch<'a>(
        &'a self,
        prefix: &'a str,
        after_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<WatchStream>> {
        Box::pin(watch::open(
            self.shared.clone(),
            prefix.to_string(),
            after_revision,
        ))
    }

    fn compact(&self, revision: Revision) -> BoxFuture<'_, StorageResult<()>> {
        Box::pin(self.compact_at(revision))
    }

    fn compacted_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        Box::pin(blocking(self.shared.clone(), |s| {
            s.read(log::compacted_revision)
        }))
    }

    fn is_ready(&self) -> BoxFuture<'_, StorageResult<()>> {
        Box::pin(blocking(self.shared.clone(), |s| {
            s.read(|c| {
                c.query_row("SELECT 1", [], |_| Ok(()))?;
                Ok(())
            })
        }))
    }

    fn size_bytes(&self) -> BoxFuture<'_, Option<u64>> {
        let path = self.path().to_path_buf();
        Box::pin(async move {
            let wal = path.with_extension(format!(
                "{}-wal",
                path.extension().and_then(|e| e.to_str()).unwrap_or("")
            ));
            let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
            Some(len(&path)? + len(&wal).unwrap_or(0))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::conformance::{self, Backend};
    use futures_util::StreamExt;

    /// A SQLite database in its own temporary directory; `open` reopens it.
    struct TempSqlite {
        dir: tempfile::TempDir,
        options: SqliteOptions,
    }

    impl TempSqlite {
        fn new() -> Self {
            Self::with_options(SqliteOptions::default())
        }

        fn with_options(options: SqliteOptions) -> Self {
            TempSqlite {
                dir: tempfile::tempdir().unwrap(),
                options,
            }
        }

        fn open_now(&self) -> SqliteStorage {
            SqliteStorage::open_with(
                &self.dir.path().join("db/state.sqlite"),
                self.options.clone(),
            )
            .unwrap()
        }
    }

    impl Backend for TempSqlite {
        type Store = SqliteStorage;
        fn open(&self) -> BoxFuture<'_, StorageResult<SqliteStorage>> {
            Box::pin(async move { Ok(self.open_now()) })
        }
    }

    conformance::storage_conformance_tests!(TempSqlite::new());

    fn b(s: &str) -> Bytes {
        Bytes::from(s.to_string())
    }

    #[tokio::test]
    async fn lagging_watcher_gets_an_error_then_its_stream_ends() {
        let db = TempSqlite::with_options(SqliteOptions {
            watch_capacity: 4,
            ..SqliteOptions::default()
        });
        let store = db.open_now();
        let mut watch = store.watch("/registry/", 0).await.unwrap();
        store.create("/registry/first", b("v")).await.unwrap();
        // Replay is over once the first event arrives; later ones come live.
        assert_eq!(watch.next().await.unwrap().unwrap().revision(), 1);
        for i in 0..20 {
            store
                .create(&format!("/registry/k{i:02}"), b("v"))
                .await
                .unwrap();
        }
        let mut items = Vec::new();
        let wait = Duration::from_secs(5);
        while let Some(item) = tokio::time::timeout(wait, watch.next()).await.unwrap() {
            items.push(item);
        }
        let (last, delivered) = items.split_last().unwrap();
        assert!(matches!(last, Err(StorageError::Internal(msg)) if msg.contains("behind")));
        // Whatever was delivered before the error is gap-free.
        for (i, ev) in delivered.iter().enumerate() {
            assert_eq!(ev.as_ref().unwrap().revision(), i as i64 + 2);
        }
    }

    #[tokio::test]
    async fn backlog_covered_by_replay_is_not_reported_as_lag() {
        let db = TempSqlite::with_options(SqliteOptions {
            watch_capacity: 4,
            ..SqliteOptions::default()
        });
        let store = db.open_now();
        let mut watch = store.watch("/registry/", 0).await.unwrap();
        // The broadcast overflows before the watch is first polled, but the
        // log replay covers every overwritten event.
        for i in 0..20 {
            store
                .create(&format!("/registry/k{i:02}"), b("v"))
                .await
                .unwrap();
        }
        for rev in 1..=20 {
            assert_eq!(watch.next().await.unwrap().unwrap().revision(), rev);
        }
        store.create("/registry/live", b("v")).await.unwrap();
        assert_eq!(watch.next().await.unwrap().unwrap().revision(), 21);
    }

    #[tokio::test]
    async fn fresh_store_is_at_revision_zero_and_first_write_is_one() {
        let db = TempSqlite::new();
        let store = db.open_now();
        assert_eq!(store.current_revision().await.unwrap(), 0);
        assert_eq!(store.compacted_revision().await.unwrap(), 0);
        assert!(store
            .range(RangeRequest::prefix(""))
            .await
            .unwrap()
            .kvs
            .is_empty());
        let kv = store.create("/registry/a", b("v")).await.unwrap();
        assert_eq!((kv.create_revision, kv.mod_revision), (1, 1));
    }

    #[tokio::test]
    async fn compactor_task_trims_history_but_keeps_recent_revisions() {
        let db = TempSqlite::new();
        let store = Arc::new(db.open_now());
        for i in 0..10 {
            store
                .create(&format!("/registry/k{i}"), b("v"))
                .await
                .unwrap();
        }
        store.start_compactor(Duration::from_millis(20), 3);
        let mut compacted = 0;
        for _ in 0..200 {
            compacted = store.compacted_revision().await.unwrap();
            if compacted > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(compacted, 7);
        assert_eq!(store.count("/registry/").await.unwrap(), 10);
        assert!(store.watch("/registry/", 7).await.is_ok());
        assert!(matches!(
            store.watch("/registry/", 6).await,
            Err(StorageError::Compacted { compacted: 7, .. })
        ));
    }

    #[tokio::test]
    async fn compaction_removes_superseded_rows_and_tombstones_from_disk() {
        let db = TempSqlite::new();
        let store = db.open_now();
        let kv = store.create("/registry/a", b("1")).await.unwrap();
        let kv = store
            .update("/registry/a", b("2"), kv.mod_revision)
            .await
            .unwrap();
        store
            .update("/registry/a", b("3"), kv.mod_revision)
            .await
            .unwrap();
        store.create("/registry/gone", b("x")).await.unwrap();
        store.delete("/registry/gone", None).await.unwrap();
        let rows_before = row_count(&store);
        store.compact(5).await.unwrap();
        assert_eq!(rows_before, 5);
        assert_eq!(row_count(&store), 1);
        assert_eq!(
            store.get("/registry/a").await.unwrap().unwrap().value,
            b("3")
        );
        // The sequence continues even though the newest row was removed.
        let next = store.create("/registry/b", b("v")).await.unwrap();
        assert_eq!(next.mod_revision, 6);
    }

    fn row_count(store: &SqliteStorage) -> i64 {
        store
            .shared
            .read(|c| Ok(c.query_row("SELECT COUNT(*) FROM log", [], |r| r.get(0))?))
            .unwrap()
    }

    #[tokio::test]
    async fn opening_a_path_in_a_missing_directory_creates_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/c.sqlite");
        let store = SqliteStorage::open(&path).unwrap();
        store.is_ready().await.unwrap();
        assert!(path.exists());
        assert_eq!(store.path(), path.as_path());
    }
}
