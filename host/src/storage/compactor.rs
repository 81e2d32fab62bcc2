//! Periodic compaction for any backend (kube-apiserver compacts etcd every
//! five minutes): keep at least `keep` revisions of history, drop older ones.
//! Several servers on one store may all run it; a compaction someone else
//! already did is not an error.

use super::{Storage, StorageError};
use std::sync::Arc;
use std::time::Duration;

/// Compacts `storage` every `interval`, keeping `keep` revisions.
pub fn spawn(storage: Arc<dyn Storage>, interval: Duration, keep: i64) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(interval).await;
            if let Err(e) = compact_once(storage.as_ref(), keep).await {
                tracing::warn!(error = %e, "compaction failed");
            }
        }
    });
}

/// One compaction to `current - keep`, if that is past the compaction point.
pub async fn compact_once(storage: &dyn Storage, keep: i64) -> Result<(), StorageError> {
    let current = storage.current_revision().await?;
    let target = current - keep.max(0);
    if target <= storage.compacted_revision().await? {
        return Ok(());
    }
    match storage.compact(target).await {
        Ok(()) | Err(StorageError::Compacted { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}
