//! Watch streams of the SQLite backend.
//!
//! A watch subscribes to the in-process broadcast of committed events first,
//! then replays matching rows of the log (in batches) up to a snapshot
//! revision, then serves live events, dropping those at or below the snapshot.
//! Writers broadcast every revision in order, so live revisions are
//! contiguous: a hole means this watcher fell behind the broadcast buffer and
//! lost events, and it gets an error item instead (then the stream ends).

use std::collections::VecDeque;
use std::sync::{Arc, Weak};

use tokio::sync::broadcast::{self, error::RecvError};

use super::log::{self, KeyRange};
use super::{blocking, Shared};
use crate::storage::{Event, Revision, StorageError, StorageResult, WatchStream};

/// Log rows read per replay query.
const REPLAY_BATCH: i64 = 256;

/// Starts a watch of `prefix` for events with revision > `after`.
pub(super) async fn open(
    shared: Arc<Shared>,
    prefix: String,
    after: Revision,
) -> StorageResult<WatchStream> {
    let rx = shared.events.subscribe();
    let compacted = blocking(shared.clone(), |s| s.read(log::compacted_revision)).await?;
    if after < compacted {
        return Err(StorageError::Compacted {
            requested: after,
            compacted,
        });
    }
    let state = WatchState {
        shared: Arc::downgrade(&shared),
        range: KeyRange::prefix(&prefix),
        prefix,
        cursor: after,
        live_from: None,
        pending: VecDeque::new(),
        rx,
        done: false,
    };
    let stream = futures_util::stream::unfold(state, |mut state| async move {
        let item = state.next_item().await?;
        Some((item, state))
    });
    Ok(Box::pin(stream))
}

struct WatchState {
    /// Weak, so an open watch does not keep the database open.
    shared: Weak<Shared>,
    range: KeyRange,
    prefix: String,
    /// Highest revision covered so far (replayed, skipped or delivered).
    cursor: Revision,
    /// Set once replay has caught up: live events above `cursor` follow.
    live_from: Option<Revision>,
    pending: VecDeque<Event>,
    rx: broadcast::Receiver<Event>,
    done: bool,
}

/// One replay query's answer.
struct Batch {
    events: Vec<Event>,
    /// The snapshot's current revision.
    snapshot: Revision,
}

impl WatchState {
    async fn next_item(&mut self) -> Option<StorageResult<Event>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            let step = match self.live_from {
                None => self.replay_batch().await.map(|()| None),
                Some(_) => self.next_live().await,
            };
            match step {
                Ok(Some(event)) => return Some(Ok(event)),
                Ok(None) => continue,
                Err(err) => {
                    self.done = true;
                    return Some(Err(err));
                }
            }
        }
    }

    /// Reads the next batch of the log into `pending`; switches to live mode
    /// once the log holds nothing more.
    async fn replay_batch(&mut self) -> StorageResult<()> {
        let shared = self.shared.upgrade().ok_or_else(closed)?;
        let (range, cursor) = (self.range.clone(), self.cursor);
        let batch = blocking(shared, move |s| s.read(|c| read_batch(c, &range, cursor))).await?;
        let complete = (batch.events.len() as i64) < REPLAY_BATCH;
        if complete {
            self.cursor = batch.snapshot;
            self.live_from = Some(batch.snapshot);
        } else if let Some(last) = batch.events.last() {
            self.cursor = last.revision();
        }
        self.pending.extend(batch.events);
        Ok(())
    }

    /// The next live event for this watch, `None` for one to skip.
    async fn next_live(&mut self) -> StorageResult<Option<Event>> {
        let event = match self.rx.recv().await {
            Ok(event) => event,
            // The next received revision shows whether anything was lost.
            Err(RecvError::Lagged(_)) => return Ok(None),
            Err(RecvError::Closed) => return Err(closed()),
        };
        let revision = event.revision();
        if revision <= self.cursor {
            return Ok(None); // already replayed from the log
        }
        if revision > self.cursor + 1 {
            return Err(StorageError::Internal(format!(
                "watch fell behind: events after revision {} were dropped before delivery; \
                 restart the watch from the last received revision",
                self.cursor
            )));
        }
        self.cursor = revision;
        Ok(event.kv.key.starts_with(&self.prefix).then_some(event))
    }
}

/// Matching events after `cursor`, read in one snapshot that also proves
/// the history after `cursor` has not been compacted away.
fn read_batch(
    conn: &rusqlite::Connection,
    range: &KeyRange,
    cursor: Revision,
) -> StorageResult<Batch> {
    let compacted = log::compacted_revision(conn)?;
    if cursor < compacted {
        return Err(StorageError::Compacted {
            requested: cursor,
            compacted,
        });
    }
    Ok(Batch {
        snapshot: log::current_revision(conn)?,
        events: log::events_after(conn, range, cursor, REPLAY_BATCH)?,
    })
}

fn closed() -> StorageError {
    StorageError::Unavailable("storage was closed".to_string())
}
