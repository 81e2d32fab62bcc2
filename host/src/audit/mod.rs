//! Audit logging as kube-apiserver writes it: every request the policy
//! (`--audit-policy-file`, `policy.rs`) records becomes audit.k8s.io/v1
//! Events at its stages (RequestReceived, ResponseStarted for watches and
//! other long-running requests, ResponseComplete), written by the backends
//! (`--audit-log-path`: JSON lines, rotated, `log.rs`; `--audit-webhook-config-file`:
//! batches of EventLists, `webhook.rs`).
//!
//! A request's audit state (`Recording`) is task-local while it is served:
//! the body reader records the request body, the response encoder the
//! response object, admission its annotations (`annotate`). Events are
//! built on the request's path but serialized and written by the backends'
//! own threads and tasks through bounded queues: a request never waits for
//! the audit log; an event that finds a queue full is dropped and counted
//! (`apiserver_audit_error_total`).

pub mod event;
mod legacy;
pub mod log;
pub mod policy;
pub mod webhook;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::apimachinery::request_info::ResourceRequest;
use crate::apimachinery::user::UserInfo;
use crate::telemetry::metrics::{Exposition, MetricSource};
pub use event::Recording;
use policy::{Decision, Level, Policy, Stage, Subject};

/// Where events go.
pub trait Sink: Send + Sync {
    /// Queues `event`; false when it had to be dropped.
    fn send(&self, event: Arc<Value>) -> bool;
    /// The backend's name in `apiserver_audit_error_total{plugin}`.
    fn name(&self) -> &'static str;
}

/// The server's auditing: its policy and backends (none: nothing recorded).
#[derive(Default)]
pub struct Auditor {
    policy: Option<Policy>,
    sinks: Vec<Arc<dyn Sink>>,
    counts: Arc<Counts>,
}

impl std::fmt::Debug for Auditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sinks: Vec<&str> = self.sinks.iter().map(|s| s.name()).collect();
        f.debug_struct("Auditor").field("sinks", &sinks).finish()
    }
}

#[derive(Default)]
struct Counts {
    events: AtomicU64,
    /// Dropped (a full queue) or failed, by backend.
    errors: Mutex<BTreeMap<&'static str, u64>>,
}

impl Auditor {
    /// Auditing by `policy`, without backends yet.
    pub fn new(policy: Option<Policy>) -> Auditor {
        Auditor {
            policy,
            ..Auditor::default()
        }
    }

    /// Adds a backend.
    pub fn add(&mut self, sink: Arc<dyn Sink>) {
        self.sinks.push(sink);
    }

    /// Counts `n` events `plugin` lost.
    pub fn error_counter(&self, plugin: &'static str) -> impl Fn(u64) + Send + 'static {
        let counts = self.counts.clone();
        move |n| {
            if let Ok(mut errors) = counts.errors.lock() {
                *errors.entry(plugin).or_default() += n;
            }
        }
    }

    pub fn enabled(&self) -> bool {
        self.policy.is_some() && !self.sinks.is_empty()
    }

    /// What the policy says of a request by `user` (the authenticated one,
    /// before impersonation, as kube's audit filter sees it).
    pub fn decide(
        &self,
        user: &UserInfo,
        method: &http::Method,
        path: &str,
        resource: Option<&ResourceRequest>,
    ) -> Option<Decision> {
        let policy = self.policy.as_ref().filter(|_| !self.sinks.is_empty())?;
        let verb = match resource {
            Some(r) => r.verb.as_str().to_string(),
            None => method.as_str().to_ascii_lowercase(),
        };
        let decision = policy.decide(&Subject {
            user: &user.username,
            groups: &user.groups,
            verb: &verb,
            path,
            resource,
        });
        (decision.level > Level::None).then_some(decision)
    }

    /// Writes the event of `recording` at `stage`, if its policy records it.
    pub fn emit(&self, recording: &Recording, stage: Stage) {
        if !recording.decision.records(stage) {
            return;
        }
        let event = Arc::new(recording.event(stage));
        self.counts.events.fetch_add(1, Ordering::Relaxed);
        for sink in &self.sinks {
            if !sink.send(event.clone()) {
                self.error(sink.name());
            }
        }
    }

    fn error(&self, plugin: &'static str) {
        self.error_counter(plugin)(1);
    }

    /// The metrics of this auditor, for `/metrics`.
    pub fn metrics(&self) -> Arc<dyn MetricSource> {
        self.counts.clone()
    }
}

impl MetricSource for Counts {
    fn render(&self, out: &mut Exposition) {
        out.family(
            "apiserver_audit_event_total",
            "counter",
            "[ALPHA] Counter of audit events generated and sent to the audit backend.",
        );
        let events = self.events.load(Ordering::Relaxed) as f64;
        out.sample("apiserver_audit_event_total", &[], events);
        out.family(
            "apiserver_audit_error_total",
            "counter",
            "[ALPHA] Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.",
        );
        let errors = self.errors.lock().map(|e| e.clone()).unwrap_or_default();
        for (plugin, n) in errors {
            out.sample(
                "apiserver_audit_error_total",
                &[("plugin", plugin)],
                n as f64,
            );
        }
    }
}

tokio::task_local! {
    /// The audit state of the request this task serves, if it is recorded.
    static CURRENT: Arc<Recording>;
}

/// Runs `serve` with `recording` as the request's audit state.
pub async fn scope<F: std::future::Future>(recording: Arc<Recording>, serve: F) -> F::Output {
    CURRENT.scope(recording, serve).await
}

fn with_current(f: impl FnOnce(&Recording)) {
    let _ = CURRENT.try_with(|r| f(r));
}

/// An admission annotation of the request being served (kept only when
/// it is recorded; kube keeps the first value of a key).
pub fn annotate(key: &str, value: &str) {
    with_current(|r| r.annotate(key, value));
}

/// The request body, as read (recorded from level Request on).
pub fn request_body(bytes: &bytes::Bytes) {
    with_current(|r| {
        if r.decision.level >= Level::Request {
            r.set_request_body(bytes.clone());
        }
    });
}

/// The request body as decoded (protobuf included), which the event
/// records rather than the bytes.
pub fn request_object(value: &Value) {
    with_current(|r| {
        if r.decision.level >= Level::Request {
            r.set_request_object(value);
        }
    });
}

/// The response object (at level RequestResponse; a Status also becomes
/// the event's responseStatus).
pub fn response_object(value: &Value) {
    with_current(|r| r.set_response(value));
}

/// A response served as stored JSON bytes (an object, a list): decoded for
/// the event only when its level records the response.
pub fn response_bytes(bytes: &[u8]) {
    with_current(|r| {
        if r.decision.level >= Level::RequestResponse {
            let decoded = crate::cpu::for_request(|| serde_json::from_slice::<Value>(bytes));
            if let Ok(value) = decoded {
                r.set_response(&value);
            }
        }
    });
}
