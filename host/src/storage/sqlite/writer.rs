//! The writer of [`super::SqliteStorage`]: one thread owns the write
//! connection and commits writes in groups.
//!
//! Callers queue their write on a channel. The thread takes the first write
//! waiting, then whatever else is already queued (up to [`MAX_BATCH_WRITES`]
//! writes or [`MAX_BATCH_BYTES`]; it never waits for more), applies them in
//! order in one IMMEDIATE transaction and commits it with one fsync (WAL,
//! `synchronous=FULL`). Each write is checked against the state left by the
//! writes before it, in a savepoint of its own, so a failed precondition
//! fails that write alone. After the commit the thread broadcasts the
//! batch's events in revision order and only then answers each caller; if
//! the commit fails, every write of the batch fails and nothing is
//! broadcast. Other work on the write connection (compaction) is queued as
//! an exclusive job and runs between batches.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use rusqlite::{Connection, TransactionBehavior};
use tokio::sync::{broadcast, oneshot};

use super::log::{self, LogRow};
use crate::storage::{Event, KeyValue, Revision, StorageError, StorageResult};

/// Most writes committed in one transaction.
const MAX_BATCH_WRITES: usize = 256;
/// A batch stops taking writes once their keys and values reach this size.
const MAX_BATCH_BYTES: usize = 8 << 20;

/// One write, with its precondition.
#[derive(Debug)]
pub(super) enum WriteOp {
    /// Only if `key` is absent (or deleted).
    Create { key: String, value: Bytes },
    /// Only if `key`'s mod_revision is `expected`.
    Update {
        key: String,
        value: Bytes,
        expected: Revision,
    },
    /// Only if `key` is live (and at `expected`, when given).
    Delete {
        key: String,
        expected: Option<Revision>,
    },
}

/// The row a write appended and the key's newest row before it.
type Applied = (LogRow, Option<LogRow>);

/// Work run on the write connection between batches.
type Exclusive = Box<dyn FnOnce(&mut Connection) + Send>;

/// Where a write's answer goes.
type Reply = oneshot::Sender<StorageResult<KeyValue>>;

enum Job {
    Write { op: WriteOp, reply: Reply },
    Exclusive(Exclusive),
}

/// The handle callers queue work through; the thread stops once it is dropped.
pub(super) struct Writer {
    jobs: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts the writer thread over `conn`, broadcasting committed events on `events`.
    pub fn start(conn: Connection, events: broadcast::Sender<Event>) -> StorageResult<Writer> {
        let (jobs, queue) = mpsc::channel();
        std::thread::Builder::new()
            .name("sqlite-writer".to_string())
            .spawn(move || run(conn, &queue, &events))
            .map_err(|e| StorageError::Internal(format!("cannot start the sqlite writer: {e}")))?;
        Ok(Writer { jobs })
    }

    /// Queues `op` at once (calls made one after another commit in that
    /// order); the future resolves after its transaction committed.
    pub fn submit(&self, op: WriteOp) -> BoxFuture<'static, StorageResult<KeyValue>> {
        let (reply, answer) = oneshot::channel();
        let queued = self.jobs.send(Job::Write { op, reply });
        Box::pin(async move {
            queued.map_err(|_| stopped())?;
            answer.await.map_err(|_| unanswered())?
        })
    }

    /// Queues `op` to run alone in an IMMEDIATE transaction of the write
    /// connection, committed when it returns Ok.
    pub fn exclusive<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Connection) -> StorageResult<T> + Send + 'static,
    ) -> BoxFuture<'static, StorageResult<T>> {
        let (reply, answer) = oneshot::channel();
        let job: Exclusive = Box::new(move |conn| {
            // The caller may have gone away: nobody to tell.
            let _ = reply.send(in_transaction(conn, op));
        });
        let queued = self.jobs.send(Job::Exclusive(job));
        Box::pin(async move {
            queued.map_err(|_| stopped())?;
            answer.await.map_err(|_| unanswered())?
        })
    }
}

fn stopped() -> StorageError {
    StorageError::Unavailable("the sqlite writer has stopped".to_string())
}

fn unanswered() -> StorageError {
    StorageError::Internal("the sqlite writer failed before answering".to_string())
}

fn in_transaction<T>(
    conn: &mut Connection,
    op: impl FnOnce(&Connection) -> StorageResult<T>,
) -> StorageResult<T> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let out = op(&tx)?;
    tx.commit()?;
    Ok(out)
}

/// The thread's loop: until every [`Writer`] handle is gone, take a batch
/// and commit it, or run an exclusive job.
fn run(mut conn: Connection, queue: &mpsc::Receiver<Job>, events: &broadcast::Sender<Event>) {
    let mut next = None;
    loop {
        let Some(first) = next.take().or_else(|| queue.recv().ok()) else {
            return;
        };
        let work = match first {
            Job::Exclusive(job) => Work::Exclusive(job),
            Job::Write { op, reply } => {
                let (batch, after) = drain(op, reply, queue);
                next = after;
                Work::Batch(batch)
            }
        };
        // A panic (a bug) fails the jobs at hand, not every later write.
        let outcome = catch_unwind(AssertUnwindSafe(|| match work {
            Work::Exclusive(job) => job(&mut conn),
            Work::Batch(batch) => commit_batch(&mut conn, batch, events),
        }));
        if outcome.is_err() {
            tracing::error!("the sqlite writer panicked; the writes at hand failed");
        }
    }
}

enum Work {
    Batch(Vec<(WriteOp, Reply)>),
    Exclusive(Exclusive),
}

/// The first write plus the writes queued behind it, within the batch
/// bounds; an exclusive job met on the way is handed back to run next.
fn drain(
    op: WriteOp,
    reply: Reply,
    queue: &mpsc::Receiver<Job>,
) -> (Vec<(WriteOp, Reply)>, Option<Job>) {
    let mut bytes = op.size();
    let mut batch = vec![(op, reply)];
    while batch.len() < MAX_BATCH_WRITES && bytes < MAX_BATCH_BYTES {
        match queue.try_recv() {
            Ok(Job::Write { op, reply }) => {
                bytes += op.size();
                batch.push((op, reply));
            }
            Ok(exclusive) => return (batch, Some(exclusive)),
            Err(_) => break,
        }
    }
    (batch, None)
}

/// Applies and commits one batch, then broadcasts its events and answers
/// its callers; a failed transaction fails every write of the batch.
fn commit_batch(
    conn: &mut Connection,
    batch: Vec<(WriteOp, Reply)>,
    events: &broadcast::Sender<Event>,
) {
    let (ops, replies): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
    let results = match apply_batch(conn, &ops) {
        Ok(results) => results,
        Err(err) => {
            tracing::warn!(%err, writes = ops.len(), "sqlite commit failed");
            for reply in replies {
                let _ = reply.send(Err(err.clone()));
            }
            return;
        }
    };
    let answers: Vec<_> = results
        .into_iter()
        .map(|result| {
            result.map(|(row, prev)| {
                // No receivers is not an error: nobody is watching.
                let _ = events.send(log::event_for(&row, prev.as_ref()));
                row.to_kv()
            })
        })
        .collect();
    for (reply, answer) in replies.into_iter().zip(answers) {
        // The caller may have gone away; its write stands.
        let _ = reply.send(answer);
    }
}

/// Each write's own result, or the error that failed the whole transaction.
fn apply_batch(
    conn: &mut Connection,
    ops: &[WriteOp],
) -> StorageResult<Vec<StorageResult<Applied>>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let results = ops
        .iter()
        .map(|op| apply_in_savepoint(&tx, op))
        .collect::<StorageResult<Vec<_>>>()?;
    // On failure the dropped transaction rolls back.
    tx.commit()?;
    Ok(results)
}

/// Applies `op` so that a failure leaves no trace; the outer error means
/// the transaction itself can no longer be used.
fn apply_in_savepoint(conn: &Connection, op: &WriteOp) -> StorageResult<StorageResult<Applied>> {
    conn.prepare_cached("SAVEPOINT write_op")?.execute([])?;
    let result = op.apply(conn);
    if result.is_err() {
        conn.prepare_cached("ROLLBACK TO write_op")?.execute([])?;
    }
    conn.prepare_cached("RELEASE write_op")?.execute([])?;
    Ok(result)
}

impl WriteOp {
    /// What the write adds to a batch's size.
    fn size(&self) -> usize {
        match self {
            WriteOp::Create { key, value } | WriteOp::Update { key, value, .. } => {
                key.len() + value.len()
            }
            WriteOp::Delete { key, .. } => key.len(),
        }
    }

    fn apply(&self, conn: &Connection) -> StorageResult<Applied> {
        match self {
            WriteOp::Create { key, value } => create_row(conn, key, value.clone()),
            WriteOp::Update {
                key,
                value,
                expected,
            } => update_row(conn, key, value.clone(), *expected),
            WriteOp::Delete { key, expected } => delete_row(conn, key, *expected),
        }
    }
}

fn create_row(conn: &Connection, key: &str, value: Bytes) -> StorageResult<Applied> {
    let latest = log::latest_row(conn, key)?;
    if latest.as_ref().is_some_and(|r| !r.deleted) {
        return Err(StorageError::AlreadyExists {
            key: key.to_string(),
        });
    }
    let revision = log::current_revision(conn)? + 1;
    let row = LogRow {
        revision,
        key: key.to_string(),
        value,
        create_revision: revision,
        deleted: false,
    };
    log::append(conn, &row, latest.as_ref().map_or(0, |r| r.revision))?;
    Ok((row, latest))
}

/// The live row of `key`, checked against the optional mod_revision guard.
fn guarded_live_row(
    conn: &Connection,
    key: &str,
    expected: Option<Revision>,
) -> StorageResult<LogRow> {
    let live = log::latest_row(conn, key)?
        .filter(|r| !r.deleted)
        .ok_or_else(|| StorageError::NotFound {
            key: key.to_string(),
        })?;
    match expected {
        Some(rev) if rev != live.revision => Err(StorageError::Conflict {
            key: key.to_string(),
            current: Some(live.to_kv()),
        }),
        _ => Ok(live),
    }
}

fn update_row(
    conn: &Connection,
    key: &str,
    value: Bytes,
    expected: Revision,
) -> StorageResult<Applied> {
    let live = guarded_live_row(conn, key, Some(expected))?;
    let row = LogRow {
        revision: log::current_revision(conn)? + 1,
        key: key.to_string(),
        value,
        create_revision: live.create_revision,
        deleted: false,
    };
    log::append(conn, &row, live.revision)?;
    Ok((row, Some(live)))
}

fn delete_row(conn: &Connection, key: &str, expected: Option<Revision>) -> StorageResult<Applied> {
    let live = guarded_live_row(conn, key, expected)?;
    let row = LogRow {
        revision: log::current_revision(conn)? + 1,
        key: key.to_string(),
        value: live.value.clone(),
        create_revision: live.create_revision,
        deleted: true,
    };
    log::append(conn, &row, live.revision)?;
    Ok((row, Some(live)))
}

#[cfg(test)]
impl Writer {
    /// Queues `op` on the write connection outside any transaction.
    pub fn raw(&self, op: impl FnOnce(&mut Connection) + Send + 'static) {
        let _ = self.jobs.send(Job::Exclusive(Box::new(op)));
    }
}

#[cfg(test)]
mod tests;
