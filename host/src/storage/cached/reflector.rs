//! The background task that fills the cache, like kube-apiserver's
//! reflector: list everything under the cached prefix at one revision, then
//! follow the inner store's watch from it. A broken watch is resumed from
//! the cache's revision (watchers keep going); only when that revision was
//! compacted away is everything re-listed (and watchers cut off).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::time::MissedTickBehavior;

use super::Shared;
use crate::storage::{
    KeyValue, ProgressWatch, RangeRequest, Revision, StorageError, StorageResult, WatchItem,
};

/// What to do after the inner watch stopped.
#[derive(Debug, PartialEq)]
enum Next {
    /// Watch again from the cache's revision.
    Resume,
    /// The cache's revision is gone from the store: list again.
    Relist,
}

/// Runs until the task is aborted (when the `CachedStorage` is dropped).
pub(super) async fn run(shared: Arc<Shared>) {
    let mut next = Next::Relist;
    loop {
        if next == Next::Relist {
            if let Err(err) = relist(&shared).await {
                tracing::warn!(%err, "watch cache list failed; retrying");
                tokio::time::sleep(shared.options.retry_backoff).await;
                continue;
            }
        }
        next = follow(&shared).await;
    }
}

/// Lists the cached prefix and replaces the cache's contents with it.
async fn relist(shared: &Shared) -> StorageResult<()> {
    shared.set_synced(false);
    let compacted = shared.inner.compacted_revision().await?;
    let (kvs, revision) = list_all(shared).await?;
    let keys = kvs.len();
    let listed = kvs.iter().map(|kv| kv.key.as_str());
    shared.metrics.initialized(listed, revision);
    {
        let mut state = shared.write_state();
        state.reset(kvs, revision);
        state.compacted = state.compacted.max(compacted);
    }
    shared.revision.send_replace(revision);
    tracing::info!(revision, keys, prefix = %shared.options.prefix, "watch cache listed");
    Ok(())
}

/// Every live key under the prefix, paged, pinned at the first page's revision.
async fn list_all(shared: &Shared) -> StorageResult<(Vec<KeyValue>, Revision)> {
    let mut kvs = Vec::new();
    let mut pinned: Option<Revision> = None;
    let mut start_after: Option<String> = None;
    loop {
        let req = RangeRequest {
            prefix: &shared.options.prefix,
            start_after: start_after.as_deref(),
            limit: Some(shared.options.list_page.max(1)),
            revision: pinned,
        };
        let page = shared.inner.range(req).await?;
        let revision = *pinned.get_or_insert(page.revision);
        start_after = page.kvs.last().map(|kv| kv.key.clone());
        kvs.extend(page.kvs);
        if !page.more {
            return Ok((kvs, revision));
        }
    }
}

/// Opens the inner watch at the cache's revision and applies its events
/// until it breaks.
async fn follow(shared: &Shared) -> Next {
    let from = shared.read_state().revision;
    let watch = match shared
        .inner
        .watch_progress(&shared.options.prefix, from)
        .await
    {
        Ok(watch) => watch,
        Err(StorageError::Compacted { compacted, .. }) => {
            tracing::info!(
                from,
                compacted,
                "watch cache fell below compaction; re-listing"
            );
            return Next::Relist;
        }
        Err(err) => {
            tracing::warn!(%err, from, "watch cache could not watch its source; retrying");
            tokio::time::sleep(shared.options.retry_backoff).await;
            return Next::Resume;
        }
    };
    shared.set_synced(true);
    shared.set_progress_request(watch.request.clone());
    let (next, applied) = apply_stream(shared, watch).await;
    shared.set_progress_request(None);
    shared.set_synced(false);
    if applied == 0 && next == Next::Resume {
        // Broke straight away: do not spin against a failing store.
        tokio::time::sleep(shared.options.retry_backoff).await;
    }
    next
}

/// Applies events until the stream ends or fails; also refreshes the
/// compaction point now and then. Returns what to do next and how many
/// events were applied.
async fn apply_stream(shared: &Shared, watch: ProgressWatch) -> (Next, u64) {
    let mut stream = watch.stream;
    let mut ticker = tokio::time::interval(
        shared
            .options
            .compaction_poll
            .max(Duration::from_millis(10)),
    );
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut applied = 0;
    loop {
        tokio::select! {
            item = stream.next() => match item {
                Some(Ok(WatchItem::Event(event))) => {
                    shared.apply(event);
                    applied += 1;
                }
                Some(Ok(WatchItem::Progress(revision))) => shared.progress(revision),
                Some(Err(err)) => {
                    tracing::warn!(%err, "watch cache source watch failed");
                    let next = match err {
                        StorageError::Compacted { .. } => Next::Relist,
                        _ => Next::Resume,
                    };
                    return (next, applied);
                }
                None => {
                    tracing::warn!("watch cache source watch ended");
                    return (Next::Resume, applied);
                }
            },
            _ = ticker.tick() => refresh_compacted(shared).await,
        }
    }
}

/// Learns compactions done by others (directly on the inner store).
async fn refresh_compacted(shared: &Shared) {
    match shared.inner.compacted_revision().await {
        Ok(compacted) => shared.note_compacted(compacted),
        Err(err) => tracing::debug!(%err, "watch cache could not read the compaction point"),
    }
}
