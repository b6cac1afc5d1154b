//! What the server keeps across restarts, in one redb file (`DATA/server.redb`): session
//! records and idempotency records. Each write is one transaction committed with redb's default
//! durability (fsync before the commit returns), before the response that acknowledges it.

use super::errors::ApiError;
use crate::Error;
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde::{Serialize, de::DeserializeOwned};
use std::path::Path;
use std::sync::Arc;

const SESSIONS: TableDefinition<&str, &str> = TableDefinition::new("sessions");
const IDEMPOTENCY: TableDefinition<&str, &str> = TableDefinition::new("idempotency");

/// The table a record goes to.
#[derive(Debug, Clone, Copy)]
pub enum Table {
    /// Session records, by session id.
    Sessions,
    /// Idempotency records, by tenant and key.
    Idempotency,
}

impl Table {
    /// Its redb table.
    pub fn def(self) -> TableDefinition<'static, &'static str, &'static str> {
        match self {
            Table::Sessions => SESSIONS,
            Table::Idempotency => IDEMPOTENCY,
        }
    }
}

/// The server's durable records.
#[derive(Clone)]
pub struct Store {
    db: Arc<Database>,
}

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("server store: {e}")
}

impl Store {
    /// Open (or create) the store at `path`.
    pub fn open(path: &Path) -> Result<Store, String> {
        let db =
            Database::create(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let txn = db.begin_write().map_err(err)?;
        txn.open_table(SESSIONS).map_err(err)?;
        txn.open_table(IDEMPOTENCY).map_err(err)?;
        txn.commit().map_err(err)?;
        Ok(Store { db: Arc::new(db) })
    }

    /// The database, for areas that keep tables of their own (`apps`).
    pub fn db(&self) -> &Database {
        &self.db
    }

    /// Write `value` under `key`, durably.
    pub fn put<T: Serialize>(&self, table: Table, key: &str, value: &T) -> Result<(), String> {
        let text = serde_json::to_string(value).map_err(err)?;
        let txn = self.db.begin_write().map_err(err)?;
        txn.open_table(table.def())
            .map_err(err)?
            .insert(key, text.as_str())
            .map_err(err)?;
        txn.commit().map_err(err)
    }

    /// The record under `key`, if any.
    pub fn get<T: DeserializeOwned>(&self, table: Table, key: &str) -> Result<Option<T>, String> {
        let txn = self.db.begin_read().map_err(err)?;
        let table = txn.open_table(table.def()).map_err(err)?;
        match table.get(key).map_err(err)? {
            Some(v) => serde_json::from_str(v.value()).map(Some).map_err(err),
            None => Ok(None),
        }
    }

    /// Remove the records under `keys`, durably.
    pub fn remove(&self, table: Table, keys: &[String]) -> Result<(), String> {
        if keys.is_empty() {
            return Ok(());
        }
        let txn = self.db.begin_write().map_err(err)?;
        {
            let mut t = txn.open_table(table.def()).map_err(err)?;
            for key in keys {
                t.remove(key.as_str()).map_err(err)?;
            }
        }
        txn.commit().map_err(err)
    }

    /// Every record of `table`; records that no longer parse are skipped.
    pub fn all<T: DeserializeOwned>(&self, table: Table) -> Result<Vec<(String, T)>, String> {
        let txn = self.db.begin_read().map_err(err)?;
        let t = txn.open_table(table.def()).map_err(err)?;
        let mut out = Vec::new();
        for entry in t.iter().map_err(err)? {
            let (k, v) = entry.map_err(err)?;
            if let Ok(value) = serde_json::from_str(v.value()) {
                out.push((k.value().to_owned(), value));
            }
        }
        Ok(out)
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
