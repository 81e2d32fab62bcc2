//! The cache's in-memory state: the latest value of every live key, a bounded
//! ring of recent events (for watch replay and reads at past revisions), and
//! the registered watchers that live events are fanned out to.

use std::collections::VecDeque;

use super::live::Live;
use super::watchers::Watchers;
use crate::storage::{Event, EventKind, KeyValue, Revision, StorageError};

/// Everything the cache knows, guarded by one lock in [`super::Shared`].
pub(super) struct CacheState {
    /// True while the cache follows a live inner watch; when false every
    /// request is delegated to the inner store.
    pub synced: bool,
    /// The revision the cache reflects: the list revision, the last applied
    /// event, or a later revision the store reported progress to.
    pub revision: Revision,
    /// The revision of the last applied event (or the list): later events
    /// are applied even when progress moved `revision` past them.
    last_event: Revision,
    /// The last progress revision reported, to trust a repeated one.
    last_progress: Revision,
    /// The oldest revision whose state the ring can reconstruct: the list
    /// revision, or the revision of the last event evicted from the ring.
    pub base: Revision,
    /// The inner store's compaction point as last seen; revisions below it
    /// are never served from memory, so clients get `Compacted` as usual.
    pub compacted: Revision,
    /// Latest value of every live key under the cached prefix.
    pub live: Live,
    /// Recent events in revision order, oldest first.
    pub ring: VecDeque<Event>,
    ring_capacity: usize,
    pub watchers: Watchers,
}

impl CacheState {
    /// An empty, unsynced state.
    pub fn new(ring_capacity: usize, watcher_capacity: usize) -> Self {
        CacheState {
            synced: false,
            revision: 0,
            last_event: 0,
            last_progress: 0,
            base: 0,
            compacted: 0,
            live: Live::default(),
            ring: VecDeque::new(),
            ring_capacity: ring_capacity.max(1),
            watchers: Watchers::new(watcher_capacity),
        }
    }

    /// Replaces the contents with a fresh list taken at `revision`. Watchers
    /// cannot be continued across the gap, so they are cut off.
    pub fn reset(&mut self, kvs: Vec<KeyValue>, revision: Revision) {
        self.live = Live::from_list(kvs);
        self.ring.clear();
        self.base = revision;
        self.revision = revision;
        self.last_event = revision;
        self.watchers.cut_all(&StorageError::Unavailable(
            "watch cache re-listed its source; re-list and watch again".into(),
        ));
    }

    /// Applies one event from the inner watch: updates the live map, fans the
    /// event out to watchers and appends it to the ring. Events at or below
    /// the last applied one (duplicates) are ignored.
    pub fn apply(&mut self, mut event: Event) {
        let revision = event.revision();
        if revision <= self.last_event {
            tracing::debug!(revision, cached = self.last_event, "skipping stale event");
            return;
        }
        let old = match event.kind {
            EventKind::Put => self.live.insert(event.kv.clone()),
            EventKind::Delete => self.live.remove(&event.kv.key),
        };
        // The map held the exact previous value (the stream is gap-free), so
        // use it: it is authoritative and shares the value's bytes.
        if let Some(old) = old {
            if event.kind == EventKind::Delete {
                event.kv.value = old.value.clone();
            }
            event.prev = Some(old);
        }
        self.last_event = revision;
        self.revision = self.revision.max(revision);
        self.watchers.dispatch(&event);
        self.ring.push_back(event);
        self.evict();
    }

    /// Records that the store has reported progress to `revision`. etcd
    /// before 3.4.25/3.5.8 could send that report ahead of an event of the
    /// same revision (etcd-io/etcd#15220), so, as kube-apiserver does, a
    /// first report only vouches for the revision before it; the same
    /// report again is trusted.
    pub fn progress(&mut self, revision: Revision) {
        let trusted = if revision == self.last_progress {
            revision
        } else {
            revision - 1
        };
        self.last_progress = revision;
        self.revision = self.revision.max(trusted);
    }

    /// Drops the oldest events beyond the ring's capacity.
    fn evict(&mut self) {
        while self.ring.len() > self.ring_capacity {
            if let Some(old) = self.ring.pop_front() {
                self.base = old.revision();
            }
        }
    }

    /// Whether a read at the past revision `at` can be answered from memory.
    pub fn covers_read(&self, at: Revision) -> bool {
        self.synced && at >= self.base && at >= self.compacted && at <= self.revision
    }

    /// Whether a watch from `after` can be replayed from memory. `after`
    /// may be ahead of the cache (it filters live events then).
    pub fn covers_watch(&self, after: Revision) -> bool {
        self.synced && after >= self.base && after >= self.compacted
    }

    /// Events in the ring with revision > `after`, oldest first.
    pub fn events_after(&self, after: Revision) -> impl Iterator<Item = &Event> {
        let start = self.ring.partition_point(|e| e.revision() <= after);
        self.ring.range(start..)
    }
}
