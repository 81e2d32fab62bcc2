//! SQL over the append-only revision log that backs [`super::SqliteStorage`].
//!
//! Table `log` holds one row per write (kine's layout): `revision` is the
//! global revision, the newest row of a key is its current state, a row with
//! `deleted = 1` is a tombstone that carries the key's last value. Keys are
//! stored as BLOBs so that comparisons are bytewise (etcd order). Table `meta`
//! keeps the compaction point. Every function here is synchronous and runs on
//! a blocking thread.

use bytes::Bytes;
use rusqlite::{params, Connection, OptionalExtension, Row};

use crate::storage::{
    prefix_end, Event, EventKind, KeyValue, Revision, StorageError, StorageResult,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS log (
    revision INTEGER PRIMARY KEY AUTOINCREMENT,
    key BLOB NOT NULL,
    value BLOB NOT NULL,
    create_revision INTEGER NOT NULL,
    prev_revision INTEGER NOT NULL,
    deleted INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS log_key_revision ON log (key, revision);
CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
";

const COMPACTED: &str = "compacted_revision";

/// One row of the log.
#[derive(Clone, Debug)]
pub(super) struct LogRow {
    pub revision: Revision,
    pub key: String,
    pub value: Bytes,
    pub create_revision: Revision,
    pub deleted: bool,
}

impl LogRow {
    /// The row as a key-value whose mod_revision is the row's revision.
    pub fn to_kv(&self) -> KeyValue {
        KeyValue {
            key: self.key.clone(),
            value: self.value.clone(),
            create_revision: self.create_revision,
            mod_revision: self.revision,
            served: Default::default(),
        }
    }
}

/// The key range `[lower, upper)` covering a prefix (upper `None` = unbounded).
#[derive(Clone, Debug)]
pub(super) struct KeyRange {
    pub lower: Vec<u8>,
    pub upper: Option<Vec<u8>>,
}

impl KeyRange {
    /// Every key starting with `prefix`.
    pub fn prefix(prefix: &str) -> Self {
        KeyRange {
            lower: prefix.as_bytes().to_vec(),
            upper: prefix_end(prefix.as_bytes()),
        }
    }

    /// Keys starting with `prefix` and strictly after `start_after`.
    pub fn prefix_after(prefix: &str, start_after: Option<&str>) -> Self {
        let mut range = KeyRange::prefix(prefix);
        if let Some(after) = start_after {
            // The immediate bytewise successor of `after` is `after` + NUL.
            let mut successor = after.as_bytes().to_vec();
            successor.push(0);
            if successor > range.lower {
                range.lower = successor;
            }
        }
        range
    }

    /// SQL condition on column `col`; binds `?1` (lower) and `?2` (upper).
    fn condition(&self, col: &str) -> String {
        match self.upper {
            Some(_) => format!("{col} >= ?1 AND {col} < ?2"),
            None => format!("{col} >= ?1 AND ?2 IS NULL"),
        }
    }
}

/// Opens the writer's schema and durability settings.
pub(super) fn init_writer(conn: &Connection) -> StorageResult<()> {
    let mode: String =
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StorageError::Internal(format!(
            "sqlite refused WAL journal mode (got {mode})"
        )));
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.execute_batch(SCHEMA)?;
    Ok(())
}

/// The revision of the last committed write (0 if none). Survives the
/// removal of rows by compaction because AUTOINCREMENT never reuses ids.
pub(super) fn current_revision(conn: &Connection) -> StorageResult<Revision> {
    let rev: Option<Revision> = conn
        .prepare_cached("SELECT seq FROM sqlite_sequence WHERE name = 'log'")?
        .query_row([], |row| row.get(0))
        .optional()?;
    Ok(rev.unwrap_or(0))
}

/// The persisted compaction point (0 if never compacted).
pub(super) fn compacted_revision(conn: &Connection) -> StorageResult<Revision> {
    let rev: Option<Revision> = conn
        .prepare_cached("SELECT value FROM meta WHERE name = ?1")?
        .query_row([COMPACTED], |row| row.get(0))
        .optional()?;
    Ok(rev.unwrap_or(0))
}

/// Persists a new compaction point.
pub(super) fn set_compacted_revision(conn: &Connection, rev: Revision) -> StorageResult<()> {
    conn.prepare_cached(
        "INSERT INTO meta (name, value) VALUES (?1, ?2)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![COMPACTED, rev])?;
    Ok(())
}

/// The newest row of `key` (live or tombstone).
pub(super) fn latest_row(conn: &Connection, key: &str) -> StorageResult<Option<LogRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT revision, key, value, create_revision, deleted FROM log
         WHERE key = ?1 ORDER BY revision DESC LIMIT 1",
    )?;
    let row = stmt.query_row([key.as_bytes()], raw_row).optional()?;
    row.map(RawRow::into_row).transpose()
}

/// Appends a row at exactly `revision` (the caller holds the write lock).
pub(super) fn append(
    conn: &Connection,
    row: &LogRow,
    prev_revision: Revision,
) -> StorageResult<()> {
    conn.prepare_cached(
        "INSERT INTO log (revision, key, value, create_revision, prev_revision, deleted)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        row.revision,
        row.key.as_bytes(),
        row.value.as_ref(),
        row.create_revision,
        prev_revision,
        row.deleted
    ])?;
    Ok(())
}

/// Live keys in `range` as of revision `at`, sorted by key, at most `limit`
/// (negative = unlimited).
pub(super) fn range_at(
    conn: &Connection,
    range: &KeyRange,
    at: Revision,
    limit: i64,
) -> StorageResult<Vec<KeyValue>> {
    let sql = format!(
        "SELECT l.revision, l.key, l.value, l.create_revision, l.deleted FROM log AS l
         WHERE {} AND l.revision <= ?3 AND l.deleted = 0
           AND l.revision = (SELECT MAX(m.revision) FROM log AS m
                             WHERE m.key = l.key AND m.revision <= ?3)
         ORDER BY l.key LIMIT ?4",
        range.condition("l.key")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![range.lower, range.upper, at, limit], raw_row)?;
    let mut kvs = Vec::new();
    for raw in rows {
        kvs.push(raw?.into_row()?.to_kv());
    }
    Ok(kvs)
}

/// Number of live keys in `range` at the latest revision.
pub(super) fn count_live(conn: &Connection, range: &KeyRange) -> StorageResult<i64> {
    let sql = format!(
        "SELECT COUNT(*) FROM log AS l
         WHERE {} AND l.deleted = 0
           AND l.revision = (SELECT MAX(m.revision) FROM log AS m WHERE m.key = l.key)",
        range.condition("l.key")
    );
    let count = conn
        .prepare_cached(&sql)?
        .query_row(params![range.lower, range.upper], |row| row.get(0))?;
    Ok(count)
}

/// Up to `limit` events in `range` with revision > `after`, oldest first.
pub(super) fn events_after(
    conn: &Connection,
    range: &KeyRange,
    after: Revision,
    limit: i64,
) -> StorageResult<Vec<Event>> {
    let sql = format!(
        "SELECT l.revision, l.key, l.value, l.create_revision, l.deleted,
                p.revision, p.key, p.value, p.create_revision, p.deleted
         FROM log AS l LEFT JOIN log AS p ON p.revision = l.prev_revision
         WHERE {} AND l.revision > ?3
         ORDER BY l.revision LIMIT ?4",
        range.condition("l.key")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![range.lower, range.upper, after, limit], |row| {
        let prev = match row.get::<_, Option<Revision>>(5)? {
            Some(_) => Some(raw_row_at(row, 5)?),
            None => None,
        };
        Ok((raw_row_at(row, 0)?, prev))
    })?;
    let mut events = Vec::new();
    for pair in rows {
        let (raw, prev) = pair?;
        let prev = prev.map(RawRow::into_row).transpose()?;
        events.push(event_for(&raw.into_row()?, prev.as_ref()));
    }
    Ok(events)
}

/// The watch event a freshly written `row` represents, given the key's
/// previous newest row.
pub(super) fn event_for(row: &LogRow, prev: Option<&LogRow>) -> Event {
    Event {
        kind: if row.deleted {
            EventKind::Delete
        } else {
            EventKind::Put
        },
        kv: row.to_kv(),
        prev: prev.filter(|p| !p.deleted).map(LogRow::to_kv),
    }
}

/// The smallest revision still in the log (None if the log is empty).
pub(super) fn oldest_revision(conn: &Connection) -> StorageResult<Option<Revision>> {
    let rev = conn
        .prepare_cached("SELECT MIN(revision) FROM log")?
        .query_row([], |row| row.get(0))?;
    Ok(rev)
}

/// Removes, among rows with revision in `(from, to]`, those not needed to
/// answer reads at revisions >= `compact_at`: tombstones, and rows superseded
/// by a newer row of the same key at or below `compact_at`.
pub(super) fn delete_history(
    conn: &Connection,
    from: Revision,
    to: Revision,
    compact_at: Revision,
) -> StorageResult<usize> {
    let removed = conn
        .prepare_cached(
            "DELETE FROM log WHERE revision > ?1 AND revision <= ?2 AND (
                 deleted = 1 OR revision < (SELECT MAX(m.revision) FROM log AS m
                                            WHERE m.key = log.key AND m.revision <= ?3))",
        )?
        .execute(params![from, to, compact_at])?;
    Ok(removed)
}

/// A row as read from SQLite, before the key is checked to be UTF-8.
struct RawRow {
    revision: Revision,
    key: Vec<u8>,
    value: Vec<u8>,
    create_revision: Revision,
    deleted: bool,
}

impl RawRow {
    fn into_row(self) -> StorageResult<LogRow> {
        let key = String::from_utf8(self.key).map_err(|_| {
            StorageError::Internal(format!("revision {} has a non UTF-8 key", self.revision))
        })?;
        Ok(LogRow {
            revision: self.revision,
            key,
            value: Bytes::from(self.value),
            create_revision: self.create_revision,
            deleted: self.deleted,
        })
    }
}

fn raw_row(row: &Row<'_>) -> rusqlite::Result<RawRow> {
    raw_row_at(row, 0)
}

/// Reads columns `at..at+5` (revision, key, value, create_revision, deleted).
fn raw_row_at(row: &Row<'_>, at: usize) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        revision: row.get(at)?,
        key: row.get(at + 1)?,
        value: row.get(at + 2)?,
        create_revision: row.get(at + 3)?,
        deleted: row.get(at + 4)?,
    })
}
