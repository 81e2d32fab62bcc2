//! Backend-agnostic conformance suite for [`Storage`] (test builds only).
//!
//! A backend implements [`Backend`] and instantiates every case as its own
//! `#[tokio::test]` with `storage_conformance_tests!(make_backend_expr)`; the
//! expression is evaluated once per case. Assertions use revisions relative
//! to the store's revision when a case starts, but each case assumes nobody
//! else writes to the store while it runs.

use std::collections::BTreeSet;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::StreamExt;

use crate::storage::{
    Event, EventKind, KeyValue, RangeRequest, Revision, Storage, StorageError, StorageResult,
    WatchStream,
};

/// A store under test. `open` is called again after the previous handle was
/// dropped to simulate a restart: it must reach the same data.
pub trait Backend: Send + Sync + 'static {
    type Store: Storage;
    fn open(&self) -> BoxFuture<'_, StorageResult<Self::Store>>;
}

/// Expands to one `#[tokio::test]` per conformance case, in a module `suite`
/// that glob-imports the calling module.
macro_rules! storage_conformance_tests {
    ($make:expr) => {
        $crate::storage::conformance::storage_conformance_tests!(@cases $make;
            revisions_increase_by_one_per_write,
            create_only_if_absent,
            update_is_guarded_by_mod_revision,
            delete_is_guarded_by_mod_revision,
            deleted_keys_vanish_from_get_range_and_count,
            range_isolates_prefixes_and_sorts_bytewise,
            paging_returns_every_key_exactly_once,
            range_at_old_revision_sees_old_state,
            values_roundtrip_byte_for_byte,
            watch_replays_history_then_streams_live,
            watch_filters_by_prefix,
            watch_during_concurrent_writes_misses_nothing,
            watch_and_range_below_compaction_fail,
            compact_rejects_future_and_already_compacted,
            restart_keeps_data_and_revision_sequence,
            ready_when_open,
        );
    };
    (@cases $make:expr; $($case:ident),* $(,)?) => {
        mod suite {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let backend = $make;
                    $crate::storage::conformance::$case(&backend).await;
                }
            )*
        }
    };
}
pub(crate) use storage_conformance_tests;

const WAIT: Duration = Duration::from_secs(10);

fn val(s: &str) -> Bytes {
    Bytes::from(s.to_string())
}

async fn open<B: Backend>(backend: &B) -> B::Store {
    backend.open().await.expect("open store")
}

async fn next_event(watch: &mut WatchStream) -> Event {
    match tokio::time::timeout(WAIT, watch.next()).await {
        Ok(Some(Ok(event))) => event,
        other => panic!("expected a watch event, got {other:?}"),
    }
}

/// Asserts the stream has nothing more to say for a short while.
async fn assert_quiet(watch: &mut WatchStream) {
    let res = tokio::time::timeout(Duration::from_millis(200), watch.next()).await;
    assert!(res.is_err(), "unexpected watch item: {res:?}");
}

async fn keys_under<S: Storage>(store: &S, req: RangeRequest<'_>) -> Vec<String> {
    let res = store.range(req).await.expect("range");
    res.kvs.into_iter().map(|kv| kv.key).collect()
}

pub async fn revisions_increase_by_one_per_write<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let r0 = s.current_revision().await.unwrap();
    let key = "/registry/conformance/rev/a";
    let created = s.create(key, val("1")).await.unwrap();
    assert_eq!(
        (created.create_revision, created.mod_revision),
        (r0 + 1, r0 + 1)
    );
    let updated = s.update(key, val("2"), created.mod_revision).await.unwrap();
    assert_eq!(
        (updated.create_revision, updated.mod_revision),
        (r0 + 1, r0 + 2)
    );
    // Failed writes consume no revision.
    assert!(s.create(key, val("x")).await.is_err());
    assert!(s.update(key, val("x"), created.mod_revision).await.is_err());
    assert!(s
        .delete("/registry/conformance/rev/none", None)
        .await
        .is_err());
    assert_eq!(s.current_revision().await.unwrap(), r0 + 2);
    let deleted = s.delete(key, None).await.unwrap();
    assert_eq!(deleted.mod_revision, r0 + 3);
    let other = s
        .create("/registry/conformance/rev/b", val("1"))
        .await
        .unwrap();
    assert_eq!(other.mod_revision, r0 + 4);
    assert_eq!(s.current_revision().await.unwrap(), r0 + 4);
}

pub async fn create_only_if_absent<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let key = "/registry/conformance/create/a";
    let first = s.create(key, val("first")).await.unwrap();
    let err = s.create(key, val("second")).await.unwrap_err();
    assert_eq!(err, StorageError::AlreadyExists { key: key.into() });
    assert_eq!(s.get(key).await.unwrap(), Some(first.clone()));
    s.delete(key, None).await.unwrap();
    let again = s.create(key, val("again")).await.unwrap();
    assert_eq!(again.create_revision, again.mod_revision, "a new life");
    assert!(again.create_revision > first.create_revision);
}

pub async fn update_is_guarded_by_mod_revision<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let key = "/registry/conformance/update/a";
    let err = s.update(key, val("x"), 1).await.unwrap_err();
    assert_eq!(err, StorageError::NotFound { key: key.into() });
    let v1 = s.create(key, val("1")).await.unwrap();
    let v2 = s.update(key, val("2"), v1.mod_revision).await.unwrap();
    let err = s
        .update(key, val("stale"), v1.mod_revision)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        StorageError::Conflict {
            key: key.into(),
            current: Some(v2.clone())
        }
    );
    assert_eq!(s.get(key).await.unwrap(), Some(v2.clone()));
    let v3 = s.update(key, val("3"), v2.mod_revision).await.unwrap();
    assert_eq!(s.get(key).await.unwrap().unwrap().value, val("3"));
    assert_eq!(v3.create_revision, v1.create_revision);
}

pub async fn delete_is_guarded_by_mod_revision<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let key = "/registry/conformance/delete/a";
    let v1 = s.create(key, val("1")).await.unwrap();
    let v2 = s.update(key, val("2"), v1.mod_revision).await.unwrap();
    let err = s.delete(key, Some(v1.mod_revision)).await.unwrap_err();
    assert_eq!(
        err,
        StorageError::Conflict {
            key: key.into(),
            current: Some(v2.clone())
        }
    );
    assert!(
        s.get(key).await.unwrap().is_some(),
        "a failed delete keeps the key"
    );
    let deleted = s.delete(key, Some(v2.mod_revision)).await.unwrap();
    let expected = KeyValue {
        mod_revision: v2.mod_revision + 1,
        served: Default::default(),
        ..v2.clone()
    };
    assert_eq!(deleted, expected, "last value, original create_revision");
    assert_eq!(s.current_revision().await.unwrap(), deleted.mod_revision);
    let err = s.delete(key, None).await.unwrap_err();
    assert_eq!(err, StorageError::NotFound { key: key.into() });
    let other = "/registry/conformance/delete/b";
    s.create(other, val("b")).await.unwrap();
    assert_eq!(s.delete(other, None).await.unwrap().value, val("b"));
}

pub async fn deleted_keys_vanish_from_get_range_and_count<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let prefix = "/registry/conformance/vanish/";
    for name in ["a", "b", "c"] {
        s.create(&format!("{prefix}{name}"), val(name))
            .await
            .unwrap();
    }
    s.delete(&format!("{prefix}b"), None).await.unwrap();
    assert_eq!(s.get(&format!("{prefix}b")).await.unwrap(), None);
    let keys = keys_under(&s, RangeRequest::prefix(prefix)).await;
    assert_eq!(keys, [format!("{prefix}a"), format!("{prefix}c")]);
    assert_eq!(s.count(prefix).await.unwrap(), 2);
}

pub async fn range_isolates_prefixes_and_sorts_bytewise<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let keys = [
        "/registry/pods/a/z",
        "/registry/pods/ab/c",
        "/registry/pods/a/\u{e9}",
        "/registry/pods/a",
        "/registry/pods/a/b",
        "/registry/pods/a/B",
        "/registry/pods/a0",
    ];
    for key in keys {
        s.create(key, val(key)).await.unwrap();
    }
    let got = keys_under(&s, RangeRequest::prefix("/registry/pods/a/")).await;
    let want = [
        "/registry/pods/a/B",
        "/registry/pods/a/b",
        "/registry/pods/a/z",
        "/registry/pods/a/\u{e9}",
    ];
    assert_eq!(got, want);
    assert_eq!(s.count("/registry/pods/a/").await.unwrap(), 4);
    let got = keys_under(&s, RangeRequest::prefix("/registry/pods/ab/")).await;
    assert_eq!(got, ["/registry/pods/ab/c"]);
    assert_eq!(s.count("/registry/pods/").await.unwrap(), 7);
    assert_eq!(s.count("/registry/services/").await.unwrap(), 0);
}

pub async fn paging_returns_every_key_exactly_once<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let prefix = "/registry/conformance/page/";
    let mut want = BTreeSet::new();
    for i in (0..23).rev() {
        let key = format!("{prefix}k{i:02}");
        s.create(&key, val("v")).await.unwrap();
        want.insert(key);
    }
    let mut seen = Vec::new();
    let mut pinned: Option<Revision> = None;
    let mut start_after: Option<String> = None;
    loop {
        let req = RangeRequest {
            prefix,
            start_after: start_after.as_deref(),
            limit: Some(5),
            revision: pinned,
        };
        let page = s.range(req).await.unwrap();
        assert!(page.kvs.len() <= 5);
        pinned.get_or_insert(page.revision);
        assert_eq!(Some(page.revision), pinned);
        seen.extend(page.kvs.iter().map(|kv| kv.key.clone()));
        // Writes between pages are invisible to a list pinned at a revision.
        s.create(&format!("{prefix}new{}", seen.len()), val("v"))
            .await
            .unwrap();
        s.delete(&format!("{prefix}k22"), None).await.ok();
        if !page.more {
            assert_eq!(page.kvs.len(), 3, "23 keys = 4 full pages + 3");
            break;
        }
        start_after = page.kvs.last().map(|kv| kv.key.clone());
    }
    assert_eq!(seen, want.iter().cloned().collect::<Vec<_>>());
    let exact = |limit| RangeRequest {
        limit: Some(limit),
        revision: pinned,
        ..RangeRequest::prefix(prefix)
    };
    assert!(!s.range(exact(23)).await.unwrap().more);
    assert!(s.range(exact(22)).await.unwrap().more);
    assert_eq!(
        s.range(exact(0)).await.unwrap().kvs.len(),
        23,
        "0 = no limit"
    );
}

pub async fn range_at_old_revision_sees_old_state<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let prefix = "/registry/conformance/old/";
    let (a, b) = (format!("{prefix}a"), format!("{prefix}b"));
    let a1 = s.create(&a, val("a1")).await.unwrap();
    let a2 = s.update(&a, val("a2"), a1.mod_revision).await.unwrap();
    let b1 = s.create(&b, val("b1")).await.unwrap();
    s.delete(&a, None).await.unwrap();
    let at = |revision| RangeRequest {
        revision: Some(revision),
        ..RangeRequest::prefix(prefix)
    };
    let old = s.range(at(a1.mod_revision)).await.unwrap();
    assert_eq!(old.revision, a1.mod_revision);
    assert_eq!(old.kvs, [a1]);
    assert_eq!(
        s.range(at(b1.mod_revision)).await.unwrap().kvs,
        [a2, b1.clone()]
    );
    let latest = s.range(RangeRequest::prefix(prefix)).await.unwrap();
    assert_eq!(latest.kvs, [b1]);
    let current = s.current_revision().await.unwrap();
    assert_eq!(latest.revision, current);
    let err = s.range(at(current + 1)).await.unwrap_err();
    assert_eq!(
        err,
        StorageError::FutureRevision {
            requested: current + 1,
            current
        }
    );
}

pub async fn values_roundtrip_byte_for_byte<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let binary = Bytes::from_static(&[0, 159, 146, 150, 255, b'{', 0]);
    s.create("/registry/conformance/bytes/bin", binary.clone())
        .await
        .unwrap();
    s.create("/registry/conformance/bytes/empty", Bytes::new())
        .await
        .unwrap();
    let got = s
        .get("/registry/conformance/bytes/bin")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.value, binary);
    let got = s
        .get("/registry/conformance/bytes/empty")
        .await
        .unwrap()
        .unwrap();
    assert!(got.value.is_empty());
}

pub async fn watch_replays_history_then_streams_live<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let prefix = "/registry/conformance/watch/";
    let (a, b) = (format!("{prefix}a"), format!("{prefix}b"));
    let a1 = s.create(&a, val("a1")).await.unwrap();
    let a2 = s.update(&a, val("a2"), a1.mod_revision).await.unwrap();
    let b1 = s.create(&b, val("b1")).await.unwrap();
    let gone = s.delete(&a, None).await.unwrap();
    let mut watch = s.watch(prefix, a1.mod_revision).await.unwrap();
    let e = next_event(&mut watch).await;
    assert_eq!((e.kind, &e.kv, &e.prev), (EventKind::Put, &a2, &Some(a1)));
    let e = next_event(&mut watch).await;
    assert_eq!((e.kind, &e.kv, &e.prev), (EventKind::Put, &b1, &None));
    let e = next_event(&mut watch).await;
    assert_eq!(
        (e.kind, &e.kv, &e.prev),
        (EventKind::Delete, &gone, &Some(a2))
    );
    assert_eq!(
        e.kv.value,
        val("a2"),
        "a delete event carries the last value"
    );
    let c1 = s.create(&format!("{prefix}c"), val("c1")).await.unwrap();
    let e = next_event(&mut watch).await;
    assert_eq!((e.kind, &e.kv, &e.prev), (EventKind::Put, &c1, &None));
    assert_quiet(&mut watch).await;
    // Watching from the current revision yields only later events.
    let mut fresh = s.watch(prefix, c1.mod_revision).await.unwrap();
    let b2 = s.update(&b, val("b2"), b1.mod_revision).await.unwrap();
    assert_eq!(next_event(&mut fresh).await.kv, b2);
    assert_eq!(next_event(&mut watch).await.kv, b2);
    assert_quiet(&mut fresh).await;
}

pub async fn watch_filters_by_prefix<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let r0 = s.current_revision().await.unwrap();
    s.create("/registry/conformance/wf/ab/x", val("no"))
        .await
        .unwrap();
    s.create("/registry/conformance/wf/a/x", val("yes"))
        .await
        .unwrap();
    let mut watch = s.watch("/registry/conformance/wf/a/", r0).await.unwrap();
    s.create("/registry/conformance/wf/ab/y", val("no"))
        .await
        .unwrap();
    s.create("/registry/conformance/wf/a/y", val("yes"))
        .await
        .unwrap();
    assert_eq!(
        next_event(&mut watch).await.kv.key,
        "/registry/conformance/wf/a/x"
    );
    assert_eq!(
        next_event(&mut watch).await.kv.key,
        "/registry/conformance/wf/a/y"
    );
    assert_quiet(&mut watch).await;
}

/// Collects revisions from `watch` until `last` is reached, then checks that
/// nothing (such as a doubled event) follows.
/// The revisions a watch from `from` delivers up to `last` (none when the
/// watch started after the last write).
async fn revisions_until(mut watch: WatchStream, from: Revision, last: Revision) -> Vec<Revision> {
    let mut seen = Vec::new();
    while seen.last().copied().unwrap_or(from) < last {
        seen.push(next_event(&mut watch).await.revision());
    }
    assert_quiet(&mut watch).await;
    seen
}

pub async fn watch_during_concurrent_writes_misses_nothing<B: Backend>(backend: &B) {
    let s = std::sync::Arc::new(open(backend).await);
    let prefix = "/registry/conformance/concurrent/";
    let r0 = s.current_revision().await.unwrap();
    let (writers, per_writer) = (4, 40);
    let last = r0 + writers * per_writer;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..per_writer {
                let key = format!("{prefix}w{w}/k{}", i % 5);
                match s.get(&key).await.unwrap() {
                    Some(kv) => s.update(&key, val("u"), kv.mod_revision).await.map(|_| ()),
                    None => s.create(&key, val("c")).await.map(|_| ()),
                }
                .unwrap();
            }
        }));
    }
    // Watchers start before, and at several points during, the writes and
    // consume while the writes go on (replay and live events overlap).
    let mut watchers = Vec::new();
    for round in 0..4 {
        if round > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let from = if round == 0 {
            r0
        } else {
            s.current_revision().await.unwrap()
        };
        let watch = s.watch(prefix, from).await.unwrap();
        watchers.push((from, tokio::spawn(revisions_until(watch, from, last))));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(s.current_revision().await.unwrap(), last);
    for (from, watcher) in watchers {
        let seen = watcher.await.unwrap();
        assert_eq!(
            seen,
            (from + 1..=last).collect::<Vec<_>>(),
            "watch from {from}"
        );
    }
}

pub async fn watch_and_range_below_compaction_fail<B: Backend>(backend: &B) {
    let s = open(backend).await;
    let prefix = "/registry/conformance/compact/";
    let (a, b) = (format!("{prefix}a"), format!("{prefix}b"));
    let steady = s.create(&b, val("written once")).await.unwrap();
    let mut kv = s.create(&a, val("0")).await.unwrap();
    for i in 1..=4 {
        kv = s
            .update(&a, val(&i.to_string()), kv.mod_revision)
            .await
            .unwrap();
    }
    let point = kv.mod_revision - 2;
    s.compact(point).await.unwrap();
    assert_eq!(s.compacted_revision().await.unwrap(), point);
    match s.watch(prefix, point - 1).await {
        Err(StorageError::Compacted { compacted, .. }) => assert_eq!(compacted, point),
        Err(other) => panic!("expected Compacted, got {other:?}"),
        Ok(_) => panic!("expected Compacted, got a stream"),
    }
    let at = |revision| RangeRequest {
        revision: Some(revision),
        ..RangeRequest::prefix(prefix)
    };
    assert!(matches!(
        s.range(at(point - 1)).await,
        Err(StorageError::Compacted { compacted, .. }) if compacted == point
    ));
    // The compaction point itself is still readable and watchable.
    let state = s.range(at(point)).await.unwrap();
    let values: Vec<_> = state.kvs.iter().map(|kv| kv.value.clone()).collect();
    assert_eq!(values, [val("2"), val("written once")]);
    let mut watch = s.watch(prefix, point).await.unwrap();
    assert_eq!(next_event(&mut watch).await.revision(), point + 1);
    assert_eq!(next_event(&mut watch).await.revision(), point + 2);
    assert_quiet(&mut watch).await;
    // The latest value of every live key survives compaction.
    s.compact(kv.mod_revision).await.unwrap();
    assert_eq!(s.get(&b).await.unwrap(), Some(steady));
    assert_eq!(s.get(&a).await.unwrap(), Some(kv));
    assert_eq!(s.count(prefix).await.unwrap(), 2);
}

pub async fn compact_rejects_future_and_already_compacted<B: Backend>(backend: &B) {
    let s = open(backend).await;
    for i in 0..3 {
        s.create(&format!("/registry/conformance/cr/{i}"), val("v"))
            .await
            .unwrap();
    }
    let current = s.current_revision().await.unwrap();
    let err = s.compact(current + 1).await.unwrap_err();
    assert!(
        matches!(err, StorageError::FutureRevision { .. }),
        "{err:?}"
    );
    s.compact(current - 1).await.unwrap();
    for again in [current - 1, current - 2] {
        let err = s.compact(again).await.unwrap_err();
        assert!(matches!(err, StorageError::Compacted { .. }), "{err:?}");
    }
    assert_eq!(s.compacted_revision().await.unwrap(), current - 1);
}

pub async fn restart_keeps_data_and_revision_sequence<B: Backend>(backend: &B) {
    let prefix = "/registry/conformance/restart/";
    let (a, b) = (format!("{prefix}a"), format!("{prefix}b"));
    let s = open(backend).await;
    let a1 = s.create(&a, val("a1")).await.unwrap();
    let a2 = s.update(&a, val("a2"), a1.mod_revision).await.unwrap();
    s.compact(a2.mod_revision).await.unwrap();
    s.create(&b, val("b1")).await.unwrap();
    let gone = s.delete(&b, None).await.unwrap();
    drop(s);
    let s = open(backend).await;
    assert_eq!(s.get(&a).await.unwrap(), Some(a2.clone()));
    assert_eq!(s.get(&b).await.unwrap(), None);
    assert_eq!(s.current_revision().await.unwrap(), gone.mod_revision);
    assert_eq!(s.compacted_revision().await.unwrap(), a2.mod_revision);
    let mut watch = s.watch(prefix, a2.mod_revision).await.unwrap();
    assert_eq!(next_event(&mut watch).await.kind, EventKind::Put);
    assert_eq!(next_event(&mut watch).await.kv, gone);
    let next = s.create(&b, val("b2")).await.unwrap();
    assert_eq!(next.mod_revision, gone.mod_revision + 1);
    assert_eq!(next_event(&mut watch).await.kv, next);
}

pub async fn ready_when_open<B: Backend>(backend: &B) {
    let s = open(backend).await;
    s.is_ready().await.unwrap();
}
