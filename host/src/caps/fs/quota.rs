//! Quotas of bytes and files for writable directories (`rw` mounts and the scratch
//! directory), as a call meets them: each directory's [`Account`] (shared by the calls of a
//! process and the session file operations), with its refusals recorded in the call's audit
//! log. [`super::files`] calls them where `wasi:filesystem` adds or frees bytes and entries.
//!
//! A write grows the count by what it adds past the file's end. A write that would pass the
//! quota fails with `insufficient-space` (`ENOSPC` for the script) and writes nothing.

use super::account::{Account, Ask, Limits, Usage};
use super::usage::Place;
use crate::audit::AuditLog;
use bytes::Bytes;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::Resource;
use wasmtime_wasi::p2::bindings::filesystem::types::Descriptor;
use wasmtime_wasi::p2::{DynOutputStream, OutputStream, Pollable, StreamError, StreamResult};

/// One writable directory's quota as a call meets it: its account, and the call's audit log
/// that records each refusal under the target `fs`.
pub(crate) struct Quota {
    account: Account,
    audit: AuditLog,
}

impl Quota {
    /// Reserve `ask`; false (and nothing reserved, and the refusal recorded) when that would
    /// pass a limit.
    pub(super) fn reserve(&self, ask: Ask) -> bool {
        match self.account.reserve(ask) {
            Ok(()) => true,
            Err(refusal) => {
                self.audit.deny(refusal, Instant::now(), 0);
                false
            }
        }
    }

    /// Record that the host's file system under this directory ran out of space. The guest's
    /// libc reports every failed stream write as `EIO`, and wasmtime-wasi's file stream reports
    /// `ENOSPC` only at the `check-write` or `flush` after the `write` (it writes on a blocking
    /// thread); the guest's `fs` finds this record, as it finds a quota refusal, and throws
    /// `ENOSPC`.
    fn disk_full(&self) {
        let reason = format!("{}: the host's file system is full", self.account.guest());
        let refusal = super::refusal(self.account.table(), reason, None);
        self.audit.deny(refusal, Instant::now(), 0);
    }

    pub(super) fn reserve_bytes(&self, bytes: u64) -> bool {
        bytes == 0 || self.reserve(Ask { bytes, files: 0 })
    }

    /// Give back what a removal or a failed operation freed.
    pub(super) fn release(&self, bytes: u64, files: u64) {
        self.account.release(bytes, files);
    }

    /// Refuse a path below the root that is too deep or too long, recording why.
    pub(super) fn refuse_place(&self, place: Option<&Place>) -> bool {
        match place.and_then(|p| self.account.refuse_place(p)) {
            None => false,
            Some(refusal) => {
                self.audit.deny(refusal, Instant::now(), 0);
                true
            }
        }
    }
}

/// A descriptor of a quota'd directory tree: its quota, and where it lies below the root.
#[derive(Clone)]
pub(super) struct Traced {
    pub(super) quota: Arc<Quota>,
    pub(super) place: Place,
}

/// The call's quotas by guest path, and which quota each open descriptor writes to.
pub(crate) struct Quotas {
    pub(super) audit: AuditLog,
    pub(super) by_guest: HashMap<String, Arc<Quota>>,
    pub(super) by_descriptor: HashMap<u32, Traced>,
}

impl Quotas {
    pub fn new(audit: AuditLog) -> Self {
        Self {
            audit,
            by_guest: HashMap::new(),
            by_descriptor: HashMap::new(),
        }
    }

    pub fn add(&mut self, guest: &str, host: &Path, limits: Limits, usage: Arc<Usage>) {
        self.by_guest.insert(
            guest.to_owned(),
            Arc::new(Quota {
                account: Account::new(guest, host, limits, usage),
                audit: self.audit.clone(),
            }),
        );
    }

    pub(super) fn of(&self, fd: &Resource<Descriptor>) -> Option<Arc<Quota>> {
        self.by_descriptor.get(&fd.rep()).map(|t| t.quota.clone())
    }

    pub(super) fn traced(&self, fd: &Resource<Descriptor>) -> Option<Traced> {
        self.by_descriptor.get(&fd.rep()).cloned()
    }

    /// Refuse to make `path` below `fd` when it lies too deep.
    pub(super) fn too_deep(&self, fd: &Resource<Descriptor>, path: &str) -> bool {
        self.traced(fd)
            .is_some_and(|t| t.quota.refuse_place(t.place.join(path).as_ref()))
    }
}

/// An output stream that counts the bytes by which it grows its file against a quota.
pub(super) struct Counted {
    pub(super) inner: DynOutputStream,
    pub(super) quota: Arc<Quota>,
    /// Where the next write goes.
    pub(super) position: u64,
    /// The file's size as far as this stream knows: its size when opened, then its end.
    pub(super) end: u64,
}

pub(super) fn no_space() -> StreamError {
    // ENOSPC: wasmtime-wasi reports it to the guest as `insufficient-space`.
    StreamError::LastOperationFailed(std::io::Error::from_raw_os_error(28).into())
}

impl Counted {
    /// `result`, after recording a full file system's `ENOSPC` for the guest.
    fn seen<T>(&self, result: StreamResult<T>) -> StreamResult<T> {
        if let Err(StreamError::LastOperationFailed(e)) = &result
            && e.downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::raw_os_error)
                == Some(rustix::io::Errno::NOSPC.raw_os_error())
        {
            self.quota.disk_full();
        }
        result
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for Counted {
    async fn ready(&mut self) {
        self.inner.ready().await;
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for Counted {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        let after = self.position.saturating_add(bytes.len() as u64);
        let grows = after.saturating_sub(self.end);
        if !self.quota.reserve_bytes(grows) {
            return Err(no_space());
        }
        match self.inner.write(bytes) {
            Ok(()) => {
                self.position = after;
                self.end = self.end.max(after);
                Ok(())
            }
            Err(e) => {
                self.quota.release(grows, 0);
                self.seen(Err(e))
            }
        }
    }

    fn flush(&mut self) -> StreamResult<()> {
        let flushed = self.inner.flush();
        self.seen(flushed)
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        let permit = self.inner.check_write();
        self.seen(permit)
    }
}
