//! Per-resource watermarks: the revision of the last write under each
//! resource's key prefix (`/registry/<group>/<resource>/`), moved by every
//! create, update and delete that goes through [`TrackedStorage`]. Plugins
//! whose instances live across calls read them (the `watermark` import) to
//! know when a list they cached is stale.

use super::{KeyValue, RangeRequest, RangeResult, Revision, Storage, StorageResult, WatchStream};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The last write revision per resource prefix.
#[derive(Default)]
pub struct Watermarks {
    by_prefix: Mutex<HashMap<String, Revision>>,
}

impl Watermarks {
    /// The watermark of the resource whose keys start with `prefix`
    /// (0 until the first write this process saw).
    pub fn get(&self, prefix: &str) -> Revision {
        let map = self.by_prefix.lock().unwrap_or_else(|e| e.into_inner());
        map.get(prefix).copied().unwrap_or(0)
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
        assert_eq!(marks.get(roles), 0);
        let kv = store
            .create(&format!("{roles}ns/a"), Bytes::from_static(b"{}"))
            .await
            .unwrap();
        assert_eq!(marks.get(roles), kv.mod_revision);
        store
            .create("/registry/core/pods/ns/p", Bytes::from_static(b"{}"))
            .await
            .unwrap();
        assert_eq!(marks.get(roles), kv.mod_revision);
        let gone = store.delete(&format!("{roles}ns/a"), None).await.unwrap();
        assert!(marks.get(roles) > kv.mod_revision);
        assert_eq!(marks.get(roles), gone.mod_revision);
        assert!(store.delete(&format!("{roles}ns/a"), None).await.is_err());
        assert_eq!(marks.get(roles), gone.mod_revision);
    }
}
