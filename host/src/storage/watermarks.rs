//! Per-resource watermarks: the revision of the last write under each
//! resource's key prefix (`/registry/<group>/<resource>/`), moved by every
//! create, update and delete that goes through [`TrackedStorage`]. Plugins
//! whose instances live across calls read them (the `watermark` import) to
//! know when a list they cached is stale.

use super::{KeyValue, RangeRequest, RangeResult, Revision, Storage, StorageResult, WatchStream};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The last write revision per resource prefix, and an epoch that moves
/// when writes may have been missed (the watch of other servers' writes
/// broke), which invalidates every watermark at once.
#[derive(Default)]
pub struct Watermarks {
    by_prefix: Mutex<HashMap<String, Revision>>,
    epoch: AtomicU64,
}

impl Watermarks {
    /// The watermark of the resource whose keys start with `prefix`.
    pub fn get(&self, prefix: &str) -> String {
        let map = self.by_prefix.lock().unwrap_or_else(|e| e.into_inner());
        let revision = map.get(prefix).copied().unwrap_or(0);
        format!("{}.{revision}", self.epoch.load(Ordering::SeqCst))
    }

    /// The revision of the last write this server knows of under `prefix`.
    pub fn revision(&self, prefix: &str) -> Revision {
        let map = self.by_prefix.lock().unwrap_or_else(|e| e.into_inner());
        map.get(prefix).copied().unwrap_or(0)
    }

    /// Every watermark changes (some writes may not have been seen).
    pub fn invalidate_all(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Records a write of `key` at `revision`.
    pub fn record(&self, key: &str, revision: Revision) {
        let Some(prefix) = resource_prefix(key) else {
            return;
        };
        let mut map = self.by_prefix.lock().unwrap_or_else(|e| e.into_inner());
        let slot = map.entry(prefix.to_string()).or_insert(0);
        *slot = (*slot).max(revision);
    }
}

/// Keeps `watermarks` moving with writes other servers make on the same
/// store (replicas on one etcd), by watching every key. After the watch
/// breaks, every watermark is invalidated before watching again.
pub fn follow(storage: Arc<dyn Storage>, watermarks: Arc<Watermarks>) {
    tokio::spawn(async move {
        loop {
            if let Err(e) = follow_once(storage.as_ref(), &watermarks).await {
                tracing::debug!(error = %e, "watermark watch restarting");
            }
            watermarks.invalidate_all();
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
}

async fn follow_once(storage: &dyn Storage, watermarks: &Watermarks) -> StorageResult<()> {
    let from = storage.current_revision().await?;
    let mut events = storage.watch("/registry/", from).await?;
    watermarks.invalidate_all();
    while let Some(event) = events.next().await {
        let event = event?;
        watermarks.record(&event.kv.key, event.kv.mod_revision);
    }
    Ok(())
}

/// `/registry/<group>/<resource>/` of a key, if it has that shape.
fn resource_prefix(key: &str) -> Option<&str> {
    let mut slashes = key.match_indices('/').map(|(i, _)| i);
    let end = slashes.nth(3)?;
    Some(&key[..=end])
}

/// A storage that records every successful write in [`Watermarks`].
pub struct TrackedStorage {
    inner: Arc<dyn Storage>,
    watermarks: Arc<Watermarks>,
}

impl TrackedStorage {
    pub fn new(inner: Arc<dyn Storage>, watermarks: Arc<Watermarks>) -> Self {
        TrackedStorage { inner, watermarks }
    }

    fn track<'a>(
        &'a self,
        key: &'a str,
        write: BoxFuture<'a, StorageResult<KeyValue>>,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        Box::pin(async move {
            let kv = write.await?;
            self.watermarks.record(key, kv.mod_revision);
            Ok(kv)
        })
    }
}

impl Storage for TrackedStorage {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StorageResult<Option<KeyValue>>> {
        self.inner.get(key)
    }

    fn range<'a>(&'a self, req: RangeRequest<'a>) -> BoxFuture<'a, StorageResult<RangeResult>> {
        self.inner.range(req)
    }

    fn count<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, StorageResult<i64>> {
        self.inner.count(prefix)
    }

    fn get_recent<'a>(
        &'a self,
        key: &'a str,
        seen: Revision,
    ) -> BoxFuture<'a, StorageResult<Option<KeyValue>>> {
        self.inner.get_recent(key, seen)
    }

    fn range_recent<'a>(
        &'a self,
        req: RangeRequest<'a>,
        seen: Revision,
    ) -> BoxFuture<'a, StorageResult<RangeResult>> {
        self.inner.range_recent(req, seen)
    }

    fn create<'a>(&'a self, key: &'a str, value: Bytes) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.track(key, self.inner.create(key, value))
    }

    fn update<'a>(
        &'a self,
        key: &'a str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.track(key, self.inner.update(key, value, expected_mod_revision))
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
        expected_mod_revision: Option<Revision>,
    ) -> BoxFuture<'a, StorageResult<KeyValue>> {
        self.track(key, self.inner.delete(key, expected_mod_revision))
    }

    fn current_revision(&self) -> BoxFuture<'_, StorageResult<Revision>> {
        self.inner.current_revision()
    }

    fn watch<'a>(
        &'a self,
        prefix: &'a str,
        after_revision: Revision,
    ) -> BoxFuture<'a, StorageResult<WatchStream>> {
        self.inner.watch(prefix, after_revision)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::sqlite::SqliteStorage;

    #[test]
    fn prefixes_stop_after_the_resource_segment() {
        assert_eq!(
            resource_prefix("/registry/rbac.authorization.k8s.io/roles/ns/r"),
            Some("/registry/rbac.authorization.k8s.io/roles/")
        );
        assert_eq!(
            resource_prefix("/registry/core/namespaces/default"),
            Some("/registry/core/namespaces/")
        );
        assert_eq!(resource_prefix("/registry/core"), None);
    }

    #[tokio::test]
    async fn every_write_moves_its_resources_watermark_only() {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = SqliteStorage::open(&dir.path().join("db")).unwrap();
        let marks = Arc::new(Watermarks::default());
        let store = TrackedStorage::new(Arc::new(sqlite), marks.clone());
        let roles = "/registry/rbac.authorization.k8s.io/roles/";
        let role = format!("{roles}ns/a");
        assert_eq!(marks.get(roles), "0.0");
        let kv = store
            .create(&role, Bytes::from_static(b"{}"))
            .await
            .unwrap();
        let created = marks.get(roles);
        assert_eq!(created, format!("0.{}", kv.mod_revision));
        let pod = Bytes::from_static(b"{}");
        store.create("/registry/core/pods/ns/p", pod).await.unwrap();
        assert_eq!(marks.get(roles), created);
        let gone = store.delete(&role, None).await.unwrap();
        assert_eq!(marks.get(roles), format!("0.{}", gone.mod_revision));
        assert!(store.delete(&role, None).await.is_err());
        assert_eq!(marks.get(roles), format!("0.{}", gone.mod_revision));
        marks.invalidate_all();
        assert_eq!(marks.get(roles), format!("1.{}", gone.mod_revision));
    }

    #[tokio::test]
    async fn writes_of_another_server_move_the_watermark_through_the_watch() {
        let dir = tempfile::tempdir().unwrap();
        let shared: Arc<dyn Storage> =
            Arc::new(SqliteStorage::open(&dir.path().join("db")).unwrap());
        let marks = Arc::new(Watermarks::default());
        follow(shared.clone(), marks.clone());
        let roles = "/registry/rbac.authorization.k8s.io/roles/";
        // The follower bumps the epoch once its watch is established.
        for _ in 0..100 {
            if !marks.get(roles).starts_with("0.") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let before = marks.get(roles);
        assert!(before.starts_with("1."), "{before}");
        // Another server writes to the store directly (not through our TrackedStorage).
        let kv = shared
            .create(&format!("{roles}ns/b"), Bytes::from_static(b"{}"))
            .await
            .unwrap();
        let want = format!(".{}", kv.mod_revision);
        let mut seen = String::new();
        for _ in 0..100 {
            seen = marks.get(roles);
            if seen.ends_with(&want) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(seen.ends_with(&want) && seen != before, "{seen}");
    }
}
