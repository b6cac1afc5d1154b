//! The embedded backend: one redb file (`DATA/server.redb`), one redb table per [`Table`].
//! Every write transaction is committed with redb's default durability (fsync before the
//! commit returns). One server per data folder: redb locks the file.

use super::{Backend, Scan, Table, Write};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use std::ops::Bound;
use std::path::Path;

fn def(table: Table) -> TableDefinition<'static, &'static str, &'static str> {
    TableDefinition::new(table.name())
}

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("server store: {e}")
}

/// The records in one redb file.
pub struct RedbBackend {
    db: Database,
}

impl RedbBackend {
    /// Open (or create) the file at `path`, with every table.
    pub fn open(path: &Path) -> Result<RedbBackend, String> {
        let db =
            Database::create(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let txn = db.begin_write().map_err(err)?;
        for table in Table::ALL {
            txn.open_table(def(table)).map_err(err)?;
        }
        txn.commit().map_err(err)?;
        Ok(RedbBackend { db })
    }
}

impl Backend for RedbBackend {
    fn get(&self, table: Table, key: &str) -> Result<Option<String>, String> {
        let txn = self.db.begin_read().map_err(err)?;
        let t = txn.open_table(def(table)).map_err(err)?;
        Ok(t.get(key).map_err(err)?.map(|v| v.value().to_owned()))
    }

    fn scan(&self, table: Table, scan: Scan<'_>) -> Result<Vec<(String, String)>, String> {
        let txn = self.db.begin_read().map_err(err)?;
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

    fn apply(&self, writes: &[Write]) -> Result<(), String> {
        let txn = self.db.begin_write().map_err(err)?;
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
            }
        }
        txn.commit().map_err(err)
    }

    fn remove_if(
        &self,
        table: Table,
        keys: &[String],
        still: &dyn Fn(&str) -> bool,
    ) -> Result<usize, String> {
        let txn = self.db.begin_write().map_err(err)?;
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
