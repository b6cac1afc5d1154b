//! What the server keeps across restarts: session records, idempotency records, and the action
//! apps' tables (apps, session states, the event log and their idempotency records). The
//! services reach it only through [`Store`], a typed handle over a [`Backend`]: the embedded
//! redb file ([`RedbBackend`], `DATA/server.redb`, the default) is one implementation, and a
//! store shared by replicas is another, not a rewrite. Every write is durable (fsynced) before
//! the call that makes it returns, which is before the response that acknowledges it.

mod redb;

pub use self::redb::RedbBackend;
use super::errors::ApiError;
use crate::Error;
use serde::{Serialize, de::DeserializeOwned};
use std::path::Path;
use std::sync::Arc;

/// The tables, by what they hold. Keys are text; values are JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// Session records, by session id.
    Sessions,
    /// `POST /v1/run`'s idempotency records, by `tenant\nkey`.
    RunKeys,
    /// Apps, by `tenant\napp\n`.
    Apps,
    /// An app session's state and counters, by `tenant\napp\nsession\n`.
    AppSessions,
    /// The event log, by the session's key and the event's id (20 digits).
    AppEvents,
    /// App actions' idempotency records, by the session's key and the key.
    AppKeys,
}

impl Table {
    /// Its name in the store (the embedded file's table names, kept across versions).
    pub fn name(self) -> &'static str {
        match self {
            Table::Sessions => "sessions",
            Table::RunKeys => "idempotency",
            Table::Apps => "apps",
            Table::AppSessions => "app_sessions",
            Table::AppEvents => "app_events",
            Table::AppKeys => "app_idempotency",
        }
    }

    /// Every table.
    pub const ALL: [Table; 6] = [
        Table::Sessions,
        Table::RunKeys,
        Table::Apps,
        Table::AppSessions,
        Table::AppEvents,
        Table::AppKeys,
    ];
}

/// One write of an atomic batch ([`Backend::apply`]).
#[derive(Debug, Clone)]
pub enum Write {
    /// Set `key` to `value`.
    Put {
        /// The table.
        table: Table,
        /// The key.
        key: String,
        /// The JSON value.
        value: String,
    },
    /// Remove `key`, if it is there.
    Remove {
        /// The table.
        table: Table,
        /// The key.
        key: String,
    },
    /// Remove every key that starts with `prefix`.
    RemovePrefix {
        /// The table.
        table: Table,
        /// The prefix.
        prefix: String,
    },
}

/// A range of one table, in key order: the keys that start with `prefix`, after `after`
/// (exclusive) when given, at most `limit` of them, stopping once `max_bytes` of values were
/// read (at least one is returned when there is one).
#[derive(Debug, Clone, Copy)]
pub struct Scan<'a> {
    /// The keys' common prefix (`""`: all).
    pub prefix: &'a str,
    /// Start after this key.
    pub after: Option<&'a str>,
    /// At most this many entries.
    pub limit: usize,
    /// Stop once this many bytes of values were read.
    pub max_bytes: usize,
}

impl<'a> Scan<'a> {
    /// Every key under `prefix`.
    pub fn prefix(prefix: &'a str) -> Scan<'a> {
        Scan {
            prefix,
            after: None,
            limit: usize::MAX,
            max_bytes: usize::MAX,
        }
    }
}

/// Where the records live. Each method is one durable, atomic step: a reader never sees half
/// of an [`apply`](Backend::apply).
pub trait Backend: Send + Sync {
    /// The value under `key`.
    fn get(&self, table: Table, key: &str) -> Result<Option<String>, String>;
    /// The entries of `scan`, in key order.
    fn scan(&self, table: Table, scan: Scan<'_>) -> Result<Vec<(String, String)>, String>;
    /// Apply `writes` together, durably, or none of them.
    fn apply(&self, writes: &[Write]) -> Result<(), String>;
    /// Remove each of `keys` whose value, read in the same step, still satisfies `still`; the
    /// number removed (a purge: a record written anew meanwhile stays).
    fn remove_if(
        &self,
        table: Table,
        keys: &[String],
        still: &dyn Fn(&str) -> bool,
    ) -> Result<usize, String>;
    /// Whether the last write succeeded (`/readyz` reports the server not ready otherwise).
    fn writable(&self) -> bool;
    /// Try a durable write that changes nothing, to learn whether writes work again.
    fn probe(&self) -> Result<(), String>;
}

/// The server's durable records: a typed handle over a [`Backend`], cheap to clone.
#[derive(Clone)]
pub struct Store {
    backend: Arc<dyn Backend>,
}

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("server store: {e}")
}

impl Store {
    /// The embedded store at `path` (opened, or created).
    pub fn open(path: &Path) -> Result<Store, String> {
        Ok(Store::new(Arc::new(RedbBackend::open(path)?)))
    }

    /// A store over `backend`.
    pub fn new(backend: Arc<dyn Backend>) -> Store {
        Store { backend }
    }

    /// The backend, for what the typed methods do not cover.
    pub fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// Write `value` under `key`, durably.
    pub fn put<T: Serialize>(&self, table: Table, key: &str, value: &T) -> Result<(), String> {
        let value = serde_json::to_string(value).map_err(err)?;
        self.backend.apply(&[Write::Put {
            table,
            key: key.to_owned(),
            value,
        }])
    }

    /// The record under `key`, if any.
    pub fn get<T: DeserializeOwned>(&self, table: Table, key: &str) -> Result<Option<T>, String> {
        match self.backend.get(table, key)? {
            Some(text) => serde_json::from_str(&text).map(Some).map_err(err),
            None => Ok(None),
        }
    }

    /// Remove the records under `keys`, durably.
    pub fn remove(&self, table: Table, keys: &[String]) -> Result<(), String> {
        if keys.is_empty() {
            return Ok(());
        }
        let writes: Vec<Write> = keys
            .iter()
            .map(|key| Write::Remove {
                table,
                key: key.clone(),
            })
            .collect();
        self.backend.apply(&writes)
    }

    /// Every record of `table` under `prefix`; records that no longer parse are skipped.
    pub fn all<T: DeserializeOwned>(
        &self,
        table: Table,
        prefix: &str,
    ) -> Result<Vec<(String, T)>, String> {
        Ok(self
            .backend
            .scan(table, Scan::prefix(prefix))?
            .into_iter()
            .filter_map(|(k, v)| serde_json::from_str(&v).ok().map(|v| (k, v)))
            .collect())
    }

    /// Whether writes work: the last one succeeded, or, after a failure, a probe now does.
    pub fn writable(&self) -> bool {
        self.backend.writable() || self.backend.probe().is_ok()
    }

    /// Apply `writes` together, durably.
    pub fn apply(&self, writes: &[Write]) -> Result<(), String> {
        self.backend.apply(writes)
    }

    /// The entries of `scan`.
    pub fn scan(&self, table: Table, scan: Scan<'_>) -> Result<Vec<(String, String)>, String> {
        self.backend.scan(table, scan)
    }
}

/// Run `f` (store or file work) on the blocking pool; its error is `internal`.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, ApiError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(detail)) => Err(Error::Internal { detail }.into()),
        Err(e) => Err(Error::Internal {
            detail: e.to_string(),
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::{Backend, RedbBackend, Scan, Table, Write};

    fn put(table: Table, key: &str, value: &str) -> Write {
        Write::Put {
            table,
            key: key.to_owned(),
            value: value.to_owned(),
        }
    }

    /// What every backend must do, the way the services use it.
    fn conformance(b: &dyn Backend) {
        let t = Table::AppEvents;
        b.apply(&[
            put(t, "a\nx\n01", "1"),
            put(t, "a\nx\n02", "22"),
            put(t, "a\nx\n03", "333"),
            put(t, "a\ny\n01", "4"),
            put(Table::Apps, "a\nx\n", "{}"),
        ])
        .unwrap();
        assert_eq!(b.get(t, "a\nx\n02").unwrap().as_deref(), Some("22"));
        assert_eq!(
            b.get(Table::AppSessions, "a\nx\n02").unwrap(),
            None,
            "tables are apart"
        );
        let keys = |scan| -> Vec<String> {
            b.scan(t, scan)
                .unwrap()
                .into_iter()
                .map(|(k, _)| k)
                .collect()
        };
        assert_eq!(
            keys(Scan::prefix("a\nx\n")),
            ["a\nx\n01", "a\nx\n02", "a\nx\n03"]
        );
        let after = Scan {
            after: Some("a\nx\n01"),
            ..Scan::prefix("a\nx\n")
        };
        assert_eq!(keys(after), ["a\nx\n02", "a\nx\n03"]);
        assert_eq!(keys(Scan { limit: 1, ..after }), ["a\nx\n02"]);
        assert_eq!(
            keys(Scan {
                max_bytes: 2,
                ..after
            }),
            ["a\nx\n02"],
            "stops once 2 bytes are read"
        );
        assert_eq!(keys(Scan::prefix("")).len(), 4);
        b.apply(&[
            Write::RemovePrefix {
                table: t,
                prefix: "a\nx\n".into(),
            },
            Write::Remove {
                table: Table::Apps,
                key: "a\nx\n".into(),
            },
        ])
        .unwrap();
        assert_eq!(keys(Scan::prefix("")), ["a\ny\n01"]);
        assert_eq!(b.get(Table::Apps, "a\nx\n").unwrap(), None);
        let gone = b
            .remove_if(t, &["a\ny\n01".into(), "missing".into()], &|v| v == "5")
            .unwrap();
        assert_eq!(gone, 0, "its value changed: it stays");
        let gone = b.remove_if(t, &["a\ny\n01".into()], &|v| v == "4").unwrap();
        assert_eq!(gone, 1);
        assert!(keys(Scan::prefix("")).is_empty());
    }

    #[test]
    fn the_embedded_backend_keeps_the_contract() {
        let dir = std::env::temp_dir().join(format!("palisade-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        conformance(&RedbBackend::open(&dir.join("server.redb")).unwrap());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
