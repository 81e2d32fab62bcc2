//! An estimate of the cache's heap use, for capacity planning and the
//! memory-per-object benchmark. Value buffers shared between the live map
//! and the ring (`Bytes` clones) are counted once.

use std::collections::HashSet;
use std::mem::size_of;

use bytes::Bytes;

use super::state::CacheState;
use crate::storage::{Event, KeyValue, ServedForm};

/// Rough per-entry bookkeeping of a `BTreeMap` node (parent pointers,
/// lengths and spare slots in partly filled nodes).
const BTREE_ENTRY_OVERHEAD: usize = 16;

/// Bytes held by `state`, in two parts.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryUse {
    /// The live key-values: one per cached object.
    pub live: usize,
    /// The ring of recent events (at most its capacity of them), beyond
    /// the values the live map holds too.
    pub ring: usize,
}

impl MemoryUse {
    pub fn total(&self) -> usize {
        self.live + self.ring
    }
}

/// Bytes held by `state`: keys, values, map entries and ring slots.
/// Walks everything (O(keys + events)); not for hot paths.
pub(super) fn estimate(state: &CacheState) -> MemoryUse {
    let mut seen = HashSet::new();
    let mut live = 0;
    for kv in state.live.iter() {
        live += BTREE_ENTRY_OVERHEAD + kv_bytes(kv, &mut seen);
    }
    let mut ring = state.ring.capacity() * size_of::<Event>();
    for event in &state.ring {
        ring += event.kv.key.capacity() + value_bytes(&event.kv.value, &mut seen);
        if let Some(prev) = &event.prev {
            ring += size_of::<KeyValue>() + prev.key.capacity();
            ring += value_bytes(&prev.value, &mut seen);
        }
    }
    MemoryUse { live, ring }
}

/// A key-value's struct, key and (unless already counted) value and
/// served bytes.
fn kv_bytes(kv: &KeyValue, seen: &mut HashSet<(usize, usize)>) -> usize {
    let served = match kv.served.get() {
        Some(ServedForm::Encoded(bytes)) => value_bytes(&bytes, seen),
        _ => 0,
    };
    size_of::<KeyValue>() + kv.key.capacity() + value_bytes(&kv.value, seen) + served
}

/// A value's bytes, or 0 when the same buffer was counted before.
fn value_bytes(value: &Bytes, seen: &mut HashSet<(usize, usize)>) -> usize {
    if value.is_empty() || !seen.insert((value.as_ptr() as usize, value.len())) {
        return 0;
    }
    value.len()
}
