//! Compaction, coordinated like kube-apiserver's compactor
//! (`storage/etcd3/compact.go`): etcd does not report its compaction point,
//! so it is recorded in the global (unprefixed) key `compact_rev_key`, whose
//! value is the last compacted revision in decimal and whose etcd `version`
//! serves as a logical clock. A compaction first moves the key with a
//! compare-and-swap on that version, then compacts etcd. Several servers
//! sharing one etcd (and kube-apiserver itself) thus agree on the point.

use etcd_client::{CompactionOptions, Compare, CompareOp, Txn, TxnOp};

use super::errors::header_revision;
use super::EtcdStorage;
use crate::storage::{Revision, StorageError, StorageResult};

/// The key kube-apiserver's compactor maintains; deliberately outside the
/// key prefix, as etcd's compaction is global.
pub(super) const COMPACT_REV_KEY: &str = "compact_rev_key";

/// Compare-and-swap rounds before giving up on a contended compaction.
const MAX_ATTEMPTS: usize = 8;

/// The recorded compaction point.
struct Marker {
    /// `compact_rev_key`'s version (0 when absent): the CAS token.
    version: i64,
    /// The last compacted revision (0 when never compacted).
    compacted: Revision,
    /// etcd's current revision when the marker was read.
    current: Revision,
}

impl EtcdStorage {
    /// The last compacted revision, from `compact_rev_key`.
    pub(super) async fn compaction_point(&self) -> StorageResult<Revision> {
        Ok(self.marker().await?.compacted)
    }

    /// Compacts etcd at `revision`: `FutureRevision` above the current
    /// revision, `Compacted` at or below the recorded point. History is
    /// dropped logically at once; etcd frees the space in the background.
    pub(super) async fn compact_to(&self, revision: Revision) -> StorageResult<()> {
        for _ in 0..MAX_ATTEMPTS {
            let marker = self.marker().await?;
            if revision > marker.current {
                return Err(StorageError::FutureRevision {
                    requested: revision,
                    current: marker.current,
                });
            }
            if revision <= marker.compacted {
                return Err(StorageError::Compacted {
                    requested: revision,
                    compacted: marker.compacted,
                });
            }
            if self.claim(&marker, revision).await? {
                return self.compact_etcd(revision).await;
            }
            // Another server moved the marker in between: look again.
        }
        Err(StorageError::Unavailable(format!(
            "compaction at {revision} lost {MAX_ATTEMPTS} races for {COMPACT_REV_KEY}"
        )))
    }

    async fn marker(&self) -> StorageResult<Marker> {
        let mut kv = self.kv.clone();
        let mut resp = self
            .call("compaction marker", kv.get(COMPACT_REV_KEY, None))
            .await?;
        let current = header_revision(resp.header())?;
        let Some(kv) = resp.take_kvs().into_iter().next() else {
            return Ok(Marker {
                version: 0,
                compacted: 0,
                current,
            });
        };
        Ok(Marker {
            version: kv.version(),
            compacted: parse_revision(kv.value())?,
            current,
        })
    }

    /// Records `revision` as the compaction point if nobody else moved the
    /// marker since it was read; false if somebody did.
    async fn claim(&self, marker: &Marker, revision: Revision) -> StorageResult<bool> {
        let txn = Txn::new()
            .when([Compare::version(
                COMPACT_REV_KEY,
                CompareOp::Equal,
                marker.version,
            )])
            .and_then([TxnOp::put(COMPACT_REV_KEY, revision.to_string(), None)]);
        let mut kv = self.kv.clone();
        Ok(self
            .call("compaction claim", kv.txn(txn))
            .await?
            .succeeded())
    }

    async fn compact_etcd(&self, revision: Revision) -> StorageResult<()> {
        let mut kv = self.kv.clone();
        match self
            .call(
                "compact",
                kv.compact(revision, Some(CompactionOptions::new())),
            )
            .await
        {
            Ok(_) => {
                tracing::info!(revision, "compacted etcd");
                Ok(())
            }
            // Compacted further by someone not using compact_rev_key.
            Err(StorageError::Compacted { .. }) => {
                tracing::warn!(revision, "etcd was already compacted past this revision");
                Err(StorageError::Compacted {
                    requested: revision,
                    compacted: revision,
                })
            }
            Err(err) => Err(err),
        }
    }
}

/// Parses `compact_rev_key`'s value (kube writes `strconv.FormatInt`).
pub(super) fn parse_revision(value: &[u8]) -> StorageResult<Revision> {
    std::str::from_utf8(value)
        .ok()
        .and_then(|text| text.trim().parse::<Revision>().ok())
        .ok_or_else(|| {
            StorageError::Internal(format!(
                "{COMPACT_REV_KEY} holds {:?}, not a revision",
                String::from_utf8_lossy(value)
            ))
        })
}
