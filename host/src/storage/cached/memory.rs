//! An estimate of the cache's heap use, for capacity planning and the
//! memory-per-object benchmark. Value buffers shared between the live map
//! and the ring (`Bytes` clones) are counted once.

use std::collections::HashSet;
use std::mem::size_of;

use bytes::Bytes;

use super::state::CacheState;
use crate::storage::{Event, KeyValue};

/// Rough per-entry bookkeeping of a `BTreeMap` node (parent pointers,
/// lengths and spare slots in partly filled nodes).
const BTREE_ENTRY_OVERHEAD: usize = 16;

/// Bytes held by `state`: keys, values, map entries and ring slots.
/// Walks everything (O(keys + events)); not for hot paths.
pub(super) fn estimate(state: &CacheState) -> usize {
    let mut seen = HashSet::new();
    let mut total = 0;
    for (key, kv) in &state.live {
        total += key.capacity() + size_of::<String>() + BTREE_ENTRY_OVERHEAD;
        total += kv_bytes(kv, &mut seen);
    }
    total += state.ring.capacity() * size_of::<Event>();
    for event in &state.ring {
        total += event.kv.key.capacity() + value_bytes(&event.kv.value, &mut seen);
        if let Some(prev) = &event.prev {
            total += size_of::<KeyValue>() + prev.key.capacity();
            total += value_bytes(&prev.value, &mut seen);
        }
    }
    total
}

/// A key-value's struct, key and (unless already counted) value and
/// served bytes.
fn kv_bytes(kv: &KeyValue, seen: &mut HashSet<(usize, usize)>) -> usize {
    let served = kv.served.get().map_or(0, |b| value_bytes(&b, seen));
    size_of::<KeyValue>() + kv.key.capacity() + value_bytes(&kv.value, seen) + served
}

/// A value's bytes, or 0 when the same buffer was counted before.
fn value_bytes(value: &Bytes, seen: &mut HashSet<(usize, usize)>) -> usize {
    if value.is_empty() || !seen.insert((value.as_ptr() as usize, value.len())) {
        return 0;
    }
    value.len()
}
