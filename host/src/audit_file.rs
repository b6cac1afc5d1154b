//! The operator's audit log ([`Builder::audit_log`](crate::Builder::audit_log), `palisade run
//! --audit-log`, `palisade serve --audit-log`): every call's audit records appended as JSON lines
//! when the call ends, each HTTP record with the addresses its host resolved to, and the call's
//! tags ([`RunOptions::audit_tags`](crate::RunOptions::audit_tags): a tenant, a session). The
//! outcome and the script name the host only; the addresses are for the operator. Every append is
//! one write, synced before it returns (to a regular file): the one writer of this format (the
//! server's own lines, such as an app action's, go through [`AuditFile::append_values`]).

use crate::AuditRecord;
use serde::Serialize;
use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Whether the audit log at `path` can be opened as
/// [`Builder::audit_log`](crate::Builder::audit_log) opens it, created if absent: the error
/// [`Builder::build`](crate::Builder::build) would report, for a caller that reports it as the
/// user's mistake (`palisade run --audit-log`).
pub fn check_audit_log(path: &Path) -> std::io::Result<()> {
    AuditFile::open(path).map(drop)
}

/// An append-only JSON-lines file of audit records.
pub(crate) struct AuditFile {
    path: PathBuf,
    file: Mutex<std::fs::File>,
    /// Whether it is a regular file, which each write is synced to; a pipe or a device has
    /// nothing to sync.
    regular: bool,
    /// The last write that failed, until [`AuditFile::take_failure`] takes it.
    failure: Mutex<Option<String>>,
}

/// One line: the record, the addresses its target resolved to, and the call's tags.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(flatten)]
    record: &'a AuditRecord,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    addresses: &'a [SocketAddr],
    #[serde(flatten)]
    tags: &'a Tags,
}

/// Fields added to every line of one call (`tenant`, `session`, …).
pub type Tags = serde_json::Map<String, serde_json::Value>;

fn push_line<T: Serialize>(lines: &mut String, value: &T) -> serde_json::Result<()> {
    lines.push_str(&serde_json::to_string(value)?);
    lines.push('\n');
    Ok(())
}

impl AuditFile {
    /// The audit log at `path`, created if absent: a file, or a pipe or device an operator
    /// points it at (`/dev/stderr`). Opened without blocking, so that a FIFO with no reader
    /// (which would wait for one) is an error at once rather than a start that never ends; then
    /// its writes block as a file's do. A directory is refused.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            // Nor does a terminal become the process's controlling one.
            .custom_flags((rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32)
            .open(path)?;
        let regular = file.metadata()?.is_file();
        rustix::fs::fcntl_setfl(&file, rustix::fs::OFlags::APPEND)?;
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            regular,
            failure: Mutex::new(None),
        })
    }

    /// Append one call's records in one write, so that the lines of concurrent calls (and
    /// processes sharing the file) do not interleave.
    pub fn append(
        &self,
        records: &[AuditRecord],
        resolved: &HashMap<String, Vec<SocketAddr>>,
        tags: &Tags,
    ) {
        if records.is_empty() {
            return;
        }
        let mut lines = String::new();
        for record in records {
            let addresses = resolved.get(&record.target).map_or(&[][..], Vec::as_slice);
            let line = Line {
                record,
                addresses,
                tags,
            };
            if let Err(e) = push_line(&mut lines, &line) {
                return self.failed(e.to_string());
            }
        }
        self.write(&lines);
    }

    /// Append lines the host made itself (an app action's record), in one synced write.
    #[cfg(feature = "serve")]
    pub fn append_values<T: Serialize>(&self, values: &[T]) {
        let mut lines = String::new();
        for value in values {
            if let Err(e) = push_line(&mut lines, value) {
                return self.failed(e.to_string());
            }
        }
        if !lines.is_empty() {
            self.write(&lines);
        }
    }

    fn write(&self, lines: &str) {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = file.write_all(lines.as_bytes()).and_then(|()| {
            if self.regular {
                file.sync_data()
            } else {
                Ok(())
            }
        }) {
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
