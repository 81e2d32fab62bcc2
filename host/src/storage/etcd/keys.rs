//! Mapping between the store's keys and etcd keys (the key prefix), and
//! from etcd's key-values to [`KeyValue`].

use bytes::Bytes;

use crate::storage::{prefix_end, KeyValue, StorageError, StorageResult};

/// etcd's "no upper bound" range end, and the smallest non-empty key (etcd
/// rejects empty keys).
const NUL: &[u8] = b"\0";

/// The key prefix of one store.
#[derive(Clone, Debug)]
pub(super) struct Keys {
    prefix: String,
}

impl Keys {
    pub(super) fn new(prefix: &str) -> Self {
        Keys {
            prefix: prefix.to_string(),
        }
    }

    /// The etcd key of `key`.
    pub(super) fn etcd_key(&self, key: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.prefix.len() + key.len());
        out.extend_from_slice(self.prefix.as_bytes());
        out.extend_from_slice(key.as_bytes());
        out
    }

    /// The etcd range `[start, end)` of the keys under `prefix` that sort
    /// after `start_after`. `end` is `"\0"` when there is no upper bound.
    pub(super) fn range(&self, prefix: &str, start_after: Option<&str>) -> (Vec<u8>, Vec<u8>) {
        let first = self.etcd_key(prefix);
        let end = prefix_end(&first).unwrap_or_else(|| NUL.to_vec());
        let start = match start_after {
            Some(after) => {
                let mut after = self.etcd_key(after);
                after.push(0);
                after.max(first)
            }
            None => first,
        };
        let start = if start.is_empty() {
            NUL.to_vec()
        } else {
            start
        };
        (start, end)
    }

    /// The store's key for an etcd key.
    pub(super) fn store_key(&self, etcd_key: &[u8]) -> StorageResult<String> {
        let rest = etcd_key
            .strip_prefix(self.prefix.as_bytes())
            .ok_or_else(|| {
                StorageError::Internal(format!(
                    "etcd key {:?} is outside the key prefix {:?}",
                    String::from_utf8_lossy(etcd_key),
                    self.prefix
                ))
            })?;
        String::from_utf8(rest.to_vec()).map_err(|_| {
            StorageError::Internal(format!(
                "etcd key {:?} is not UTF-8",
                String::from_utf8_lossy(etcd_key)
            ))
        })
    }

    /// Converts an owned etcd key-value (no copy of the value).
    pub(super) fn key_value(&self, kv: etcd_client::KeyValue) -> StorageResult<KeyValue> {
        let (create_revision, mod_revision) = (kv.create_revision(), kv.mod_revision());
        let (key, value) = kv.into_key_value();
        Ok(KeyValue {
            key: self.store_key(&key)?,
            value: Bytes::from(value),
            create_revision,
            mod_revision,
            served: Default::default(),
        })
    }

    /// Converts a borrowed etcd key-value (copies it).
    pub(super) fn key_value_ref(&self, kv: &etcd_client::KeyValue) -> StorageResult<KeyValue> {
        Ok(KeyValue {
            key: self.store_key(kv.key())?,
            value: Bytes::copy_from_slice(kv.value()),
            create_revision: kv.create_revision(),
            mod_revision: kv.mod_revision(),
            served: Default::default(),
        })
    }

    /// The first of `kvs`, converted.
    pub(super) fn first(&self, kvs: Vec<etcd_client::KeyValue>) -> StorageResult<Option<KeyValue>> {
        kvs.into_iter()
            .next()
            .map(|kv| self.key_value(kv))
            .transpose()
    }
}
