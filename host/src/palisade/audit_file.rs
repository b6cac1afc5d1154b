//! The operator's audit log ([`Builder::audit_log`](crate::Builder::audit_log), `palisade run
//! --audit-log`): every call's audit records appended as JSON lines when the call ends, each
//! HTTP record with the addresses its host resolved to. The outcome and the script name the
//! host only; the addresses are for the operator.

use crate::AuditRecord;
use serde::Serialize;
use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// An append-only JSON-lines file of audit records.
pub(crate) struct AuditFile {
    path: PathBuf,
    file: Mutex<std::fs::File>,
    /// The last write that failed, until [`AuditFile::take_failure`] takes it.
    failure: Mutex<Option<String>>,
}

/// One line: the record, and the addresses its target resolved to.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(flatten)]
    record: &'a AuditRecord,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    addresses: &'a [SocketAddr],
}

impl AuditFile {
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            failure: Mutex::new(None),
        })
    }

    /// Append one call's records in one write, so that the lines of concurrent calls (and
    /// processes sharing the file) do not interleave.
    pub fn append(&self, records: &[AuditRecord], resolved: &HashMap<String, Vec<SocketAddr>>) {
        if records.is_empty() {
            return;
        }
        let mut lines = String::new();
        for record in records {
            let addresses = resolved.get(&record.target).map_or(&[][..], Vec::as_slice);
            let line = Line { record, addresses };
            match serde_json::to_string(&line) {
                Ok(text) => {
                    lines.push_str(&text);
                    lines.push('\n');
                }
                Err(e) => return self.failed(e.to_string()),
            }
        }
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = file
            .write_all(lines.as_bytes())
            .and_then(|()| file.sync_data())
        {
            drop(file);
            self.failed(e.to_string());
        }
    }

    fn failed(&self, message: String) {
        let message = format!(
            "cannot write the audit log {}: {message}",
            self.path.display()
        );
        tracing::error!("{message}");
        *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(message);
    }

    /// The last write that failed since the previous call of this, if any.
    pub fn take_failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}
