//! Tests of the etcd backend: the shared conformance suite and multi-client,
//! TLS and failure tests against real etcd processes, plus unit tests of the
//! key and error mappings.

use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::StreamExt;
use tokio::sync::{OnceCell, OwnedMutexGuard};

use super::testing::{
    shared_etcd_turn, shared_etcd_url, test_options, unique_prefix, wait_until_ready, EtcdProcess,
    TestPki,
};
use super::*;
use crate::storage::conformance::{self, Backend};
use crate::storage::{EventKind, Storage};

/// A test must get its answer (usually an error) within this long: the
/// request timeout in tests is 2 s, so this only catches hangs.
const FAIL_FAST: Duration = Duration::from_secs(10);

fn val(s: &str) -> Bytes {
    Bytes::from(s.to_string())
}

/// A conformance backend: the shared etcd under a fresh key prefix, used
/// exclusively from the first `open` until the case ends.
struct SharedEtcdBackend {
    prefix: String,
    turn: OnceCell<OwnedMutexGuard<()>>,
}

impl SharedEtcdBackend {
    fn new() -> Self {
        SharedEtcdBackend {
            prefix: unique_prefix(),
            turn: OnceCell::new(),
        }
    }
}

impl Backend for SharedEtcdBackend {
    type Store = EtcdStorage;
    fn open(&self) -> BoxFuture<'_, StorageResult<EtcdStorage>> {
        Box::pin(async move {
            self.turn.get_or_init(shared_etcd_turn).await;
            let url = shared_etcd_url().await;
            EtcdStorage::connect(test_options(url, &self.prefix)).await
        })
    }
}

conformance::storage_conformance_tests!(SharedEtcdBackend::new());

/// Awaits `op`, failing the test if it takes longer than [`FAIL_FAST`].
async fn within<T>(what: &str, op: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(FAIL_FAST, op).await {
        Ok(out) => out,
        Err(_) => panic!("{what} hung for more than {FAIL_FAST:?}"),
    }
}

/// Asserts `op` fails promptly with `Unavailable`.
async fn unavailable<T: std::fmt::Debug>(
    what: &str,
    op: impl std::future::Future<Output = StorageResult<T>>,
) {
    match within(what, op).await {
        Err(StorageError::Unavailable(msg)) => assert!(!msg.is_empty()),
        other => panic!("{what}: expected Unavailable, got {other:?}"),
    }
}

#[test]
fn keys_are_prefixed_and_stripped() {
    let keys = Keys::new("/registry");
    assert_eq!(keys.etcd_key("/pods/a"), b"/registry/pods/a".to_vec());
    assert_eq!(keys.store_key(b"/registry/pods/a").unwrap(), "/pods/a");
    assert!(keys.store_key(b"/other/pods/a").is_err());
    assert!(keys.store_key(b"/registry/\xff").is_err());
}

#[test]
fn ranges_cover_exactly_the_prefix() {
    let keys = Keys::new("/p");
    assert_eq!(
        keys.range("/a/", None),
        (b"/p/a/".to_vec(), b"/p/a0".to_vec())
    );
    let (start, end) = keys.range("/a/", Some("/a/k1"));
    assert_eq!((start, end), (b"/p/a/k1\0".to_vec(), b"/p/a0".to_vec()));
    // A start_after below the prefix does not widen the range.
    assert_eq!(keys.range("/a/", Some("/0")).0, b"/p/a/".to_vec());
    // No prefix at all: every key ("\0" to "\0", etcd's "all keys").
    assert_eq!(
        Keys::new("").range("", None),
        (b"\0".to_vec(), b"\0".to_vec())
    );
}

#[test]
fn compact_rev_key_values_parse_like_kube_writes_them() {
    use super::compaction::parse_revision;
    assert_eq!(parse_revision(b"0").unwrap(), 0);
    assert_eq!(parse_revision(b"123456").unwrap(), 123456);
    assert!(parse_revision(b"").is_err());
    assert!(parse_revision(b"x1").is_err());
}

#[test]
fn etcd_errors_map_to_storage_errors() {
    use super::errors::from_etcd;
    let status = |s| etcd_client::Error::GRpcStatus(s);
    let compacted =
        tonic::Status::out_of_range("etcdserver: mvcc: required revision has been compacted");
    assert!(matches!(
        from_etcd(status(compacted)),
        StorageError::Compacted { .. }
    ));
    let future =
        tonic::Status::out_of_range("etcdserver: mvcc: required revision is a future revision");
    assert!(matches!(
        from_etcd(status(future)),
        StorageError::FutureRevision { .. }
    ));
    let down = tonic::Status::unavailable("tcp connect error");
    assert!(matches!(
        from_etcd(status(down)),
        StorageError::Unavailable(_)
    ));
    let no_leader = tonic::Status::unavailable("etcdserver: no leader");
    assert!(matches!(
        from_etcd(status(no_leader)),
        StorageError::Unavailable(_)
    ));
    let too_large = tonic::Status::invalid_argument("etcdserver: request is too large");
    assert!(matches!(
        from_etcd(status(too_large)),
        StorageError::TooLarge(_)
    ));
    let over_grpc_limit = tonic::Status::resource_exhausted(
        "grpc: received message larger than max (2097252 vs. 2097152)",
    );
    assert!(matches!(
        from_etcd(status(over_grpc_limit)),
        StorageError::TooLarge(_)
    ));
    let bad = tonic::Status::invalid_argument("etcdserver: key is not provided");
    assert!(matches!(from_etcd(status(bad)), StorageError::Internal(_)));
}

#[tokio::test]
async fn misconfigured_endpoints_are_rejected_at_connect() {
    let none = EtcdStorage::connect(EtcdOptions::new(Vec::new())).await;
    assert!(matches!(none, Err(StorageError::Internal(_))));
    let https = EtcdOptions::new(vec!["https://127.0.0.1:2379".into()]);
    let no_ca = EtcdStorage::connect(https).await;
    assert!(matches!(no_ca, Err(StorageError::Internal(msg)) if msg.contains("CA")));
    let mut cert_only = EtcdOptions::new(vec!["https://127.0.0.1:2379".into()]);
    cert_only.tls = Some(EtcdTls::default());
    let no_ca = EtcdStorage::connect(cert_only).await;
    assert!(matches!(no_ca, Err(StorageError::Internal(msg)) if msg.contains("CA")));
}

/// Two API server replicas on one etcd: each sees the other's writes, a
/// watch on one sees every event written by the other in order, guards see
/// the other's updates, and both agree on the compaction point.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_share_writes_events_and_compaction() {
    let _turn = shared_etcd_turn().await;
    let url = shared_etcd_url().await;
    let prefix = unique_prefix();
    let a = EtcdStorage::connect(test_options(url, &prefix))
        .await
        .unwrap();
    let b = EtcdStorage::connect(test_options(url, &prefix))
        .await
        .unwrap();
    let r0 = a.current_revision().await.unwrap();
    let mut watch = a.watch("/registry/pods/", r0).await.unwrap();

    let mut written = Vec::new();
    for i in 0..5 {
        let key = format!("/registry/pods/p{i}");
        let created = b.create(&key, val("v1")).await.unwrap();
        written.push((EventKind::Put, created.clone()));
        let updated = b
            .update(&key, val("v2"), created.mod_revision)
            .await
            .unwrap();
        written.push((EventKind::Put, updated));
    }
    for i in [0, 2, 4] {
        let deleted = b
            .delete(&format!("/registry/pods/p{i}"), None)
            .await
            .unwrap();
        written.push((EventKind::Delete, deleted));
    }
    for (kind, kv) in &written {
        let event = within("watch event", watch.next()).await.unwrap().unwrap();
        assert_eq!((&event.kind, &event.kv), (kind, kv));
    }

    let p1 = b.get("/registry/pods/p1").await.unwrap().unwrap();
    assert_eq!(a.get("/registry/pods/p1").await.unwrap(), Some(p1.clone()));
    let stale = a
        .update("/registry/pods/p1", val("a"), p1.mod_revision - 1)
        .await;
    assert_eq!(
        stale.unwrap_err(),
        StorageError::Conflict {
            key: "/registry/pods/p1".into(),
            current: Some(p1.clone())
        }
    );
    assert_eq!(a.count("/registry/pods/").await.unwrap(), 2);

    a.compact(p1.mod_revision).await.unwrap();
    assert_eq!(b.compacted_revision().await.unwrap(), p1.mod_revision);
    assert!(matches!(
        b.compact(p1.mod_revision).await,
        Err(StorageError::Compacted { compacted, .. }) if compacted == p1.mod_revision
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_client_certificate() {
    let pki = TestPki::generate();
    let etcd = EtcdProcess::start(Some(&pki));
    let files = tempfile::tempdir().unwrap();
    let write = |name: &str, pem: &str| {
        let path = files.path().join(name);
        std::fs::write(&path, pem).unwrap();
        path
    };
    let ca = write("ca.crt", &pki.ca_pem);
    let cert = write("client.crt", &pki.client_cert_pem);
    let key = write("client.key", &pki.client_key_pem);
    let mut options = test_options(etcd.client_url(), "/tls");
    options.tls = Some(EtcdTls::from_files(Some(&ca), Some(&cert), Some(&key)).unwrap());
    wait_until_ready(&options).await;

    let store = EtcdStorage::connect(options.clone()).await.unwrap();
    let created = store.create("/registry/a", val("secret")).await.unwrap();
    assert_eq!(
        store.get("/registry/a").await.unwrap(),
        Some(created.clone())
    );
    let mut watch = store
        .watch("/registry/", created.mod_revision - 1)
        .await
        .unwrap();
    let event = within("watch event", watch.next()).await.unwrap().unwrap();
    assert_eq!(event.kv, created);

    // etcd runs with --client-cert-auth: without a client certificate the
    // handshake fails, promptly.
    let mut anonymous = options.clone();
    anonymous.tls = Some(EtcdTls {
        ca_pem: Some(pki.ca_pem.clone().into_bytes()),
        ..EtcdTls::default()
    });
    let store = EtcdStorage::connect(anonymous).await.unwrap();
    assert!(within("anonymous probe", store.is_ready()).await.is_err());
}

/// etcd killed: every operation fails within seconds (no hang) and an open
/// watch ends with an error; etcd back: the same client works again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopped_etcd_fails_fast_and_the_same_client_recovers() {
    let mut etcd = EtcdProcess::start(None);
    let options = test_options(etcd.client_url(), "/down");
    wait_until_ready(&options).await;
    let s = EtcdStorage::connect(options).await.unwrap();
    let a = s.create("/registry/a", val("1")).await.unwrap();
    let mut watch = s.watch("/registry/", a.mod_revision).await.unwrap();

    etcd.stop();
    let item = within("watch after etcd died", watch.next()).await;
    assert!(
        matches!(item, Some(Err(StorageError::Unavailable(_)))),
        "{item:?}"
    );
    assert!(within("watch end", watch.next()).await.is_none());
    unavailable("is_ready", s.is_ready()).await;
    unavailable("get", s.get("/registry/a")).await;
    unavailable("range", s.range(RangeRequest::prefix("/registry/"))).await;
    unavailable("count", s.count("/registry/")).await;
    unavailable("create", s.create("/registry/b", val("1"))).await;
    unavailable("update", s.update("/registry/a", val("2"), a.mod_revision)).await;
    unavailable("delete", s.delete("/registry/a", None)).await;
    unavailable("current_revision", s.current_revision()).await;
    unavailable("compacted_revision", s.compacted_revision()).await;
    unavailable("compact", s.compact(a.mod_revision)).await;
    let opened = s.watch("/registry/", a.mod_revision);
    unavailable("watch", async { opened.await.map(|_| ()) }).await;

    etcd.restart();
    let started = std::time::Instant::now();
    while s.is_ready().await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "client never recovered"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(s.get("/registry/a").await.unwrap(), Some(a.clone()));
    let mut watch = s.watch("/registry/", a.mod_revision).await.unwrap();
    let b = s.create("/registry/b", val("1")).await.unwrap();
    assert_eq!(b.mod_revision, a.mod_revision + 1);
    let event = within("watch after recovery", watch.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(event.kv, b);
}

/// etcd frozen (accepts nothing, answers nothing): requests time out instead
/// of hanging, an idle watch notices through HTTP/2 keep-alive, and the
/// client works again once etcd resumes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frozen_etcd_times_out_and_the_same_client_recovers() {
    let etcd = EtcdProcess::start(None);
    let options = test_options(etcd.client_url(), "/frozen");
    wait_until_ready(&options).await;
    let s = EtcdStorage::connect(options).await.unwrap();
    let a = s.create("/registry/a", val("1")).await.unwrap();
    let mut watch = s.watch("/registry/", a.mod_revision).await.unwrap();

    etcd.pause();
    unavailable("get", s.get("/registry/a")).await;
    unavailable("create", s.create("/registry/b", val("1"))).await;
    unavailable("is_ready", s.is_ready()).await;
    let opened = s.watch("/registry/", a.mod_revision);
    unavailable("watch", async { opened.await.map(|_| ()) }).await;
    let item = within("idle watch on a frozen etcd", watch.next()).await;
    assert!(
        matches!(item, Some(Err(StorageError::Unavailable(_)))),
        "{item:?}"
    );

    etcd.resume();
    let started = std::time::Instant::now();
    while s.is_ready().await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "client never recovered"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(s.get("/registry/a").await.unwrap(), Some(a));
}

/// etcd compacted behind the store's back (etcdctl, auto-compaction): reads
/// and watches below that point still fail with `Compacted`, learnt from
/// etcd rather than from compact_rev_key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_by_another_client_is_reported() {
    let etcd = EtcdProcess::start(None);
    let options = test_options(etcd.client_url(), "/external");
    wait_until_ready(&options).await;
    let s = EtcdStorage::connect(options).await.unwrap();
    let mut kv = s.create("/registry/a", val("0")).await.unwrap();
    let first = kv.mod_revision;
    for i in 1..=4 {
        kv = s
            .update("/registry/a", val(&i.to_string()), kv.mod_revision)
            .await
            .unwrap();
    }
    let mut raw = s.kv.clone();
    raw.compact(kv.mod_revision, None).await.unwrap();
    assert_eq!(s.compacted_revision().await.unwrap(), 0, "not recorded");

    let at_first = RangeRequest {
        revision: Some(first),
        ..RangeRequest::prefix("/registry/")
    };
    match s.range(at_first).await {
        Err(StorageError::Compacted {
            requested,
            compacted,
        }) => {
            assert_eq!(requested, first);
            assert!(compacted > first);
        }
        other => panic!("expected Compacted, got {other:?}"),
    }
    // etcd cancels the watch once it finds the start compacted: either when
    // confirming it or as the stream's only item.
    let err = match s.watch("/registry/", first).await {
        Err(err) => err,
        Ok(mut watch) => {
            let item = within("compacted watch", watch.next()).await;
            assert!(within("watch end", watch.next()).await.is_none());
            item.expect("an error item").expect_err("no event")
        }
    };
    assert_eq!(
        err,
        StorageError::Compacted {
            requested: first,
            compacted: kv.mod_revision
        }
    );
    // Compacting at or below etcd's point is refused as Compacted too.
    let err = s.compact(kv.mod_revision - 1).await.unwrap_err();
    assert!(matches!(err, StorageError::Compacted { .. }), "{err:?}");
}

/// Writes outside the cached prefix (the compaction marker, another tenant's
/// keys) move etcd's revision without an event for the watch cache; it
/// learns it is current from progress reports and keeps serving latest
/// reads from memory instead of waiting out `sync_wait` (30 s here, longer
/// than `within` allows).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_cache_over_etcd_stays_current_across_writes_outside_its_prefix() {
    use crate::storage::{CacheOptions, CachedStorage};
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    let _turn = shared_etcd_turn().await;
    let url = shared_etcd_url().await;
    let etcd = Arc::new(
        EtcdStorage::connect(test_options(url, &unique_prefix()))
            .await
            .unwrap(),
    );
    let options = CacheOptions {
        sync_wait: Duration::from_secs(30),
        ..CacheOptions::default()
    };
    let cache = CachedStorage::start_with(etcd.clone(), options);
    assert!(cache.wait_synced(FAIL_FAST).await, "cache synced");
    let a = cache
        .create("/registry/configmaps/d/a", val("{}"))
        .await
        .unwrap();
    etcd.create("/elsewhere/x", val("1")).await.unwrap();
    let read = within(
        "latest read after a foreign write",
        cache.range(RangeRequest::prefix("/registry/")),
    )
    .await
    .unwrap();
    assert_eq!(
        read.revision,
        a.mod_revision + 1,
        "read at etcd's current revision"
    );
    assert_eq!(read.kvs.len(), 1);
    within("compaction", cache.compact(a.mod_revision))
        .await
        .unwrap();
    let count = within("count after compaction", cache.count("/registry/"))
        .await
        .unwrap();
    assert_eq!(count, 1);
    assert_eq!(
        cache.stats().delegated.load(Ordering::Relaxed),
        0,
        "all served from memory"
    );
}
