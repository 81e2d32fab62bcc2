//! Watchers served by the cache. Each gets its ring replay up front and live
//! events through its own bounded channel; a watcher whose channel is full
//! is cut off (its stream ends with an error item after what it already
//! received) instead of making the cache buffer without bound.

use std::sync::{Arc, Mutex, PoisonError};

use futures_util::stream::{self, StreamExt};
use tokio::sync::mpsc::{self, error::TrySendError};

use crate::storage::{Event, Revision, StorageError, WatchStream};

/// The error a watch stream ends with, set by the cache when it cuts the
/// watcher off; shared by the cache's slot and the stream.
type Terminal = Arc<Mutex<Option<StorageError>>>;

/// One registered watcher, as the cache sees it.
struct Slot {
    prefix: String,
    /// Only events with a revision above this are delivered.
    after: Revision,
    tx: mpsc::Sender<Event>,
    terminal: Terminal,
}

impl Slot {
    /// Ends this watcher's stream with `err` (after its buffered events)
    /// once the slot, and with it the channel's sender, is dropped.
    fn cut(&self, err: StorageError) {
        *self.terminal.lock().unwrap_or_else(PoisonError::into_inner) = Some(err);
    }

    /// Delivers `event` if this watcher wants it; false when the watcher is
    /// gone or was cut off for falling behind (drop the slot then).
    fn offer(&self, event: &Event) -> bool {
        let revision = event.revision();
        if revision <= self.after || !event.kv.key.starts_with(&self.prefix) {
            return !self.tx.is_closed();
        }
        match self.tx.try_send(event.clone()) {
            Ok(()) => true,
            Err(TrySendError::Closed(_)) => false,
            Err(TrySendError::Full(_)) => {
                tracing::warn!(prefix = %self.prefix, revision, "watcher fell behind; cutting it off");
                self.cut(StorageError::Unavailable(format!(
                    "watcher fell behind the watch cache at revision {revision}; \
                     watch again from the last revision received"
                )));
                false
            }
        }
    }
}

/// All watchers fed from the cache.
pub(super) struct Watchers {
    slots: Vec<Slot>,
    capacity: usize,
}

impl Watchers {
    /// No watchers; each new one gets a channel of `capacity` events.
    pub fn new(capacity: usize) -> Self {
        Watchers {
            slots: Vec::new(),
            capacity: capacity.max(1),
        }
    }

    /// Number of registered watchers.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Registers a watcher that first yields `replay`, then every live event
    /// under `prefix` with revision > `after`.
    pub fn add(&mut self, prefix: &str, after: Revision, replay: Vec<Event>) -> WatchStream {
        let (tx, rx) = mpsc::channel(self.capacity);
        let terminal = Terminal::default();
        self.slots.push(Slot {
            prefix: prefix.to_string(),
            after,
            tx,
            terminal: terminal.clone(),
        });
        let replay = stream::iter(replay.into_iter().map(Ok));
        Box::pin(replay.chain(live_stream(rx, terminal)))
    }

    /// Delivers `event` to every interested watcher; drops watchers whose
    /// stream is gone and cuts off those that fell behind.
    pub fn dispatch(&mut self, event: &Event) {
        self.slots.retain(|slot| slot.offer(event));
    }

    /// Ends every watcher's stream with `err`.
    pub fn cut_all(&mut self, err: &StorageError) {
        for slot in self.slots.drain(..) {
            slot.cut(err.clone());
        }
    }
}

impl Drop for Watchers {
    fn drop(&mut self) {
        self.cut_all(&StorageError::Unavailable("watch cache stopped".into()));
    }
}

/// Live events from `rx`; once the channel closes, the terminal error (if
/// the cache set one) is the last item.
fn live_stream(rx: mpsc::Receiver<Event>, terminal: Terminal) -> WatchStream {
    Box::pin(stream::unfold(Some((rx, terminal)), |state| async move {
        let (mut rx, terminal) = state?;
        match rx.recv().await {
            Some(event) => Some((Ok(event), Some((rx, terminal)))),
            None => {
                let err = terminal
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                err.map(|err| (Err(err), None))
            }
        }
    }))
}
