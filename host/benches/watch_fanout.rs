//! Cost of delivering one store event to N watchers of a resource, side by
//! side in one run: with the shared event lines (each event decoded and
//! encoded once, every watcher sends the same bytes) and without sharing
//! (a memo of capacity 0: every watcher decodes and encodes its own copy,
//! as before). Reports CPU time per event and the bytes of encoded lines
//! that exist per event. `cargo bench --bench watch_fanout`.

// A benchmark: a failed assumption fails the run, so unwrapping is fine here
// (the server itself never unwraps; see the workspace lints).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use capstan::api::handlers::event_lines::{EventLines, LineFormat, LineType};
use capstan::storage::{Event, EventKind, KeyValue};
use serde_json::json;
use std::collections::HashSet;
use std::time::Instant;

const EVENTS: usize = 2000;

/// A pod-sized object (~2 KiB of JSON), written at `revision`.
fn event(revision: i64) -> Event {
    let labels: serde_json::Map<String, serde_json::Value> = (0..8)
        .map(|i| (format!("label-{i}"), json!(format!("value-{i}-{revision}"))))
        .collect();
    let data: serde_json::Map<String, serde_json::Value> = (0..20)
        .map(|i| (format!("key-{i}"), json!("x".repeat(64))))
        .collect();
    let object = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("cm-{revision}"), "namespace": "default",
                     "uid": "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", "labels": labels},
        "data": data,
    });
    Event {
        kind: EventKind::Put,
        kv: KeyValue {
            key: format!("/registry/configmaps/default/cm-{revision}"),
            value: Bytes::from(serde_json::to_vec(&object).unwrap_or_default()),
            create_revision: revision,
            mod_revision: revision,
            served: Default::default(),
        },
        prev: None,
    }
}

/// Delivers every event to `watchers` watchers (their lines held at once,
/// as in the watchers' channels); returns µs per event and the bytes of
/// distinct line buffers per event.
fn run(lines: &EventLines, watchers: usize, events: &[Event]) -> (f64, usize) {
    let mut bytes = 0;
    let start = Instant::now();
    for ev in events {
        let sent: Vec<Bytes> = (0..watchers)
            .filter_map(|_| {
                lines
                    .get(ev.clone())
                    .line(LineType::Added, LineFormat::Object)
            })
            .collect();
        let distinct: HashSet<*const u8> = sent.iter().map(|line| line.as_ptr()).collect();
        bytes += distinct.len() * sent.first().map_or(0, Bytes::len);
    }
    let per_event = start.elapsed().as_secs_f64() * 1e6 / events.len() as f64;
    (per_event, bytes / events.len())
}

fn main() {
    println!("watchers | shared µs/event | unshared µs/event | ratio | shared bytes/event | unshared bytes/event");
    let mut revision = 0;
    let mut batch = || -> Vec<Event> {
        (0..EVENTS)
            .map(|_| {
                revision += 1;
                event(revision)
            })
            .collect()
    };
    // Warm up the allocator and caches before measuring.
    run(&EventLines::default(), 10, &batch());
    for watchers in [1, 10, 100] {
        let (shared_events, unshared_events) = (batch(), batch());
        let (unshared, unshared_bytes) =
            run(&EventLines::with_capacity(0), watchers, &unshared_events);
        let (shared, shared_bytes) = run(&EventLines::default(), watchers, &shared_events);
        println!(
            "{watchers} | {shared:.1} | {unshared:.1} | {:.2} | {shared_bytes} | {unshared_bytes}",
            unshared / shared
        );
    }
}
