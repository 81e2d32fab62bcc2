//! The graph's verdicts and the uids each change puts on the worklist.

use bytes::Bytes;
use serde_json::json;

use super::graph::Graph;
use crate::registry::Propagation;
use crate::storage::{Event, EventKind, KeyValue};

fn kv(name: &str, meta: serde_json::Value) -> KeyValue {
    let mut metadata = meta;
    metadata["name"] = json!(name);
    KeyValue {
        key: format!("/registry/core/configmaps/default/{name}"),
        value: Bytes::from(json!({"metadata": metadata}).to_string()),
        create_revision: 1,
        mod_revision: 1,
        served: Default::default(),
    }
}

fn owned_by(uid: &str, owners: &[&str], block: bool) -> serde_json::Value {
    let refs: Vec<_> = owners
        .iter()
        .map(|o| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": o, "blockOwnerDeletion": block}))
        .collect();
    json!({"uid": uid, "ownerReferences": refs})
}

#[test]
fn an_object_is_garbage_only_when_every_owner_is_gone() {
    let mut g = Graph::default();
    g.put(&kv("a", json!({"uid": "A"})));
    g.put(&kv("b", json!({"uid": "B"})));
    g.put(&kv("d", owned_by("D", &["A", "B"], false)));
    let d = g.node("D").unwrap().clone();
    assert_eq!(g.verdict(&d), None);
    let touched = g.apply(&Event {
        kind: EventKind::Delete,
        kv: kv("a", json!({"uid": "A"})),
        prev: None,
    });
    assert!(touched.contains("D"), "the dependent is looked at again");
    assert_eq!(g.verdict(&d), None, "B still owns it");
    g.apply(&Event {
        kind: EventKind::Delete,
        kv: kv("b", json!({"uid": "B"})),
        prev: None,
    });
    assert_eq!(g.verdict(&d), Some(Propagation::Background));
}

#[test]
fn a_reference_to_an_object_that_never_existed_is_dangling() {
    let mut g = Graph::default();
    g.put(&kv("d", owned_by("D", &["nobody"], false)));
    assert!(g.all().contains("D"));
    let d = g.node("D").unwrap().clone();
    assert_eq!(g.verdict(&d), Some(Propagation::Background));
}

#[test]
fn foreground_owners_wait_for_blocking_dependents() {
    let mut g = Graph::default();
    let owner = json!({"uid": "O", "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["foregroundDeletion"]});
    g.put(&kv("o", owner));
    g.put(&kv("blocking", owned_by("B", &["O"], true)));
    g.put(&kv("free", owned_by("F", &["O"], false)));
    assert_eq!(g.blocking_dependents("O"), 1);
    assert_eq!(g.dependents("O").count(), 2);
    let b = g.node("B").unwrap().clone();
    assert_eq!(g.verdict(&b), Some(Propagation::Foreground));
    let touched = g.apply(&Event {
        kind: EventKind::Delete,
        kv: kv("blocking", json!({"uid": "B"})),
        prev: None,
    });
    assert!(touched.contains("O"), "the owner is looked at again");
    assert_eq!(g.blocking_dependents("O"), 0);
}

#[test]
fn objects_without_owners_are_kept() {
    let mut g = Graph::default();
    g.put(&kv("plain", json!({"uid": "P"})));
    assert!(!g.all().contains("P"));
    let p = g.node("P").unwrap().clone();
    assert_eq!(g.verdict(&p), None);
}
