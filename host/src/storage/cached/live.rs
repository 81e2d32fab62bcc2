//! The latest value of every live key under the cache's prefix, ordered by
//! key. Each key is kept once, in its key-value (a map from key to
//! key-value would hold every key twice).

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;

use crate::storage::KeyValue;

/// Live key-values by key.
#[derive(Default)]
pub(super) struct Live(BTreeSet<ByKey>);

/// A key-value ordered and looked up by its key alone.
struct ByKey(KeyValue);

impl Live {
    /// The key-values of a fresh list (keys are unique in a list).
    pub fn from_list(kvs: Vec<KeyValue>) -> Self {
        Live(kvs.into_iter().map(ByKey).collect())
    }

    /// Puts `kv` in place of the key's previous value, which it returns.
    pub fn insert(&mut self, kv: KeyValue) -> Option<KeyValue> {
        self.0.replace(ByKey(kv)).map(|old| old.0)
    }

    /// Removes the key, returning its last value.
    pub fn remove(&mut self, key: &str) -> Option<KeyValue> {
        self.0.take(key).map(|old| old.0)
    }

    pub fn get(&self, key: &str) -> Option<&KeyValue> {
        self.0.get(key).map(|kv| &kv.0)
    }

    #[cfg(test)]
    pub fn contains_key(&self, key: &str) -> bool {
        self.0.contains(key)
    }

    /// Key-values from `lower` on, ascending.
    pub fn range_from<'m>(
        &'m self,
        lower: Bound<&str>,
    ) -> impl Iterator<Item = &'m KeyValue> + use<'m> {
        self.0
            .range::<str, _>((lower, Bound::Unbounded))
            .map(|kv| &kv.0)
    }

    /// Every key-value, ascending.
    pub fn iter(&self) -> impl Iterator<Item = &KeyValue> {
        self.0.iter().map(|kv| &kv.0)
    }
}

impl Borrow<str> for ByKey {
    fn borrow(&self) -> &str {
        &self.0.key
    }
}

impl PartialEq for ByKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}

impl Eq for ByKey {}

impl PartialOrd for ByKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.key.cmp(&other.0.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(key: &str, revision: i64) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: bytes::Bytes::from_static(b"{}"),
            create_revision: revision,
            mod_revision: revision,
            served: Default::default(),
        }
    }

    #[test]
    fn a_key_is_replaced_removed_and_scanned_in_order() {
        let mut live = Live::from_list(vec![kv("/b", 1), kv("/a", 2)]);
        assert_eq!(
            live.insert(kv("/b", 3)).map(|old| old.mod_revision),
            Some(1)
        );
        assert_eq!(live.insert(kv("/c", 4)), None);
        assert_eq!(live.get("/b").map(|kv| kv.mod_revision), Some(3));
        let keys = |it: &mut dyn Iterator<Item = &KeyValue>| {
            it.map(|kv| kv.key.clone()).collect::<Vec<_>>()
        };
        assert_eq!(
            keys(&mut live.range_from(Bound::Excluded("/a"))),
            ["/b", "/c"]
        );
        assert_eq!(live.remove("/a").map(|old| old.mod_revision), Some(2));
        assert_eq!(live.remove("/a"), None);
        assert_eq!(keys(&mut live.iter()), ["/b", "/c"]);
    }
}
