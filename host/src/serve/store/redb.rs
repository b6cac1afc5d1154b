//! The embedded backend: one redb file (`DATA/server.redb`), one redb table per [`Table`].
//! Every write transaction is committed with redb's default durability (fsync before the
//! commit returns). One server per data folder: redb locks the file.
//!
//! After a failed write (the disk full, say), redb refuses every later operation
//! (`PreviousIo`) until the file is opened again. The backend then opens it again (redb
//! repairs it to its last commit) before the next operation, so the server recovers as soon
//! as the disk has room, without a restart; until a write succeeds it reports itself unwritable
//! ([`Backend::writable`]), which `/readyz` shows.

use super::{Backend, Scan, StoreError, Table, Write};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{RwLock, RwLockReadGuard};

fn def(table: Table) -> TableDefinition<'static, &'static str, &'static str> {
    TableDefinition::new(table.name())
}

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("server store: {e}")
}

/// The records in one redb file.
pub struct RedbBackend {
    path: PathBuf,
    db: RwLock<Database>,
    /// Set by a failed operation: open the file again before the next one.
    reopen: AtomicBool,
    /// Whether the last write succeeded.
    writable: AtomicBool,
}

fn open_db(path: &Path) -> Result<Database, String> {
    let db = Database::create(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let txn = db.begin_write().map_err(err)?;
    for table in Table::ALL {
        txn.open_table(def(table)).map_err(err)?;
    }
    txn.commit().map_err(err)?;
    Ok(db)
}

impl RedbBackend {
    /// Open (or create) the file at `path`, with every table.
    pub fn open(path: &Path) -> Result<RedbBackend, String> {
        Ok(RedbBackend {
            path: path.to_path_buf(),
            db: RwLock::new(open_db(path)?),
            reopen: AtomicBool::new(false),
            writable: AtomicBool::new(true),
        })
    }

    /// The database, opened again first if an earlier operation failed.
    fn db(&self) -> Result<RwLockReadGuard<'_, Database>, String> {
        if self.reopen.load(Ordering::Acquire) {
            let mut db = self.db.write().unwrap_or_else(|e| e.into_inner());
            if self.reopen.load(Ordering::Acquire) {
                // The old handle must be closed before the file can be opened again.
                let placeholder = redb::Builder::new()
                    .create_with_backend(redb::backends::InMemoryBackend::new())
                    .map_err(err)?;
                drop(std::mem::replace(&mut *db, placeholder));
                *db = open_db(&self.path)?;
                self.reopen.store(false, Ordering::Release);
                tracing::warn!(
                    "server store: {} opened again after a failed write",
                    self.path.display()
                );
            }
        }
        Ok(self.db.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Note how an operation ended: a failure opens the file again before the next one.
    fn after<T>(&self, result: Result<T, String>) -> Result<T, String> {
        if result.is_err() {
            self.reopen.store(true, Ordering::Release);
        }
        result
    }

    fn wrote<T>(&self, result: Result<T, String>) -> Result<T, String> {
        self.writable.store(result.is_ok(), Ordering::Release);
        self.after(result)
    }
}

impl Backend for RedbBackend {
    fn get(&self, table: Table, key: &str) -> Result<Option<String>, StoreError> {
        let result = (|| {
            let txn = self.db()?.begin_read().map_err(err)?;
            let t = txn.open_table(def(table)).map_err(err)?;
            Ok(t.get(key).map_err(err)?.map(|v| v.value().to_owned()))
        })();
        Ok(self.after(result)?)
    }

    fn scan(&self, table: Table, scan: Scan<'_>) -> Result<Vec<(String, String)>, StoreError> {
        let result = self.scan_once(table, scan);
        Ok(self.after(result)?)
    }

    fn apply(&self, writes: &[Write]) -> Result<(), StoreError> {
        let result = self.apply_once(writes);
        Ok(self.wrote(result)?)
    }

    fn remove_if(
        &self,
        table: Table,
        keys: &[String],
        still: &dyn Fn(&str) -> bool,
    ) -> Result<usize, StoreError> {
        let result = self.remove_if_once(table, keys, still);
        Ok(self.wrote(result)?)
    }

    fn writable(&self) -> bool {
        self.writable.load(Ordering::Acquire)
    }

    fn probe(&self) -> Result<(), StoreError> {
        // A record written and removed in one transaction: pages are allocated and synced, and
        // nothing is left.
        let key = "\u{0}probe".to_owned();
        self.apply(&[
            Write::Put {
                table: Table::Sessions,
                key: key.clone(),
                value: "x".repeat(4096),
            },
            Write::Remove {
                table: Table::Sessions,
                key,
            },
        ])
    }
}

impl RedbBackend {
    fn scan_once(&self, table: Table, scan: Scan<'_>) -> Result<Vec<(String, String)>, String> {
        let txn = self.db()?.begin_read().map_err(err)?;
        let t = txn.open_table(def(table)).map_err(err)?;
        let start = match scan.after {
            Some(after) if after >= scan.prefix => Bound::Excluded(after),
            _ => Bound::Included(scan.prefix),
        };
        let mut out = Vec::new();
        let mut bytes = 0;
        for entry in t.range::<&str>((start, Bound::Unbounded)).map_err(err)? {
            if out.len() >= scan.limit || bytes >= scan.max_bytes {
                break;
            }
            let (k, v) = entry.map_err(err)?;
            if !k.value().starts_with(scan.prefix) {
                break;
            }
            bytes += v.value().len();
            out.push((k.value().to_owned(), v.value().to_owned()));
        }
        Ok(out)
    }

    fn apply_once(&self, writes: &[Write]) -> Result<(), String> {
        let txn = self.db()?.begin_write().map_err(err)?;
        for write in writes {
            match write {
                Write::Put { table, key, value } => {
                    let mut t = txn.open_table(def(*table)).map_err(err)?;
                    t.insert(key.as_str(), value.as_str()).map_err(err)?;
                }
                Write::Remove { table, key } => {
                    let mut t = txn.open_table(def(*table)).map_err(err)?;
                    t.remove(key.as_str()).map_err(err)?;
                }
                Write::RemovePrefix { table, prefix } => {
                    let mut t = txn.open_table(def(*table)).map_err(err)?;
                    // Every key that starts with `prefix` sorts below `prefix` + the last
                    // char, and none that does not sorts between them.
                    let end = format!("{prefix}{}", char::MAX);
                    t.retain_in(prefix.as_str()..end.as_str(), |_, _| false)
                        .map_err(err)?;
                }
                // One server uses this file: its own turns serialize it, and a fence holds.
                Write::Fence { .. } => {}
            }
        }
        txn.commit().map_err(err)
    }

    fn remove_if_once(
        &self,
        table: Table,
        keys: &[String],
        still: &dyn Fn(&str) -> bool,
    ) -> Result<usize, String> {
        let txn = self.db()?.begin_write().map_err(err)?;
        let mut removed = 0;
        {
            let mut t = txn.open_table(def(table)).map_err(err)?;
            for key in keys {
                let matches = t
                    .get(key.as_str())
                    .map_err(err)?
                    .is_some_and(|v| still(v.value()));
                if matches {
                    t.remove(key.as_str()).map_err(err)?;
                    removed += 1;
                }
            }
        }
        txn.commit().map_err(err)?;
        Ok(removed)
    }
}
