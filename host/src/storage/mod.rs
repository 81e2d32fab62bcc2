//! Storage layer: the etcd-shaped key-value interface the API server persists
//! objects through (revisions, guarded writes, ranges at past revisions,
//! watches and compaction), its value and error types, and the embedded
//! SQLite backend and the etcd backend, both checked by one conformance suite,
//! and the watch cache in front of either.

/// The largest object either store keeps: etcd's default request limit
/// (`--max-request-bytes`, 1.5 MiB), applied to both stores so an object
/// is accepted or refused the same way wherever it is kept.
pub const MAX_STORED_BYTES: usize = 1536 * 1024;

pub mod cached;
pub mod compactor;
#[cfg(test)]
pub mod conformance;
pub mod etcd;
pub mod instrumented;
pub mod sqlite;
pub mod watermarks;

use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::{Stream, StreamExt};

pub use cached::{CacheOptions, CachedStorage};
pub use etcd::{EtcdOptions, EtcdStorage, EtcdTls};
pub use sqlite::{SqliteOptions, SqliteStorage};

/// A store-wide revision. 0 means "nothing written yet"; every successful
/// create, update or delete consumes exactly one revision.
pub type Revision = i64;

/// One key's value at some revision.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyValue {
    pub key: String,
    /// Opaque bytes (the object's JSON without resourceVersion).
    pub value: Bytes,
    /// Revision of the create that started this key's current life.
    pub create_revision: Revision,
    /// Revision of the last write to this key (the object's resourceVersion).
    pub mod_revision: Revision,
    /// How the value is served, worked out once by its first reader and
    /// shared by every clone of this key-value: the watch cache keeps one
    /// per cached version, so later readers of it reuse the work.
    pub served: ServedSlot,
}

/// What a reader worked out to serve one key-value version (see
/// [`crate::registry::stored`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ServedForm {
    /// The served JSON itself.
    Encoded(Bytes),
    /// Served as the value with something spliced in: where and how.
    Spliced { at: u32, how: u8 },
}

/// A once-set slot for what readers derive from one key-value version (see
/// [`KeyValue::served`]). Clones share the slot; it takes no part in
/// equality, which is about the stored data.
#[derive(Clone, Default)]
pub struct ServedSlot(Arc<std::sync::OnceLock<ServedForm>>);

impl ServedSlot {
    /// What a reader kept, if any did.
    pub fn get(&self) -> Option<ServedForm> {
        self.0.get().cloned()
    }

    /// Keeps `form` unless another reader was first; returns what is kept.
    pub fn keep(&self, form: ServedForm) -> ServedForm {
        self.0.get_or_init(|| form).clone()
    }
}

impl PartialEq for ServedSlot {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for ServedSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ServedSlot({})",
            if self.0.get().is_some() {
                "set"
            } else {
                "empty"
            }
        )
    }
}

/// Whether a watch event wrote or removed a key.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    Put,
    Delete,
}

/// One committed change, as delivered by [`Storage::watch`].
#[derive(Clone, Debug)]
pub struct Event {
    pub kind: EventKind,
    /// For `Put`: the new value. For `Delete`: the deleted key with its last
    /// value, and `mod_revision` set to the revision of the delete.
    pub kv: KeyValue,
    /// The live value just before this change (`None` for a create).
    pub prev: Option<KeyValue>,
}

impl Event {
    /// The revision at which this change was committed.
    pub fn revision(&self) -> Revision {
        self.kv.mod_revision
    }
}

/// The answer to a [`Storage::range`] call.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeResult {
    /// Live keys, sorted bytewise ascending.
    pub kvs: Vec<KeyValue>,
    /// More keys exist after the last returned one.
    pub more: bool,
    /// The revision the read was served at (the requested one, or the
    /// current revision for a latest read).
    pub revision: Revision,
}

/// Errors of the storage layer; each maps to one Kubernetes API status.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StorageError {
    #[error("key not found: {key}")]
    NotFound { key: String },
    #[error("key already exists: {key}")]
    AlreadyExists { key: String },
    /// The mod_revision guard failed; `current` is the live value, if any.
    #[error("mod revision guard failed for key {key}")]
    Conflict {
        key: String,
        current: Option<KeyValue>,
    },
    #[error("required revision {requested} has been compacted (compacted revision {compacted})")]
    Compacted {
        requested: Revision,
        compacted: Revision,
    },
    #[error("required revision {requested} is a future revision (current revision {current})")]
    FutureRevision {
        requested: Revision,
        current: Revision,
    },
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The store refused the value as larger than it accepts.
    #[error("storage refused a value as too large: {0}")]
    TooLarge(String),
    #[error("storage internal error: {0}")]
    Internal(String),
}

pub type StorageResult<T> = Result<T, StorageError>;

/// Parameters of a [`Storage::range`] read.
#[derive(Clone, Copy, Debug, Default)]
pub struct RangeRequest<'a> {
    /// Only keys starting with this string are returned.
    pub prefix: &'a str,
    /// Exclusive lower bound (the last key of the previous page).
    pub start_after: Option<&'a str>,
    /// Maximum number of keys; `None` or `Some(0)` means no limit.
    pub limit: Option<usize>,
    /// Read at this revision; `None` (or a value <= 0) means latest.
    pub revision: Option<Revision>,
}

impl<'a> RangeRequest<'a> {
    /// A latest, unpaged read of every key under `prefix`.
    pub fn prefix(prefix: &'a str) -> Self {
        RangeRequest {
            prefix,
            ..RangeRequest::default()
        }
    }
}

/// Events with revision > the watch's start, in order; ends after an error item.
pub type WatchStream = Pin<Box<dyn Stream<Item = StorageResult<Event>> + Send>>;

/// One item of a [`Storage::watch_progress`] stream.
#[derive(Clone, Debug)]
pub enum WatchItem {
    Event(Event),
    /// The store's revision when a progress request was answered: events
    /// up to it have been delivered (but see the caveat on etcd in
    /// `cached/state.rs`).
    Progress(Revision),
}

/// Asks the store to put a [`WatchItem::Progress`] on its stream soon.
pub type ProgressRequest = Arc<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// A watch that can also report how far the store has got, for a watch
/// cache whose prefix does not see every write (etcd's revision also moves
/// for keys outside it).
pub struct ProgressWatch {
    pub stream: Pin<Box<dyn Stream<Item = StorageResult<WatchItem>> + Send>>,
    /// `None` when the backend cannot report progress.
    pub request: Option<ProgressRequest>,
}

/// A revisioned key-value store with etcd's semantics.
///
/// Methods return boxed futures (no `async-trait` dependency), so the trait
/// is object safe: use it as `Arc<dyn Storage>` and simply `.await` calls.
pub trait Storage: Send + Sync + 'static {
    /// The live value of `key`, if any.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StorageResult<Option<KeyValue>>>;

    /// Live keys under `req.prefix`, sorted bytewise ascending, at the latest or
    /// a past revision. `Compacted` / `FutureRevision` for unusable revisions.
    fn range<'a>(&'a self, req: RangeRequest<'a>) -> BoxFuture<'a, StorageResult<RangeResult>>;

    /// Number of live keys under `prefix` at the latest revision.
    fn count<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, StorageResult<i64>>;

    /// [`get`](Self::get) as this server sees it, as an informer's lister
    /// answers: possibly a moment behind other servers' writes, but not
    /// older than `seen` (the last write this server knows of under the
    /// key's resource, so its own writes are read back). For lookups on the
    /// write path (plugins' `get-object`) that kube answers from a cache. A
    /// watch cache answers from memory once it reached `seen`, without
    /// asking the store how far it got; other stores read as `get` does.
    fn get_recent<'a>(
        &'a self,
        key: &'a str,
        seen: Revision,
    ) -> BoxFuture<'a, StorageResult<Option<KeyValue>>> {
        let _ = seen;
        self.get(key)
    }

    /// [`range`](Self::range) at the latest revision as this server sees it
    /// (see [`get_recent`](Self::get_recent)).
    fn range_recent<'a>(
        &'a self,
        req: RangeRequest<'a>,
        seen: Revision,
    ) -> BoxFuture<'a, StorageResult<RangeResult>> {
        let _ = seen;
        self.range(req)
    }

    /// Creates `key`; `AlreadyExists` if it is live.
    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, StorageResult<KeyValue>>;

    /// Replaces `key` if its mod_revision equals `expected_mod_revision`;
    /// `NotFound` if absent, `Conflict { current }` otherwise.
    fn update<'a>(
        &'a self,
        key: &'a str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<KeyValue>>;

    /// Deletes `key` (guarded when `expected_mod_revision` is given) and returns
    /// the deleted value with mod_revision = the delete's revision.
    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected_mod_revision: Option<Revision>,
    ) -> BoxFuture<'a, StorageResult<KeyValue>>;

    /// The revision of the last committed write (0 for an empty store).
    fn current_revision(&self) -> BoxFuture<'_, StorageResult<Revision>>;

    /// Every event under `prefix` with revision > `after_revision`, in order,
    /// none missing or doubled. `Compacted` if `after_revision` is older than
    /// the compaction point.
    fn watch<'a>(
        &'a self,
        prefix: &'a str,
        after_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<WatchStream>>;

    /// [`Storage::watch`] with progress reports on request, where the
    /// backend has them (etcd); by default a plain watch without.
    fn watch_progress<'a>(
        &'a self,
        prefix: &'a str,
        after_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<ProgressWatch>> {
        Box::pin(async move {
            let events = self.watch(prefix, after_revision).await?;
            Ok(ProgressWatch {
                stream: Box::pin(events.map(|item| item.map(WatchItem::Event))),
                request: None,
            })
        })
    }

    /// Drops history at or below `revision`, keeping each live key's latest
    /// value. `FutureRevision` above the current revision, `Compacted` at or
    /// below the current compaction point (as etcd).
    fn compact(&self, revision: Revision) -> BoxFuture<'_, StorageResult<()>>;

    /// The revision of the last compaction (0 if never compacted).
    fn compacted_revision(&self) -> BoxFuture<'_, StorageResult<Revision>>;

    /// Ok when the backend can serve requests (used by /readyz).
    fn is_ready(&self) -> BoxFuture<'_, StorageResult<()>>;

    /// The database's size on disk (`apiserver_storage_size_bytes`), where
    /// the backend can tell.
    fn size_bytes(&self) -> BoxFuture<'_, Option<u64>> {
        Box::pin(async { None })
    }
}

/// kube's object type of a key (metrics' `type`/`resource` label):
/// `configmaps`, `deployments.apps`.
pub fn object_type(key: &str) -> String {
    let rest = key.strip_prefix("/registry/").unwrap_or_default();
    let mut parts = rest.split('/');
    match (parts.next(), parts.next()) {
        (Some("core"), Some(resource)) => resource.to_string(),
        (Some(group), Some(resource)) if !group.is_empty() => format!("{resource}.{group}"),
        _ => "unknown".to_string(),
    }
}

/// The smallest byte string greater than every string starting with
/// `prefix`, or `None` when no such bound exists (empty or all-0xff prefix).
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_typed_as_kube_types_them() {
        assert_eq!(
            object_type("/registry/core/configmaps/default/a"),
            "configmaps"
        );
        assert_eq!(
            object_type("/registry/apps/deployments/"),
            "deployments.apps"
        );
        assert_eq!(object_type("/elsewhere"), "unknown");
    }

    #[test]
    fn prefix_end_excludes_longer_sibling_names() {
        let end = prefix_end(b"/registry/pods/a/").unwrap();
        assert_eq!(end, b"/registry/pods/a0".to_vec());
        assert!(b"/registry/pods/a/zzz".as_slice() < end.as_slice());
        assert!(b"/registry/pods/ab".as_slice() > end.as_slice());
    }

    #[test]
    fn prefix_end_carries_over_0xff_and_has_no_bound_for_empty_prefix() {
        assert_eq!(prefix_end(&[b'a', 0xff]), Some(vec![b'b']));
        assert_eq!(prefix_end(&[0xff, 0xff]), None);
        assert_eq!(prefix_end(b""), None);
    }

    #[test]
    fn errors_read_like_etcd_and_kubernetes_messages() {
        let e = StorageError::Compacted {
            requested: 3,
            compacted: 10,
        };
        assert!(e.to_string().contains("has been compacted"));
        let e = StorageError::FutureRevision {
            requested: 30,
            current: 10,
        };
        assert!(e.to_string().contains("future revision"));
    }
}
