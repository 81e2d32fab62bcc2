//! Range and count answered from a [`CacheState`]: at the latest revision
//! straight from the live map, at a recent past revision by undoing the
//! ring's newer events over it. Paging follows [`crate::storage::Storage::range`].

use std::collections::BTreeMap;
use std::ops::Bound;

use super::live::Live;
use super::state::CacheState;
use crate::storage::{KeyValue, RangeResult, Revision};

/// The part of a range request that selects keys.
#[derive(Clone, Copy, Debug)]
pub(super) struct Selector<'a> {
    pub prefix: &'a str,
    pub start_after: Option<&'a str>,
}

impl<'a> Selector<'a> {
    /// The lower bound of the key space to scan.
    fn lower(&self) -> Bound<&'a str> {
        match self.start_after {
            Some(after) if after >= self.prefix => Bound::Excluded(after),
            _ => Bound::Included(self.prefix),
        }
    }

    /// Whether `key` is selected.
    fn selects(&self, key: &str) -> bool {
        key.starts_with(self.prefix) && self.start_after.is_none_or(|after| key > after)
    }

    /// Live keys selected, ascending.
    fn scan<'m>(
        &self,
        live: &'m Live,
    ) -> impl Iterator<Item = (&'m str, &'m KeyValue)> + use<'m, 'a> {
        let prefix = self.prefix;
        live.range_from(self.lower())
            .take_while(move |kv| kv.key.starts_with(prefix))
            .map(|kv| (kv.key.as_str(), kv))
    }
}

/// Live keys at the cache's revision.
pub(super) fn range_latest(
    state: &CacheState,
    sel: Selector<'_>,
    limit: Option<usize>,
) -> RangeResult {
    page(
        sel.scan(&state.live).map(|(_, kv)| kv),
        limit,
        state.revision,
    )
}

/// Keys as they were at `at`; the caller checked `state.covers_read(at)`.
pub(super) fn range_at(
    state: &CacheState,
    sel: Selector<'_>,
    limit: Option<usize>,
    at: Revision,
) -> RangeResult {
    let overlay = undo_overlay(state, sel, at);
    page(merge(sel.scan(&state.live), overlay), limit, at)
}

/// Number of live keys under `prefix` at the cache's revision.
pub(super) fn count(state: &CacheState, prefix: &str) -> i64 {
    let sel = Selector {
        prefix,
        start_after: None,
    };
    i64::try_from(sel.scan(&state.live).count()).unwrap_or(i64::MAX)
}

/// For every selected key written after `at`: its value at `at` (`None` if
/// it did not exist), i.e. the `prev` of its oldest event after `at`.
fn undo_overlay<'s>(
    state: &'s CacheState,
    sel: Selector<'_>,
    at: Revision,
) -> BTreeMap<&'s str, Option<&'s KeyValue>> {
    let mut overlay = BTreeMap::new();
    for event in state.events_after(at) {
        if sel.selects(&event.kv.key) {
            overlay
                .entry(event.kv.key.as_str())
                .or_insert(event.prev.as_ref());
        }
    }
    overlay
}

/// Merges the live scan with the overlay (which wins on equal keys), in key
/// order, skipping keys the overlay marks absent.
fn merge<'s>(
    live: impl Iterator<Item = (&'s str, &'s KeyValue)>,
    overlay: BTreeMap<&'s str, Option<&'s KeyValue>>,
) -> impl Iterator<Item = &'s KeyValue> {
    let mut live = live.peekable();
    let mut overlay = overlay.into_iter().peekable();
    std::iter::from_fn(move || loop {
        let next_live = live.peek().map(|(k, _)| *k);
        let next_overlay = overlay.peek().map(|(k, _)| *k);
        match (next_live, next_overlay) {
            (None, None) => return None,
            (Some(l), Some(o)) if l == o => {
                // The overlay's value replaces the live one.
                live.next();
            }
            (Some(l), Some(o)) if l < o => return live.next().map(|(_, kv)| kv),
            (Some(_), None) => return live.next().map(|(_, kv)| kv),
            _ => {}
        }
        if let Some((_, Some(kv))) = overlay.next() {
            return Some(kv);
        }
    })
}

/// Collects one page: up to `limit` values (`None`/0 = all) and whether
/// more follow.
fn page<'s>(
    iter: impl Iterator<Item = &'s KeyValue>,
    limit: Option<usize>,
    revision: Revision,
) -> RangeResult {
    let limit = limit.filter(|n| *n > 0);
    let mut kvs: Vec<KeyValue> = match limit {
        Some(n) => iter.take(n.saturating_add(1)).cloned().collect(),
        None => iter.cloned().collect(),
    };
    let more = limit.is_some_and(|n| kvs.len() > n);
    if let Some(n) = limit {
        kvs.truncate(n);
    }
    RangeResult {
        kvs,
        more,
        revision,
    }
}
