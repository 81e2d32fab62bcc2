//! Group commit: concurrent writers, CAS races, and batches in which some
//! writes fail (one write's precondition, or the whole commit).

use std::collections::BTreeSet;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::join_all;
use futures_util::StreamExt;

use crate::storage::{
    Event, EventKind, Revision, SqliteStorage, Storage, StorageError, WatchStream,
};

const WAIT: Duration = Duration::from_secs(10);

fn b(s: &str) -> Bytes {
    Bytes::from(s.to_string())
}

fn open(dir: &tempfile::TempDir) -> SqliteStorage {
    SqliteStorage::open(&dir.path().join("state.sqlite")).unwrap()
}

/// Holds the writer thread (inside an exclusive job) until the returned
/// sender is used or dropped: writes queued meanwhile form one batch.
fn hold_writer(store: &SqliteStorage) -> mpsc::Sender<()> {
    let (release, gate) = mpsc::channel::<()>();
    drop(store.shared.writer.exclusive(move |_| {
        let _ = gate.recv();
        Ok(())
    }));
    release
}

async fn events(watch: &mut WatchStream, n: usize) -> Vec<Event> {
    let mut out = Vec::new();
    while out.len() < n {
        match tokio::time::timeout(WAIT, watch.next()).await {
            Ok(Some(Ok(event))) => out.push(event),
            other => panic!("expected a watch event, got {other:?}"),
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_get_distinct_increasing_revisions_seen_in_order_by_watch() {
    const TASKS: usize = 64;
    const PER_TASK: usize = 50;
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(open(&dir));
    let mut watch = store.watch("/registry/", 0).await.unwrap();
    let writers = (0..TASKS).map(|t| {
        let store = store.clone();
        tokio::spawn(async move {
            let mut created = Vec::new();
            for i in 0..PER_TASK {
                let key = format!("/registry/t{t:02}/k{i:02}");
                let kv = store.create(&key, b(&key)).await.unwrap();
                assert_eq!(kv.create_revision, kv.mod_revision);
                created.push((kv.mod_revision, key));
            }
            created
        })
    });
    let mut by_revision = Vec::new();
    for created in join_all(writers).await {
        let created = created.unwrap();
        // Each task's own writes were acknowledged in order.
        assert!(created.windows(2).all(|w| w[0].0 < w[1].0));
        by_revision.extend(created);
    }
    by_revision.sort();
    let total = (TASKS * PER_TASK) as Revision;
    let revs: Vec<Revision> = by_revision.iter().map(|(r, _)| *r).collect();
    assert_eq!(revs, (1..=total).collect::<Vec<_>>());
    assert_eq!(store.current_revision().await.unwrap(), total);
    let seen = events(&mut watch, by_revision.len()).await;
    for (event, (rev, key)) in seen.iter().zip(&by_revision) {
        assert_eq!((event.revision(), &event.kv.key), (*rev, key));
        assert_eq!(event.kind, EventKind::Put);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_compare_and_swap_updates_lose_no_increment() {
    const TASKS: usize = 16;
    const PER_TASK: usize = 20;
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(open(&dir));
    let key = "/registry/counter";
    let first = store.create(key, b("0")).await.unwrap().mod_revision;
    let racers = (0..TASKS).map(|_| {
        let store = store.clone();
        tokio::spawn(async move {
            let mut wins = Vec::new();
            while wins.len() < PER_TASK {
                let kv = store.get(key).await.unwrap().unwrap();
                let n: u64 = std::str::from_utf8(&kv.value).unwrap().parse().unwrap();
                match store
                    .update(key, b(&(n + 1).to_string()), kv.mod_revision)
                    .await
                {
                    Ok(new) => wins.push(new.mod_revision),
                    Err(StorageError::Conflict { current, .. }) => {
                        let current = current.unwrap();
                        assert!(current.mod_revision > kv.mod_revision);
                    }
                    Err(err) => panic!("unexpected {err:?}"),
                }
            }
            wins
        })
    });
    let mut wins = BTreeSet::new();
    for won in join_all(racers).await {
        wins.extend(won.unwrap());
    }
    let total = (TASKS * PER_TASK) as Revision;
    // One revision per winning update, none for the losers.
    assert_eq!(wins, (first + 1..=first + total).collect());
    assert_eq!(store.current_revision().await.unwrap(), first + total);
    let last = store.get(key).await.unwrap().unwrap();
    assert_eq!(last.value, b(&total.to_string()));
}

#[tokio::test]
async fn compare_and_swap_updates_in_one_batch_let_exactly_the_first_win() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let key = "/registry/cas";
    let base = store.create(key, b("base")).await.unwrap().mod_revision;
    let release = hold_writer(&store);
    let attempts: Vec<_> = (0..8)
        .map(|i| store.update(key, b(&format!("v{i}")), base))
        .collect();
    drop(release);
    let results = join_all(attempts).await;
    assert_eq!(results[0].as_ref().unwrap().mod_revision, base + 1);
    for result in &results[1..] {
        match result {
            Err(StorageError::Conflict { current, .. }) => {
                let current = current.as_ref().unwrap();
                assert_eq!((current.mod_revision, &current.value), (base + 1, &b("v0")));
            }
            other => panic!("expected a conflict, got {other:?}"),
        }
    }
    assert_eq!(store.current_revision().await.unwrap(), base + 1);
}

#[tokio::test]
async fn a_batch_with_failing_preconditions_commits_the_other_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let r = store
        .create("/registry/before", b("x"))
        .await
        .unwrap()
        .mod_revision;
    let mut watch = store.watch("/registry/", r).await.unwrap();
    let release = hold_writer(&store);
    let results = {
        let (a, bk, c) = ("/registry/a", "/registry/b", "/registry/c");
        let writes = vec![
            store.create(a, b("a1")),
            store.create(a, b("again")), // exists: created just before
            store.update(a, b("a2"), r + 1), // sees the create of this batch
            store.update(a, b("a3"), r + 1), // stale now
            store.delete(bk, None),      // absent
            store.create(bk, b("b1")),
            store.delete(bk, Some(r + 3)),
            store.delete(c, Some(r)), // absent
            store.create(c, b("c1")),
        ];
        drop(release);
        join_all(writes).await
    };
    let ok = |i: usize| results[i].as_ref().unwrap().mod_revision;
    assert_eq!(
        [ok(0), ok(2), ok(5), ok(6), ok(8)],
        [r + 1, r + 2, r + 3, r + 4, r + 5]
    );
    assert!(matches!(
        results[1],
        Err(StorageError::AlreadyExists { .. })
    ));
    assert!(matches!(
        &results[3],
        Err(StorageError::Conflict { current: Some(kv), .. }) if kv.mod_revision == r + 2
    ));
    assert!(matches!(results[4], Err(StorageError::NotFound { .. })));
    assert!(matches!(results[7], Err(StorageError::NotFound { .. })));
    let seen = events(&mut watch, 5).await;
    let kinds: Vec<_> = seen
        .iter()
        .map(|e| (e.revision(), e.kind.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (r + 1, EventKind::Put),
            (r + 2, EventKind::Put),
            (r + 3, EventKind::Put),
            (r + 4, EventKind::Delete),
            (r + 5, EventKind::Put),
        ]
    );
    assert_eq!(
        store.get("/registry/a").await.unwrap().unwrap().value,
        b("a2")
    );
    assert_eq!(store.get("/registry/b").await.unwrap(), None);
    assert_eq!(store.current_revision().await.unwrap(), r + 5);
}

/// Runs `sql` on the write connection, between batches.
fn on_write_connection(store: &SqliteStorage, sql: String) {
    store
        .shared
        .writer
        .raw(move |conn| conn.execute_batch(&sql).unwrap());
}

/// Makes the writer's commit fail if it holds a write of `poison` (a
/// deferred foreign key, checked only at COMMIT).
fn fail_commits_writing(store: &SqliteStorage, poison: &str) {
    on_write_connection(
        store,
        format!(
            "PRAGMA foreign_keys = ON;
             CREATE TEMP TABLE parent (id INTEGER PRIMARY KEY);
             CREATE TEMP TABLE child (
                 p INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
             CREATE TEMP TRIGGER refuse AFTER INSERT ON main.log
             WHEN NEW.key = CAST('{poison}' AS BLOB)
             BEGIN INSERT INTO child VALUES (NEW.revision); END;"
        ),
    );
}

/// Makes the statement writing `bad` fail after its row was inserted
/// (`RAISE(FAIL)` keeps what the statement already did).
fn fail_writes_of(store: &SqliteStorage, bad: &str) {
    on_write_connection(
        store,
        format!(
            "CREATE TEMP TRIGGER refuse AFTER INSERT ON main.log
             WHEN NEW.key = CAST('{bad}' AS BLOB)
             BEGIN SELECT RAISE(FAIL, 'refused by the test'); END;"
        ),
    );
}

#[tokio::test]
async fn a_write_failing_inside_sqlite_leaves_no_trace_and_its_batch_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    fail_writes_of(&store, "/registry/bad");
    let mut watch = store.watch("/registry/", 0).await.unwrap();
    let release = hold_writer(&store);
    let writes = vec![
        store.create("/registry/a", b("a")),
        store.create("/registry/bad", b("x")),
        store.create("/registry/c", b("c")),
    ];
    drop(release);
    let results = join_all(writes).await;
    assert_eq!(results[0].as_ref().unwrap().mod_revision, 1);
    assert!(
        matches!(&results[1], Err(StorageError::Internal(m)) if m.contains("refused by the test")),
        "{:?}",
        results[1]
    );
    assert_eq!(results[2].as_ref().unwrap().mod_revision, 2);
    assert_eq!(store.get("/registry/bad").await.unwrap(), None);
    assert_eq!(store.current_revision().await.unwrap(), 2);
    let seen = events(&mut watch, 2).await;
    let keys: Vec<_> = seen
        .iter()
        .map(|e| (e.revision(), e.kv.key.as_str()))
        .collect();
    assert_eq!(keys, vec![(1, "/registry/a"), (2, "/registry/c")]);
}

#[tokio::test]
async fn a_failed_commit_fails_every_write_of_its_batch_and_broadcasts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    let r = store
        .create("/registry/before", b("x"))
        .await
        .unwrap()
        .mod_revision;
    let mut watch = store.watch("/registry/", r).await.unwrap();
    fail_commits_writing(&store, "/registry/poison");
    let release = hold_writer(&store);
    let writes = vec![
        store.create("/registry/a", b("a")),
        store.create("/registry/poison", b("p")),
        store.update("/registry/before", b("y"), r),
    ];
    drop(release);
    for result in join_all(writes).await {
        assert!(
            matches!(result, Err(StorageError::Internal(ref m)) if m.contains("FOREIGN KEY")),
            "{result:?}"
        );
    }
    assert_eq!(store.current_revision().await.unwrap(), r);
    assert_eq!(store.get("/registry/a").await.unwrap(), None);
    // The next batch commits, at the next revision: the failed one used none.
    let kv = store.create("/registry/a", b("a")).await.unwrap();
    assert_eq!(kv.mod_revision, r + 1);
    let seen = events(&mut watch, 1).await;
    assert_eq!(
        (seen[0].revision(), seen[0].kv.key.as_str()),
        (r + 1, "/registry/a")
    );
}
