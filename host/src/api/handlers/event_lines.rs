//! Watch event lines encoded once per event and shared by every watcher.
//!
//! Many watchers of one resource (informers in controllers, `kubectl get -w`,
//! client libraries) receive the same event at about the same time. Each
//! event is decoded once, and each of its JSON lines (`{"type": "ADDED",
//! "object": …}` as a full object or as PartialObjectMetadata) is built once;
//! every watcher then sends the same `Bytes`. The memo keeps the most recent
//! events (a revision names exactly one event in the store), so a watcher
//! that lags far behind simply encodes its own copy.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use super::negotiate::partial_metadata;
use crate::apimachinery::kube_json::Ordered;
use crate::registry::decode;
use crate::registry::stored::Served;
use crate::storage::{Event, EventKind, Revision};

/// Events kept in the memo by default: watchers get an event within moments
/// of each other, and each kept event holds its decoded object (several
/// times the stored size), so a short memory is enough and stays small.
pub const DEFAULT_CAPACITY: usize = 256;

/// The watch event types a line can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineType {
    Added,
    Modified,
    Deleted,
}

impl LineType {
    pub fn as_str(self) -> &'static str {
        match self {
            LineType::Added => "ADDED",
            LineType::Modified => "MODIFIED",
            LineType::Deleted => "DELETED",
        }
    }
}

/// How the object inside a line is rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineFormat {
    /// The whole object.
    Object,
    /// `meta.k8s.io/v1` PartialObjectMetadata (metadata only).
    Metadata,
}

/// One event with its decoded objects and encoded lines, built on first use.
pub struct SharedEvent {
    event: Event,
    object: OnceLock<Option<Value>>,
    previous: OnceLock<Option<Value>>,
    departed: OnceLock<Option<Value>>,
    /// Indexed by `LineFormat` × `LineType`.
    lines: [OnceLock<Option<Bytes>>; 6],
}

impl SharedEvent {
    fn new(event: Event) -> Self {
        SharedEvent {
            event,
            object: OnceLock::new(),
            previous: OnceLock::new(),
            departed: OnceLock::new(),
            lines: Default::default(),
        }
    }

    pub fn event(&self) -> &Event {
        &self.event
    }

    /// The object after the change (the last state for a delete), with its
    /// resourceVersion; `None` when the stored value is not a JSON object.
    pub fn object(&self) -> Option<&Value> {
        self.object
            .get_or_init(|| decode(&self.event.kv).ok())
            .as_ref()
    }

    /// The object before the change, if there was one.
    pub fn previous(&self) -> Option<&Value> {
        self.previous
            .get_or_init(|| self.event.prev.as_ref().and_then(|p| decode(p).ok()))
            .as_ref()
    }

    /// The object a line of type `kind` carries: for an update that made
    /// the object leave a watcher's selection (a DELETED for a Put), the
    /// previous object with the update's resourceVersion, as kube-apiserver
    /// sends it; otherwise [`Self::object`].
    pub fn subject(&self, kind: LineType) -> Option<&Value> {
        if self.subject_is_stored(kind) {
            return self.object();
        }
        self.departed
            .get_or_init(|| {
                let mut previous = self.previous()?.clone();
                let revision = self.event.revision().to_string();
                previous["metadata"]["resourceVersion"] = Value::String(revision);
                Some(previous)
            })
            .as_ref()
    }

    /// The newline-terminated watch line for this event as `kind`.
    pub fn line(&self, kind: LineType, format: LineFormat) -> Option<Bytes> {
        let index = format as usize * 3 + kind as usize;
        self.lines[index]
            .get_or_init(|| match format {
                LineFormat::Object if self.subject_is_stored(kind) => {
                    Some(line_of_item(kind.as_str(), &self.served_object()?))
                }
                LineFormat::Object => encode_line(kind.as_str(), self.subject(kind)?),
                LineFormat::Metadata => {
                    encode_line(kind.as_str(), &partial_metadata(self.subject(kind)?))
                }
            })
            .clone()
    }

    /// Whether a line of type `kind` carries the event's own key-value.
    fn subject_is_stored(&self, kind: LineType) -> bool {
        kind != LineType::Deleted || self.event.kind != EventKind::Put
    }

    /// The event's object as served (see [`crate::registry::stored`]);
    /// when it must be encoded, the encoding is kept with its key-value,
    /// which the watch cache shares with the lists that read this version.
    fn served_object(&self) -> Option<Served> {
        let encode = || {
            self.object()
                .map(crate::apimachinery::kube_json::to_item)
                .ok_or(())
        };
        crate::registry::stored::served_item(&self.event.kv, encode).ok()
    }
}

/// A watch line around an object already encoded by `kube_json::to_item`.
fn line_of_item(kind: &str, item: &Served) -> Bytes {
    let mut out = Vec::with_capacity(item.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    item.write_to(&mut out);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

#[derive(Serialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    object: Ordered<'a>,
}

/// `{"type": kind, "object": object}` followed by a newline.
pub fn encode_line(kind: &str, object: &Value) -> Option<Bytes> {
    let object = Ordered::object(object);
    let mut out = serde_json::to_vec(&Line { kind, object }).ok()?;
    out.push(b'\n');
    Some(Bytes::from(out))
}

/// The memo of recent events, shared by all watch handlers of a server.
pub struct EventLines {
    memo: Mutex<Memo>,
}

#[derive(Default)]
struct Memo {
    by_revision: HashMap<Revision, Arc<SharedEvent>>,
    order: VecDeque<Revision>,
    capacity: usize,
}

impl Default for EventLines {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }
}

impl EventLines {
    /// A memo of the `capacity` most recent events (0 shares nothing).
    pub fn with_capacity(capacity: usize) -> Self {
        EventLines {
            memo: Mutex::new(Memo {
                capacity,
                ..Memo::default()
            }),
        }
    }

    /// The shared form of `event`: the one already built by another watcher,
    /// or a new one that later watchers will get.
    pub fn get(&self, event: Event) -> Arc<SharedEvent> {
        let revision = event.revision();
        let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(shared) = memo.by_revision.get(&revision) {
            if shared.event.kv.key == event.kv.key {
                return shared.clone();
            }
            // Not the same event (events of another store): do not share.
            return Arc::new(SharedEvent::new(event));
        }
        let shared = Arc::new(SharedEvent::new(event));
        if memo.capacity > 0 {
            memo.insert(revision, shared.clone());
        }
        shared
    }
}

impl Memo {
    fn insert(&mut self, revision: Revision, shared: Arc<SharedEvent>) {
        self.by_revision.insert(revision, shared);
        self.order.push_back(revision);
        while self.order.len() > self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.by_revision.remove(&old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{EventKind, KeyValue};

    fn put(key: &str, value: &str, revision: Revision) -> Event {
        Event {
            kind: EventKind::Put,
            kv: KeyValue {
                key: key.into(),
                value: Bytes::from(value.to_string()),
                create_revision: revision,
                mod_revision: revision,
                served: Default::default(),
            },
            prev: None,
        }
    }

    #[test]
    fn a_line_carries_the_object_with_its_resource_version() {
        let lines = EventLines::default();
        let shared = lines.get(put(
            "/registry/configmaps/d/a",
            r#"{"metadata":{"name":"a"}}"#,
            7,
        ));
        let line = shared.line(LineType::Added, LineFormat::Object).unwrap();
        assert!(line.ends_with(b"\n"));
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["type"], "ADDED");
        assert_eq!(v["object"]["metadata"]["name"], "a");
        assert_eq!(v["object"]["metadata"]["resourceVersion"], "7");
    }

    #[test]
    fn a_line_encodes_the_object_once_for_the_lists_of_its_version() {
        let event = put(
            "/registry/configmaps/d/a",
            r#"{"data":{"k":"v"},"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}"#,
            7,
        );
        let cached = event.kv.clone();
        let shared = EventLines::default().get(event);
        let line = shared.line(LineType::Modified, LineFormat::Object).unwrap();
        let object = shared.object().unwrap();
        assert_eq!(line, encode_line("MODIFIED", object).unwrap());
        let served = match cached.served.get() {
            Some(crate::storage::ServedForm::Encoded(bytes)) => bytes,
            other => panic!("the cached key-value shares the encoding: {other:?}"),
        };
        assert_eq!(
            &served[..],
            &crate::apimachinery::kube_json::to_item(object)[..]
        );
    }

    #[test]
    fn watchers_of_one_event_share_its_encoded_bytes() {
        let lines = EventLines::default();
        let event = put(
            "/registry/configmaps/d/a",
            r#"{"metadata":{"name":"a"}}"#,
            3,
        );
        let first = lines
            .get(event.clone())
            .line(LineType::Modified, LineFormat::Object)
            .unwrap();
        let second = lines
            .get(event)
            .line(LineType::Modified, LineFormat::Object)
            .unwrap();
        assert_eq!(
            first.as_ptr(),
            second.as_ptr(),
            "one buffer for both watchers"
        );
    }

    #[test]
    fn metadata_lines_hold_partial_object_metadata() {
        let lines = EventLines::default();
        let mut deleted = put(
            "/registry/secrets/d/s",
            r#"{"metadata":{"name":"s"},"data":{"k":"dg=="}}"#,
            4,
        );
        deleted.kind = EventKind::Delete;
        let shared = lines.get(deleted);
        let line = shared
            .line(LineType::Deleted, LineFormat::Metadata)
            .unwrap();
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["type"], "DELETED");
        assert_eq!(v["object"]["kind"], "PartialObjectMetadata");
        assert!(v["object"].get("data").is_none());
    }

    #[test]
    fn leaving_a_selection_carries_the_previous_object_at_the_new_revision() {
        let lines = EventLines::default();
        let mut event = put(
            "/registry/configmaps/d/a",
            r#"{"metadata":{"labels":{}}}"#,
            9,
        );
        let mut prev = put(
            "/registry/configmaps/d/a",
            r#"{"metadata":{"labels":{"team":"a"}}}"#,
            6,
        );
        prev.kv.mod_revision = 6;
        event.prev = Some(prev.kv);
        let shared = lines.get(event);
        let line = shared.line(LineType::Deleted, LineFormat::Object).unwrap();
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["object"]["metadata"]["labels"]["team"], "a");
        assert_eq!(v["object"]["metadata"]["resourceVersion"], "9");
        let modified = shared.line(LineType::Modified, LineFormat::Object).unwrap();
        let v: Value = serde_json::from_slice(&modified).unwrap();
        assert_eq!(v["object"]["metadata"]["labels"], serde_json::json!({}));
    }

    #[test]
    fn undecodable_values_give_no_line() {
        let lines = EventLines::default();
        let shared = lines.get(put("/registry/configmaps/d/x", "not json", 5));
        assert!(shared.line(LineType::Added, LineFormat::Object).is_none());
    }

    #[test]
    fn the_memo_forgets_the_oldest_events_beyond_its_capacity() {
        let lines = EventLines::with_capacity(2);
        let event = put("/registry/configmaps/d/a", r#"{"metadata":{}}"#, 1);
        let first = lines.get(event.clone());
        lines.get(put("/registry/configmaps/d/b", r#"{"metadata":{}}"#, 2));
        lines.get(put("/registry/configmaps/d/c", r#"{"metadata":{}}"#, 3));
        assert!(!Arc::ptr_eq(&first, &lines.get(event)));
    }
}
