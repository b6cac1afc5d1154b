//! The SQLite backend: one file in WAL mode that many processes share (`palisade run` in
//! parallel, several embedders on one data directory). Writers take the file's write lock at
//! the start of their transaction (`BEGIN IMMEDIATE`), so a read-modify-write never interleaves
//! with another process's; readers never wait for writers.

use super::{Decide, Entry, KvBackend, KvError, KvTransaction, KvWrites, backend};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// How long an operation waits for another process's write transaction before it fails. Each
/// write is one short transaction, so this is only reached when the file is wedged; it also
/// bounds how long a host thread can block on the store.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS data (
        namespace BLOB NOT NULL,
        bucket BLOB NOT NULL,
        key BLOB NOT NULL,
        value BLOB NOT NULL,
        PRIMARY KEY (namespace, bucket, key)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS key_counts (
        namespace BLOB PRIMARY KEY,
        count INTEGER NOT NULL
    ) WITHOUT ROWID;
";

/// The default backend: one SQLite file. Every write is its own transaction, committed with
/// `synchronous = FULL` in WAL mode (the log is synced before the commit returns), so an
/// acknowledged write survives a crash. Any number of processes may open the same file.
pub struct SqliteBackend {
    conn: Mutex<Connection>,
}

impl SqliteBackend {
    /// Open (or create) the store at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, KvError> {
        let path = path.as_ref();
        let conn = connect(path)?;
        conn.execute_batch(SCHEMA)
            .map_err(|e| KvError::Backend(format!("cannot open {}: {e}", path.display())))?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while the lock was held left no transaction open (it rolls back on drop).
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `f` in one write transaction that holds the file's write lock from its start.
    fn write<T>(&self, f: impl FnOnce(&Transaction) -> Result<T, KvError>) -> Result<T, KvError> {
        let mut conn = self.conn();
        let txn = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let out = f(&txn)?;
        txn.commit().map_err(backend)?;
        Ok(out)
    }

    /// Copy `entries` (namespace, bucket, key, value) in, in one transaction, replacing keys
    /// that exist, and recount every namespace.
    pub fn import(&self, entries: Vec<Entry>) -> Result<(), KvError> {
        self.write(|txn| {
            {
                let mut put = txn
                    .prepare("INSERT OR REPLACE INTO data VALUES (?1, ?2, ?3, ?4)")
                    .map_err(backend)?;
                for (namespace, bucket, key, value) in &entries {
                    put.execute(params![
                        namespace.as_bytes(),
                        bucket.as_bytes(),
                        key.as_bytes(),
                        value
                    ])
                    .map_err(backend)?;
                }
            }
            txn.execute_batch(
                "DELETE FROM key_counts;
                 INSERT INTO key_counts SELECT namespace, count(*) FROM data GROUP BY namespace;",
            )
            .map_err(backend)
        })
    }
}

/// A connection to the SQLite file at `path` (created, with its folder, if missing) in WAL
/// mode with `synchronous = FULL`, waiting up to [`BUSY_TIMEOUT`] for other writers.
fn connect(path: &Path) -> Result<Connection, KvError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(backend)?;
    }
    // Processes that start together race to create the file and switch it to WAL; SQLite
    // answers the losers "database is locked" at once for the journal-mode switch, without its
    // busy handler. Such an answer is retried for up to the busy timeout; any other error, or
    // a lock that outlasts it, is the caller's.
    let until = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match connect_once(path) {
            Err(SqliteOpen::Busy(e)) if std::time::Instant::now() < until => {
                tracing::debug!("{}: {e}; retrying", path.display());
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(SqliteOpen::Busy(e) | SqliteOpen::Other(e)) => {
                return Err(KvError::Backend(format!(
                    "cannot open {}: {e}",
                    path.display()
                )));
            }
            Err(SqliteOpen::NoWal(mode)) => {
                return Err(KvError::Backend(format!(
                    "cannot open {}: the file system does not support SQLite's WAL mode (got {mode})",
                    path.display()
                )));
            }
            Ok(conn) => return Ok(conn),
        }
    }
}

/// Why one attempt to open a SQLite file failed.
enum SqliteOpen {
    /// Another connection held a lock (`SQLITE_BUSY`, `SQLITE_LOCKED`): worth another try.
    Busy(rusqlite::Error),
    Other(rusqlite::Error),
    /// The file system kept another journal mode.
    NoWal(String),
}

impl From<rusqlite::Error> for SqliteOpen {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                SqliteOpen::Busy(e)
            }
            _ => SqliteOpen::Other(e),
        }
    }
}

fn connect_once(path: &Path) -> Result<Connection, SqliteOpen> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let mode: String =
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(SqliteOpen::NoWal(mode));
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(conn)
}

fn read(
    conn: &Connection,
    namespace: &str,
    bucket: &str,
    key: &str,
) -> Result<Option<Vec<u8>>, KvError> {
    conn.prepare_cached("SELECT value FROM data WHERE namespace = ?1 AND bucket = ?2 AND key = ?3")
        .map_err(backend)?
        .query_row(
            params![namespace.as_bytes(), bucket.as_bytes(), key.as_bytes()],
            |row| row.get(0),
        )
        .optional()
        .map_err(backend)
}

/// Keys `namespace` holds.
fn held_keys(conn: &Connection, namespace: &str) -> Result<u64, KvError> {
    let count: Option<i64> = conn
        .prepare_cached("SELECT count FROM key_counts WHERE namespace = ?1")
        .map_err(backend)?
        .query_row([namespace.as_bytes()], |row| row.get(0))
        .optional()
        .map_err(backend)?;
    Ok(count.map_or(0, |c| u64::try_from(c).unwrap_or(0)))
}

/// Count one more key in `namespace`, or refuse it at `max_keys`.
fn count_new_key(conn: &Connection, namespace: &str, max_keys: u64) -> Result<(), KvError> {
    if held_keys(conn, namespace)? >= max_keys {
        return Err(KvError::TooManyKeys { limit: max_keys });
    }
    conn.execute(
        "INSERT INTO key_counts VALUES (?1, 1)
         ON CONFLICT (namespace) DO UPDATE SET count = count + 1",
        [namespace.as_bytes()],
    )
    .map_err(backend)?;
    Ok(())
}

/// The writes of one SQLite transaction: [`KvBackend::update`] and [`KvBackend::delete`] run
/// each in its own, [`KvBackend::apply`] a whole batch in one.
struct InTransaction<'a>(&'a Connection);

impl KvTransaction for InTransaction<'_> {
    fn update(
        &mut self,
        namespace: &str,
        bucket: &str,
        key: &str,
        max_keys: u64,
        decide: &mut Decide<'_>,
    ) -> Result<(), KvError> {
        let txn = self.0;
        let current = read(txn, namespace, bucket, key)?;
        let next = decide(current.as_deref())?;
        if let Some(next) = next {
            if current.is_none() {
                count_new_key(txn, namespace, max_keys)?;
            }
            txn.execute(
                "INSERT OR REPLACE INTO data VALUES (?1, ?2, ?3, ?4)",
                params![
                    namespace.as_bytes(),
                    bucket.as_bytes(),
                    key.as_bytes(),
                    next
                ],
            )
            .map_err(backend)?;
        }
        Ok(())
    }

    fn delete(&mut self, namespace: &str, bucket: &str, key: &str) -> Result<(), KvError> {
        let txn = self.0;
        let removed = txn
            .execute(
                "DELETE FROM data WHERE namespace = ?1 AND bucket = ?2 AND key = ?3",
                params![namespace.as_bytes(), bucket.as_bytes(), key.as_bytes()],
            )
            .map_err(backend)?;
        if removed > 0 {
            txn.execute(
                "UPDATE key_counts SET count = max(count - 1, 0) WHERE namespace = ?1",
                [namespace.as_bytes()],
            )
            .map_err(backend)?;
        }
        Ok(())
    }
}

impl KvBackend for SqliteBackend {
    fn update(
        &self,
        namespace: &str,
        bucket: &str,
        key: &str,
        max_keys: u64,
        decide: &mut Decide<'_>,
    ) -> Result<(), KvError> {
        self.write(|txn| InTransaction(txn).update(namespace, bucket, key, max_keys, decide))
    }

    fn apply(&self, writes: &KvWrites) -> Result<(), KvError> {
        self.write(|txn| writes.apply_in(&mut InTransaction(txn)))
    }

    fn key_count(&self, namespace: &str) -> Result<u64, KvError> {
        held_keys(&self.conn(), namespace)
    }

    fn get(&self, namespace: &str, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        read(&self.conn(), namespace, bucket, key)
    }

    fn delete(&self, namespace: &str, bucket: &str, key: &str) -> Result<(), KvError> {
        self.write(|txn| InTransaction(txn).delete(namespace, bucket, key))
    }

    fn list(
        &self,
        namespace: &str,
        bucket: &str,
        offset: u64,
        limit: usize,
    ) -> Result<Vec<String>, KvError> {
        let conn = self.conn();
        let mut query = conn
            .prepare_cached(
                "SELECT key FROM data WHERE namespace = ?1 AND bucket = ?2
                 ORDER BY key LIMIT ?3 OFFSET ?4",
            )
            .map_err(backend)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        let rows = query
            .query_map(
                params![namespace.as_bytes(), bucket.as_bytes(), limit, offset],
                |row| row.get::<_, Vec<u8>>(0),
            )
            .map_err(backend)?;
        rows.map(|key| {
            // Keys go in as `&str`, so they come out as UTF-8.
            String::from_utf8(key.map_err(backend)?).map_err(backend)
        })
        .collect()
    }
}

/// Token buckets that processes sharing a data directory share (`[http] rate`): one row per
/// policy in a SQLite file beside the key-value store (`rate.sqlite3`), taken from in one
/// write transaction, so that the rate holds for every `palisade run` and embedder on that
/// directory together. Refills follow the wall clock, which all of them read.
pub(crate) struct SharedRates {
    conn: Mutex<Connection>,
}

impl SharedRates {
    /// Open (or create) the buckets at `path`.
    pub fn open(path: &Path) -> Result<Self, KvError> {
        let conn = connect(path)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS http_rate (
                policy TEXT PRIMARY KEY,
                tokens REAL NOT NULL,
                updated_ms INTEGER NOT NULL
            ) WITHOUT ROWID;",
        )
        .map_err(|e| KvError::Backend(format!("cannot open {}: {e}", path.display())))?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }
}

/// One token from `policy`'s bucket, in one write transaction.
impl super::SharedRate for SharedRates {
    fn take(&self, policy: &str, count: u32, per: Duration) -> Result<bool, KvError> {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as i64;
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let txn = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        let full = f64::from(count);
        let row: Option<(f64, i64)> = txn
            .query_row(
                "SELECT tokens, updated_ms FROM http_rate WHERE policy = ?1",
                params![policy],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(backend)?;
        let tokens = match row {
            None => full,
            Some((tokens, updated_ms)) => {
                // A clock that went back refills nothing.
                let elapsed = (now_ms - updated_ms).max(0) as f64;
                (tokens + elapsed * full / per.as_millis().max(1) as f64).min(full)
            }
        };
        let allowed = tokens >= 1.0;
        let left = if allowed { tokens - 1.0 } else { tokens };
        txn.execute(
            "INSERT OR REPLACE INTO http_rate VALUES (?1, ?2, ?3)",
            params![policy, left, now_ms],
        )
        .map_err(backend)?;
        txn.commit().map_err(backend)?;
        Ok(allowed)
    }
}
