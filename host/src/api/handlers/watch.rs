//! WATCH: a chunked stream of `{"type": ..., "object": ...}` lines (ADDED,
//! MODIFIED, DELETED, BOOKMARK, ERROR), or of length-prefixed protobuf
//! WatchEvents when the client asks for protobuf, from a resourceVersion or
//! from the current state, filtered by selectors, ended by timeoutSeconds.

use super::event_lines::{encode_line, EventLines, LineFormat, LineType, SharedEvent};
use super::negotiate::Output;
use super::read::{list_page, Filter};
use super::Call;
use crate::api::table::IncludeObject;
use crate::apimachinery::status::{ApiError, ApiResult};
use crate::catalogue::ResourceInfo;
use crate::registry::keys;
use crate::registry::strategy::Strategy;
use crate::storage::{Event, EventKind, StorageError, WatchStream};
use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);
const BOOKMARK_EVERY: Duration = Duration::from_secs(60);

/// How events are rendered for one watcher.
struct Encoder {
    output: Output,
    res: ResourceInfo,
    /// Prints table rows.
    strategy: Arc<dyn Strategy>,
    kind: String,
    api_version: String,
    sent_columns: bool,
}

impl Encoder {
    /// The line of an object of the initial list (this watcher's own).
    async fn line(&mut self, kind: &str, obj: Value) -> Bytes {
        let object = match self.output {
            Output::Table(include) => match self.table(include, obj).await {
                Ok(t) => t,
                Err(e) => return self.error(&e),
            },
            o if o.is_metadata() => super::negotiate::partial_metadata(&obj),
            _ => obj,
        };
        self.encode(kind, &object)
    }

    /// One event in this watcher's encoding: a JSON line or a protobuf frame.
    fn encode(&self, kind: &str, object: &Value) -> Bytes {
        if !self.output.is_protobuf() {
            return encode_line(kind, object).unwrap_or_default();
        }
        let schemas = crate::catalogue::Catalogue::builtin_schemas();
        let typed;
        let object = match object.get("kind") {
            Some(_) => object,
            None => {
                // A list's items carry no kind; the envelope needs one.
                let mut o = object.clone();
                o["kind"] = json!(self.kind);
                o["apiVersion"] = json!(self.api_version);
                typed = o;
                &typed
            }
        };
        match crate::api::protobuf::encode_watch_event(kind, object, schemas) {
            Ok(frame) => Bytes::from(frame),
            Err(e) => {
                tracing::warn!(error = %e, "a watch event has no protobuf form");
                Bytes::new()
            }
        }
    }

    /// An ERROR event carrying `e`'s Status.
    fn error(&self, e: &ApiError) -> Bytes {
        self.encode("ERROR", &e.to_status())
    }

    /// One object as a Table; the column definitions only in the first.
    async fn table(&mut self, include: IncludeObject, obj: Value) -> ApiResult<Value> {
        let rv = obj.pointer("/metadata/resourceVersion").cloned();
        let meta = json!({"resourceVersion": rv.unwrap_or(json!(""))});
        let now = chrono::Utc::now();
        let strategy = self.strategy.as_ref();
        let mut t =
            crate::api::table::build_table(strategy, &self.res, &[obj], include, meta, now).await?;
        if self.sent_columns {
            crate::api::table::strip_column_definitions(&mut t);
        }
        self.sent_columns = true;
        Ok(t)
    }

    /// The line of a store event: the one shared by every watcher, except
    /// for tables (whose column definitions go to each watcher once).
    async fn event_line(&mut self, kind: LineType, event: &SharedEvent) -> Option<Bytes> {
        if !self.res.served_as_stored() {
            // Stored in the storage version: each watcher's own view.
            let stored = event.subject(kind)?.clone();
            return Some(
                match crate::catalogue::custom::versions::view(&self.res, stored).await {
                    Ok(obj) => self.line(kind.as_str(), obj).await,
                    Err(e) => self.error(&e),
                },
            );
        }
        match self.output {
            // Each watcher's own encoding (tables: columns once; protobuf).
            Output::Table(_) | Output::Protobuf | Output::ProtobufMetadata => {
                let obj = event.subject(kind)?.clone();
                Some(self.line(kind.as_str(), obj).await)
            }
            Output::PartialMetadata => event.line(kind, LineFormat::Metadata),
            _ => event.line(kind, LineFormat::Object),
        }
    }

    fn bookmark(&mut self, revision: i64, initial_end: bool) -> Bytes {
        let mut md = json!({"resourceVersion": revision.to_string()});
        if initial_end {
            md["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let obj = json!({"kind": self.kind, "apiVersion": self.api_version, "metadata": md});
        let obj = match self.output {
            // A metadata watcher decodes every event as PartialObjectMetadata.
            o if o.is_metadata() => super::negotiate::partial_metadata(&obj),
            _ => obj,
        };
        self.encode("BOOKMARK", &obj)
    }
}

pub async fn watch(call: &Call<'_>) -> ApiResult<Response> {
    let output = call.output()?;
    call.query.check_list_options(true)?;
    let filter = Filter::from_call(call)?;
    let timeout = call
        .query
        .int("timeoutSeconds")?
        .filter(|t| *t > 0)
        .map(|t| Duration::from_secs(t as u64));
    let bookmarks = call.query.flag("allowWatchBookmarks");
    let rv = call.query.get("resourceVersion").filter(|rv| *rv != "0");
    let send_initial = call.query.send_initial_events()?;
    let enc = Encoder {
        output,
        res: call.res.clone(),
        strategy: call.state.registry.strategy.clone(),
        kind: call.res.kind.clone(),
        api_version: call.res.api_version(),
        sent_columns: false,
    };
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let (initial, start) = match (rv, send_initial) {
        (Some(rv), None | Some(false)) => (Vec::new(), super::read::parse_rv(Some(rv))?),
        // sendInitialEvents=false without a revision: from now, no initial events.
        (None, Some(false)) => (Vec::new(), current_revision(call).await?),
        _ => {
            let page = list_page(call).await?;
            (page.items, page.revision)
        }
    };
    let prefix = keys::prefix(call.res, call.namespace());
    match call.state.storage.watch(&prefix, start).await {
        Err(StorageError::Compacted {
            requested,
            compacted,
        }) => {
            let e = ApiError::gone(format!(
                "too old resource version: {requested} ({compacted})"
            ));
            let _ = tx.try_send(enc.error(&e));
        }
        Err(e) => return Err(crate::registry::storage_error(call.res, "", e)),
        Ok(stream) => {
            let initial_end = send_initial == Some(true) && bookmarks;
            let pump = Pump {
                enc,
                lines: call.state.event_lines.clone(),
                filter,
                bookmarks,
                last_revision: start,
                shutdown: call.state.shutdown.clone(),
                metrics: call.state.watch_events.clone(),
            };
            tokio::spawn(pump.run(
                initial,
                initial_end,
                stream,
                tx,
                timeout.unwrap_or(DEFAULT_TIMEOUT),
            ));
        }
    }
    let body = Body::from_stream(
        tokio_stream::wrappers::ReceiverStream::new(rx).map(Ok::<_, std::convert::Infallible>),
    );
    let mut resp = Response::new(body);
    let media_type = match output.is_protobuf() {
        true => "application/vnd.kubernetes.protobuf;stream=watch",
        false => "application/json",
    };
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(media_type),
    );
    Ok(resp)
}

async fn current_revision(call: &Call<'_>) -> ApiResult<i64> {
    let rev = call.state.storage.current_revision().await;
    rev.map_err(|e| crate::registry::storage_error(call.res, "", e))
}

/// Moves storage events to one watcher until it leaves, times out or falls behind.
struct Pump {
    enc: Encoder,
    lines: Arc<EventLines>,
    filter: Filter,
    bookmarks: bool,
    last_revision: i64,
    /// A shutdown ends the watch cleanly: the client watches again elsewhere.
    shutdown: crate::api::shutdown::Shutdown,
    /// `apiserver_watch_events_*`.
    metrics: Arc<crate::api::watch_metrics::WatchMetrics>,
}

impl Pump {
    async fn run(
        mut self,
        initial: Vec<Value>,
        initial_end: bool,
        mut stream: WatchStream,
        tx: mpsc::Sender<Bytes>,
        timeout: Duration,
    ) {
        for obj in initial {
            if tx.send(self.enc.line("ADDED", obj).await).await.is_err() {
                return;
            }
        }
        if initial_end
            && tx
                .send(self.enc.bookmark(self.last_revision, true))
                .await
                .is_err()
        {
            return;
        }
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let shutdown = self.shutdown.clone();
        let shutting_down = shutdown.wait();
        tokio::pin!(shutting_down);
        let mut ticker = tokio::time::interval(BOOKMARK_EVERY);
        ticker.tick().await;
        loop {
            let line = tokio::select! {
                _ = &mut deadline => return,
                _ = &mut shutting_down => return,
                _ = tx.closed() => return,
                _ = ticker.tick(), if self.bookmarks => Some(self.enc.bookmark(self.last_revision, false)),
                ev = stream.next() => match ev {
                    None => return,
                    Some(Ok(ev)) => self.event_line(ev).await,
                    Some(Err(e)) => {
                        let err = ApiError::gone(format!("watch ended: {e}"));
                        let _ = tx.send(self.enc.error(&err)).await;
                        return;
                    }
                },
            };
            if let Some(line) = line {
                if tx.send(line).await.is_err() {
                    return;
                }
            }
        }
    }

    /// The event as this watcher sees it through its selectors (or nothing).
    async fn event_line(&mut self, ev: Event) -> Option<Bytes> {
        self.last_revision = ev.kv.mod_revision;
        let shared = self.lines.get(ev);
        let kind = self.line_type(&shared)?;
        let line = self.enc.event_line(kind, &shared).await?;
        let res = &self.enc.res;
        let watched = (res.group.as_str(), res.version.as_str(), res.kind.as_str());
        self.metrics.sent(watched, line.len());
        Some(line)
    }

    /// ADDED/MODIFIED/DELETED as seen through the selectors: an object that
    /// starts matching is ADDED, one that stops matching is DELETED.
    fn line_type(&self, shared: &SharedEvent) -> Option<LineType> {
        let ev = shared.event();
        let everything = self.filter.is_empty();
        let now = everything || shared.object().is_some_and(|o| self.filter.matches(o));
        let before = ev.prev.is_some()
            && (everything || shared.previous().is_some_and(|p| self.filter.matches(p)));
        match (&ev.kind, ev.prev.is_some(), before, now) {
            (EventKind::Delete, _, _, true) => Some(LineType::Deleted),
            (EventKind::Put, false, _, true) => Some(LineType::Added),
            (EventKind::Put, true, true, true) => Some(LineType::Modified),
            (EventKind::Put, true, false, true) => Some(LineType::Added),
            (EventKind::Put, true, true, false) => Some(LineType::Deleted),
            _ => None,
        }
    }
}
