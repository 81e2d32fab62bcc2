//! Watch streams: one etcd watch (its own gRPC stream on the shared
//! connection) per [`Storage::watch`](crate::storage::Storage::watch) call,
//! started at `after_revision + 1` with `prev_kv`, so etcd replays history
//! and then streams live events, in revision order, each exactly once.
//!
//! Like kube-apiserver's etcd3 watcher, the stream does not resume by
//! itself: a broken connection, a cancellation or a compaction that
//! overtook the watcher yields one error item, then the stream ends.
//!
//! A watch opened for progress also passes on etcd's answers to progress
//! requests (an empty response carrying the current revision), which the
//! watch cache asks for when etcd's revision moved for keys it does not see.

use std::collections::VecDeque;
use std::sync::Arc;

use etcd_client::{
    EventType, WatchOptions, WatchRequestSender, WatchResponse, WatchResponseStream,
};
use futures_util::StreamExt;
use tokio::sync::Mutex;

use super::errors::{self, malformed};
use super::keys::Keys;
use super::EtcdStorage;
use crate::storage::{
    Event, EventKind, KeyValue, ProgressRequest, ProgressWatch, Revision, StorageError,
    StorageResult, WatchItem, WatchStream,
};

/// Starts a watch of `prefix` for events with revision > `after`. Fails here
/// (not as a stream item) when `after` is below the compaction point or etcd
/// cannot be reached.
pub(super) async fn open(
    store: &EtcdStorage,
    prefix: &str,
    after: Revision,
) -> StorageResult<WatchStream> {
    let (_, items) = start(store, prefix, after).await?;
    Ok(Box::pin(items.filter_map(|item| async move {
        match item {
            Ok(WatchItem::Event(event)) => Some(Ok(event)),
            Ok(WatchItem::Progress(_)) => None,
            Err(err) => Some(Err(err)),
        }
    })))
}

/// [`open`], plus progress reports on request.
pub(super) async fn open_progress(
    store: &EtcdStorage,
    prefix: &str,
    after: Revision,
) -> StorageResult<ProgressWatch> {
    let (sender, stream) = start(store, prefix, after).await?;
    let request: ProgressRequest = Arc::new(move || {
        let sender = sender.clone();
        Box::pin(async move {
            if let Err(err) = sender.lock().await.request_progress().await {
                tracing::debug!(%err, "etcd progress request failed");
            }
        })
    });
    Ok(ProgressWatch {
        stream,
        request: Some(request),
    })
}

type Items = std::pin::Pin<Box<dyn futures_util::Stream<Item = StorageResult<WatchItem>> + Send>>;

/// Opens the etcd watch; returns its request side and its items.
async fn start(
    store: &EtcdStorage,
    prefix: &str,
    after: Revision,
) -> StorageResult<(Arc<Mutex<WatchRequestSender>>, Items)> {
    // etcd would still start a watch at the compaction point itself; the
    // trait (like the SQLite backend) needs after_revision >= that point.
    let compacted = store.compaction_point().await?;
    if after < compacted {
        return Err(StorageError::Compacted {
            requested: after,
            compacted,
        });
    }
    let (key, end) = store.keys.range(prefix, None);
    let options = WatchOptions::new()
        .with_range(end)
        .with_start_revision(after.max(0) + 1)
        .with_prev_key();
    let mut client = store.watch.clone();
    let (sender, stream) = store
        .call("watch", client.watch(key, Some(options)))
        .await?
        .split();
    let sender = Arc::new(Mutex::new(sender));
    let mut state = WatchState {
        stream,
        _sender: sender.clone(),
        keys: store.keys.clone(),
        cursor: after,
        pending: VecDeque::new(),
        failure: None,
        done: false,
    };
    // etcd confirms the watch (or cancels it, e.g. for a compaction that
    // raced with the check above) in its first response.
    let first = store.call("watch", state.stream.message()).await?;
    state.absorb(first);
    if let Some(err) = state.failure.take() {
        return Err(err);
    }
    let stream = futures_util::stream::unfold(state, |mut state| async move {
        let item = state.next_item().await?;
        Some((item, state))
    });
    Ok((sender, Box::pin(stream)))
}

struct WatchState {
    stream: WatchResponseStream,
    /// Keeps the request side of the gRPC stream open.
    _sender: Arc<Mutex<WatchRequestSender>>,
    keys: Keys,
    /// Revision of the last event taken from etcd (or the start point).
    cursor: Revision,
    /// Converted events and progress marks not yet handed out.
    pending: VecDeque<WatchItem>,
    /// The error to report once `pending` is drained.
    failure: Option<StorageError>,
    done: bool,
}

impl WatchState {
    async fn next_item(&mut self) -> Option<StorageResult<WatchItem>> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                return Some(Ok(item));
            }
            if self.done {
                return None;
            }
            if let Some(err) = self.failure.take() {
                self.done = true;
                tracing::debug!(%err, "etcd watch ended");
                return Some(Err(err));
            }
            let message = self.stream.message().await.map_err(errors::from_etcd);
            match message {
                Ok(response) => self.absorb(response),
                Err(err) => self.failure = Some(err),
            }
        }
    }

    /// Queues the events of one etcd response, or records why it ends the
    /// watch.
    fn absorb(&mut self, response: Option<WatchResponse>) {
        let Some(response) = response else {
            self.failure = Some(StorageError::Unavailable(
                "etcd closed the watch stream".into(),
            ));
            return;
        };
        if response.compact_revision() > 0 {
            self.failure = Some(StorageError::Compacted {
                requested: self.cursor,
                compacted: response.compact_revision(),
            });
            return;
        }
        if response.canceled() {
            self.failure = Some(StorageError::Unavailable(format!(
                "etcd canceled the watch: {}",
                response.cancel_reason()
            )));
            return;
        }
        if response.events().is_empty() && !response.created() {
            if let Some(header) = response.header() {
                self.pending
                    .push_back(WatchItem::Progress(header.revision()));
            }
            return;
        }
        for event in response.events() {
            match convert(&self.keys, event) {
                Ok(event) => {
                    self.cursor = event.revision();
                    self.pending.push_back(WatchItem::Event(event));
                }
                Err(err) => {
                    self.failure = Some(err);
                    return;
                }
            }
        }
    }
}

/// Maps an etcd event. A delete carries the last value (from `prev_kv`) with
/// the delete's revision as mod_revision.
fn convert(keys: &Keys, event: &etcd_client::Event) -> StorageResult<Event> {
    let kv = event
        .kv()
        .ok_or_else(|| malformed("watch event without a key"))?;
    let prev = event
        .prev_kv()
        .map(|prev| keys.key_value_ref(prev))
        .transpose()?;
    match event.event_type() {
        EventType::Put => Ok(Event {
            kind: EventKind::Put,
            kv: keys.key_value_ref(kv)?,
            prev,
        }),
        EventType::Delete => {
            // etcd omits prev_kv when the prior revision is compacted away;
            // kube-apiserver treats that as an error too.
            let prev = prev.ok_or_else(|| {
                StorageError::Internal(format!(
                    "etcd delete event for {:?} at revision {} has no previous value",
                    String::from_utf8_lossy(kv.key()),
                    kv.mod_revision()
                ))
            })?;
            Ok(Event {
                kind: EventKind::Delete,
                kv: KeyValue {
                    mod_revision: kv.mod_revision(),
                    served: Default::default(),
                    ..prev.clone()
                },
                prev: Some(prev),
            })
        }
    }
}
