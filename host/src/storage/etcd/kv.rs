//! Reads and guarded writes. Each write is one etcd transaction whose
//! comparison is the guard and whose else branch reads the key, so a failed
//! guard reports the live value without a second round trip (as
//! kube-apiserver's etcd3 store does). Failed transactions consume no
//! revision.

use bytes::Bytes;
use etcd_client::{
    Compare, CompareOp, DeleteOptions, GetOptions, PutOptions, Txn, TxnOp, TxnOpResponse,
    TxnResponse,
};

use super::errors::{header_revision, malformed};
use super::EtcdStorage;
use crate::storage::{KeyValue, RangeRequest, RangeResult, Revision, StorageError, StorageResult};

impl EtcdStorage {
    pub(super) async fn get_kv(&self, key: &str) -> StorageResult<Option<KeyValue>> {
        let mut kv = self.kv.clone();
        let mut resp = self
            .call("get", kv.get(self.keys.etcd_key(key), None))
            .await?;
        self.keys.first(resp.take_kvs())
    }

    pub(super) async fn range_kvs(&self, req: RangeRequest<'_>) -> StorageResult<RangeResult> {
        let at = req.revision.filter(|r| *r > 0);
        let (start, end) = self.keys.range(req.prefix, req.start_after);
        let mut options = GetOptions::new().with_range(end);
        if let Some(limit) = req.limit.filter(|n| *n > 0) {
            options = options.with_limit(i64::try_from(limit).unwrap_or(i64::MAX));
        }
        if let Some(revision) = at {
            options = options.with_revision(revision);
        }
        let mut kv = self.kv.clone();
        let mut resp = match self.call("range", kv.get(start, Some(options))).await {
            Ok(resp) => resp,
            Err(err) => return Err(self.explain_revision_error(err, at.unwrap_or(0)).await),
        };
        let revision = match at {
            Some(revision) => revision,
            None => header_revision(resp.header())?,
        };
        let more = resp.more();
        let kvs = resp
            .take_kvs()
            .into_iter()
            .map(|kv| self.keys.key_value(kv))
            .collect::<StorageResult<Vec<_>>>()?;
        Ok(RangeResult {
            kvs,
            more,
            revision,
        })
    }

    /// Fills in the revisions of a Compacted / FutureRevision answer to a
    /// read at `requested`; other errors pass through.
    async fn explain_revision_error(&self, err: StorageError, requested: Revision) -> StorageError {
        match err {
            StorageError::Compacted { .. } => match self.compaction_point().await {
                // A compaction made outside this store (e.g. etcdctl) may be
                // ahead of compact_rev_key: report at least requested + 1.
                Ok(compacted) => StorageError::Compacted {
                    requested,
                    compacted: compacted.max(requested + 1),
                },
                Err(other) => other,
            },
            StorageError::FutureRevision { .. } => match self.latest_revision().await {
                Ok(current) => StorageError::FutureRevision { requested, current },
                Err(other) => other,
            },
            other => other,
        }
    }

    pub(super) async fn count_keys(&self, prefix: &str) -> StorageResult<i64> {
        let (start, end) = self.keys.range(prefix, None);
        let options = GetOptions::new().with_range(end).with_count_only();
        let mut kv = self.kv.clone();
        let resp = self.call("count", kv.get(start, Some(options))).await?;
        Ok(resp.count())
    }

    pub(super) async fn latest_revision(&self) -> StorageResult<Revision> {
        let options = GetOptions::new().with_count_only();
        let mut kv = self.kv.clone();
        let probe = super::compaction::COMPACT_REV_KEY;
        let resp = self.call("revision", kv.get(probe, Some(options))).await?;
        header_revision(resp.header())
    }

    pub(super) async fn create_kv(&self, key: &str, value: Bytes) -> StorageResult<KeyValue> {
        let etcd_key = self.keys.etcd_key(key);
        let txn = Txn::new()
            .when([Compare::create_revision(
                etcd_key.clone(),
                CompareOp::Equal,
                0,
            )])
            .and_then([TxnOp::put(etcd_key, value.to_vec(), None)]);
        let resp = self.txn("create", txn).await?;
        if !resp.succeeded() {
            return Err(StorageError::AlreadyExists { key: key.into() });
        }
        let revision = header_revision(resp.header())?;
        Ok(KeyValue {
            key: key.into(),
            value,
            create_revision: revision,
            mod_revision: revision,
            served: Default::default(),
        })
    }

    pub(super) async fn update_kv(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> StorageResult<KeyValue> {
        let etcd_key = self.keys.etcd_key(key);
        let put = PutOptions::new().with_prev_key();
        let txn = Txn::new()
            .when(live_with_revision(&etcd_key, Some(expected)))
            .and_then([TxnOp::put(etcd_key.clone(), value.to_vec(), Some(put))])
            .or_else([TxnOp::get(etcd_key, None)]);
        let resp = self.txn("update", txn).await?;
        if !resp.succeeded() {
            return Err(self.guard_failure(key, &resp)?);
        }
        let prev = match resp.op_responses().into_iter().next() {
            Some(TxnOpResponse::Put(mut put)) => put.take_prev_key(),
            _ => None,
        };
        let prev = prev.ok_or_else(|| malformed("update without the previous value"))?;
        Ok(KeyValue {
            key: key.into(),
            value,
            create_revision: prev.create_revision(),
            mod_revision: header_revision(resp.header())?,
            served: Default::default(),
        })
    }

    pub(super) async fn delete_kv(
        &self,
        key: &str,
        expected: Option<Revision>,
    ) -> StorageResult<KeyValue> {
        let etcd_key = self.keys.etcd_key(key);
        let delete = DeleteOptions::new().with_prev_key();
        let txn = Txn::new()
            .when(live_with_revision(&etcd_key, expected))
            .and_then([TxnOp::delete(etcd_key.clone(), Some(delete))])
            .or_else([TxnOp::get(etcd_key, None)]);
        let resp = self.txn("delete", txn).await?;
        if !resp.succeeded() {
            return Err(self.guard_failure(key, &resp)?);
        }
        let prev = match resp.op_responses().into_iter().next() {
            Some(TxnOpResponse::Delete(mut delete)) => delete.take_prev_kvs(),
            _ => Vec::new(),
        };
        let prev = self
            .keys
            .first(prev)?
            .ok_or_else(|| malformed("delete without the deleted value"))?;
        Ok(KeyValue {
            mod_revision: header_revision(resp.header())?,
            served: Default::default(),
            ..prev
        })
    }

    async fn txn(&self, what: &'static str, txn: Txn) -> StorageResult<TxnResponse> {
        let mut kv = self.kv.clone();
        self.call(what, kv.txn(txn)).await
    }

    /// The error for a failed guard, from the else branch's read of the key:
    /// `NotFound` if it is absent, else `Conflict` with its live value.
    fn guard_failure(&self, key: &str, resp: &TxnResponse) -> StorageResult<StorageError> {
        let kvs = match resp.op_responses().into_iter().next() {
            Some(TxnOpResponse::Get(mut get)) => get.take_kvs(),
            _ => return Err(malformed("failed guard without a read of the key")),
        };
        Ok(match self.keys.first(kvs)? {
            None => StorageError::NotFound { key: key.into() },
            Some(current) => StorageError::Conflict {
                key: key.into(),
                current: Some(current),
            },
        })
    }
}

/// The key exists and, when `expected` is given, was last written at it.
fn live_with_revision(etcd_key: &[u8], expected: Option<Revision>) -> Vec<Compare> {
    let mut compares = vec![Compare::create_revision(
        etcd_key.to_vec(),
        CompareOp::Greater,
        0,
    )];
    if let Some(revision) = expected {
        compares.push(Compare::mod_revision(
            etcd_key.to_vec(),
            CompareOp::Equal,
            revision,
        ));
    }
    compares
}
