//! Watch-delivery phase: opens a watch on the namespace's ConfigMaps from the current
//! resourceVersion, then each worker creates objects one at a time; an operation's
//! latency runs from the start of its create request to the arrival of its ADDED event.

use super::phases::{self, resource_version, Scope};
use super::runner::run_phase;
use super::stats::PhaseResult;
use anyhow::{anyhow, bail, Result};
use http::Method;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How long a created object may take to show up on the watch.
const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Names awaiting their ADDED event, with where to report its arrival time.
type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<Instant>>>>;

/// One decoded watch event (only what the benchmark looks at).
#[derive(Debug, PartialEq)]
pub struct Event {
    pub kind: String,
    pub name: Option<String>,
    pub message: Option<String>,
}

#[derive(Deserialize)]
struct RawEvent {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    object: RawObject,
}

#[derive(Deserialize, Default)]
struct RawObject {
    #[serde(default)]
    metadata: RawMeta,
    message: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawMeta {
    name: Option<String>,
}

/// Splits a watch response stream (JSON objects, usually newline-separated, arriving
/// in arbitrary chunks) into events.
#[derive(Default)]
pub struct EventDecoder {
    buf: Vec<u8>,
}

impl EventDecoder {
    /// Adds a chunk and returns the events it completes.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<Event>> {
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut stream = serde_json::Deserializer::from_slice(&self.buf).into_iter::<RawEvent>();
        let mut consumed = 0;
        loop {
            match stream.next() {
                Some(Ok(raw)) => {
                    consumed = stream.byte_offset();
                    events.push(Event {
                        kind: raw.kind,
                        name: raw.object.metadata.name,
                        message: raw.object.message,
                    });
                }
                Some(Err(e)) if e.is_eof() => break,
                Some(Err(e)) => bail!("undecodable watch event: {e}"),
                None => {
                    consumed = self.buf.len();
                    break;
                }
            }
        }
        self.buf.drain(..consumed);
        Ok(events)
    }
}

/// Runs the phase; `n` objects named `<prefix>-w-<i>` are created, then deleted untimed.
pub async fn delivery(scope: &Arc<Scope>, c: usize, n: usize) -> PhaseResult {
    let pending: Pending = Arc::default();
    let reader = match open_watch(scope, pending.clone()).await {
        Ok(reader) => reader,
        Err(e) => return PhaseResult::failed("watch", c, n, format!("{e:#}")),
    };
    let result = timed_creates(scope, c, n, pending).await;
    reader.abort();
    let cleanup = phases::delete(scope, c, n, watch_object_name).await;
    if cleanup.errors > 0 {
        tracing::warn!(errors = cleanup.errors, first = ?cleanup.first_error, "cleaning up watch-phase objects");
    }
    result
}

fn watch_object_name(scope: &Scope, i: usize) -> String {
    format!("{}-w-{i}", scope.prefix)
}

/// Lists to learn the current resourceVersion, then starts a watch from it and spawns
/// the task that reads it.
async fn open_watch(scope: &Scope, pending: Pending) -> Result<tokio::task::JoinHandle<()>> {
    let list_path = format!("{}?limit=1", scope.collection_path());
    let list = scope
        .watcher
        .request(Method::GET, &list_path, None)
        .await?
        .check()?;
    let rv = resource_version(&list.body)
        .ok_or_else(|| anyhow!("list has no metadata.resourceVersion"))?;
    let path = format!(
        "{}?watch=true&resourceVersion={rv}&allowWatchBookmarks=false&timeoutSeconds=3600",
        scope.collection_path()
    );
    let response = scope.watcher.stream(&path).await?;
    if !response.status().is_success() {
        bail!("watch: HTTP {}", response.status());
    }
    Ok(tokio::spawn(read_events(response.into_body(), pending)))
}

/// Reads the watch until it ends, reporting ADDED events that someone waits for.
async fn read_events(mut body: Incoming, pending: Pending) {
    let mut decoder = EventDecoder::default();
    while let Some(frame) = body.frame().await {
        let arrived = Instant::now();
        let data = match frame {
            Ok(frame) => frame.into_data().unwrap_or_default(),
            Err(e) => {
                tracing::warn!(error = %e, "watch stream failed");
                return;
            }
        };
        let events = match decoder.push(&data) {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(error = %e, "watch stream is not a sequence of JSON events");
                return;
            }
        };
        for event in events {
            deliver(&pending, event, arrived);
        }
    }
    tracing::warn!("watch stream ended before the phase finished");
}

fn deliver(pending: &Pending, event: Event, arrived: Instant) {
    match (event.kind.as_str(), event.name) {
        ("ADDED", Some(name)) => {
            let waiter = pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&name);
            if let Some(waiter) = waiter {
                let _ = waiter.send(arrived);
            }
        }
        ("ERROR", _) => tracing::warn!(message = ?event.message, "watch ERROR event"),
        _ => {}
    }
}

async fn timed_creates(scope: &Arc<Scope>, c: usize, n: usize, pending: Pending) -> PhaseResult {
    let scope = scope.clone();
    run_phase("watch", c, n, move |i| {
        let (scope, pending) = (scope.clone(), pending.clone());
        async move {
            let name = watch_object_name(&scope, i);
            let (tx, rx) = oneshot::channel();
            pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(name.clone(), tx);
            let start = Instant::now();
            if let Err(e) = scope.create(&name).await {
                pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&name);
                return Err(e);
            }
            let arrived = tokio::time::timeout(EVENT_TIMEOUT, rx)
                .await
                .map_err(|_| anyhow!("{name}: no ADDED event within {EVENT_TIMEOUT:?}"))?
                .map_err(|_| anyhow!("{name}: watch ended before its ADDED event"))?;
            Ok(Some(arrived.saturating_duration_since(start)))
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADDED_A: &str = r#"{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"},"data":{"k":"v {}"}}}"#;
    const MODIFIED_B: &str = r#"{"type":"MODIFIED","object":{"metadata":{"name":"b"}}}"#;

    #[test]
    fn decodes_events_split_across_chunks() {
        let stream = format!("{ADDED_A}\n{MODIFIED_B}\n");
        let mut decoder = EventDecoder::default();
        let (head, tail) = stream.as_bytes().split_at(40);
        assert!(decoder.push(head).unwrap().is_empty());
        let (mid, rest) = tail.split_at(ADDED_A.len() - 40 + 5);
        let events = decoder.push(mid).unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(
            (events[0].kind.as_str(), events[0].name.as_deref()),
            ("ADDED", Some("a"))
        );
        let events = decoder.push(rest).unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].name.as_deref(), Some("b"));
        assert!(decoder.buf.is_empty());
    }

    #[test]
    fn decodes_several_events_in_one_chunk_and_error_events() {
        let error = r#"{"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old resource version"}}"#;
        let mut decoder = EventDecoder::default();
        let events = decoder
            .push(format!("{ADDED_A}{MODIFIED_B}\n{error}\n").as_bytes())
            .unwrap();
        let kinds: Vec<_> = events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["ADDED", "MODIFIED", "ERROR"]);
        assert_eq!(
            events[2].message.as_deref(),
            Some("too old resource version")
        );
        assert!(decoder.push(b"{\"type\": oops}").is_err());
    }

    #[tokio::test]
    async fn only_added_events_for_waited_names_are_delivered() {
        let pending: Pending = Arc::default();
        let (tx, mut rx) = oneshot::channel();
        pending.lock().unwrap().insert("a".into(), tx);
        let now = Instant::now();
        let modified = Event {
            kind: "MODIFIED".into(),
            name: Some("a".into()),
            message: None,
        };
        deliver(&pending, modified, now);
        assert!(rx.try_recv().is_err());
        let other = Event {
            kind: "ADDED".into(),
            name: Some("zzz".into()),
            message: None,
        };
        deliver(&pending, other, now);
        let added = Event {
            kind: "ADDED".into(),
            name: Some("a".into()),
            message: None,
        };
        deliver(&pending, added, now);
        assert_eq!(rx.await.unwrap(), now);
        assert!(pending.lock().unwrap().is_empty());
    }
}
