//! Periodic compaction for any backend, as kube-apiserver compacts etcd:
//! every interval, history up to the revision that was current at the
//! previous interval is dropped (so at least one interval of history is
//! kept), and never the last `keep` revisions. Several servers on one store
//! may all run it; a compaction someone else already did is not an error.

use super::{Storage, StorageError};
use std::sync::Arc;
use std::time::Duration;

/// Compacts `storage` every `interval` to the revision of the interval before.
pub fn spawn(storage: Arc<dyn Storage>, interval: Duration, keep: i64) {
    tokio::spawn(async move {
        let mut previous = None;
        loop {
            tokio::time::sleep(interval).await;
            match tick(storage.as_ref(), previous, keep).await {
                Ok(current) => previous = Some(current),
                Err(e) => tracing::warn!(error = %e, "compaction failed"),
            }
        }
    });
}

/// One tick: compacts to `previous` (at most `current - keep`); the current
/// revision, the next tick's target.
async fn tick(
    storage: &dyn Storage,
    previous: Option<i64>,
    keep: i64,
) -> Result<i64, StorageError> {
    let current = storage.current_revision().await?;
    if let Some(previous) = previous {
        compact_to(storage, previous.min(current - keep.max(0))).await?;
    }
    Ok(current)
}

/// Compacts to `target` if that is past the compaction point.
pub async fn compact_to(storage: &dyn Storage, target: i64) -> Result<(), StorageError> {
    if target <= storage.compacted_revision().await? {
        return Ok(());
    }
    match storage.compact(target).await {
        Ok(()) | Err(StorageError::Compacted { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::SqliteStorage;

    async fn put(store: &SqliteStorage, n: u32) {
        let key = format!("/registry/t/{n}");
        store
            .create(&key, b"v".to_vec().into())
            .await
            .expect("created");
    }

    #[tokio::test]
    async fn each_tick_compacts_to_the_revision_of_the_tick_before() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStorage::open(&dir.path().join("db")).expect("store");
        put(&store, 1).await;
        let first = tick(&store, None, 0).await.expect("tick");
        assert_eq!(
            store.compacted_revision().await.expect("point"),
            0,
            "nothing before the first tick"
        );
        put(&store, 2).await;
        put(&store, 3).await;
        let second = tick(&store, Some(first), 0).await.expect("tick");
        assert_eq!(store.compacted_revision().await.expect("point"), first);
        put(&store, 4).await;
        tick(&store, Some(second), 10).await.expect("tick");
        assert_eq!(
            store.compacted_revision().await.expect("point"),
            first,
            "keep holds it back"
        );
    }
}
