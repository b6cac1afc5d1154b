//! Quotas of bytes and files for writable directories (`rw` mounts and the scratch
//! directory): what each holds, shared by the calls of a process, and what a call may add.
//! [`super::files`] calls them where `wasi:filesystem` adds or frees bytes and entries.
//!
//! A `rw` mount's usage is measured once per process (a walk with `*at` calls, see
//! [`super::usage`]) and then kept by every call that writes there; a scratch directory's
//! starts at its seed. A write grows the count by what it adds past the file's end. A call
//! measures again before it refuses, once. A write that would pass the quota fails with
//! `insufficient-space` (`ENOSPC` for the script) and writes nothing.

use super::usage::{self, Place};
use crate::Fix;
use crate::audit::AuditLog;
use crate::caps::gate::Refusal;
use crate::policy::ByteSize;
use bytes::Bytes;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use wasmtime::component::Resource;
use wasmtime_wasi::p2::bindings::filesystem::types::Descriptor;
use wasmtime_wasi::p2::{DynOutputStream, OutputStream, Pollable, StreamError, StreamResult};

/// What a writable directory holds: bytes in regular files and entries of every kind.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counters {
    bytes: u64,
    files: u64,
}

/// The usage of one directory under one file limit, shared by every call (and policy) of this
/// process that writes there: measured by a walk once, then kept up to date by each write,
/// creation and removal, so that a call's first write costs no walk.
#[derive(Default)]
pub(crate) struct Usage {
    counters: std::sync::Mutex<Option<Counters>>,
}

impl Usage {
    /// The usage of a directory that starts out holding `bytes` and `files` (a seeded scratch
    /// directory, whose copy counted them).
    pub fn known(bytes: u64, files: u64) -> Arc<Usage> {
        Arc::new(Usage {
            counters: std::sync::Mutex::new(Some(Counters { bytes, files })),
        })
    }

    /// The process's usage of the `rw` mount at `host` under a limit of `max_files`.
    pub fn of_mount(host: &Path, max_files: u64) -> Arc<Usage> {
        // Kept for the life of the process, between calls: one entry per `rw` mount and file
        // limit that the operator's policies name.
        type Registry = HashMap<(PathBuf, u64), Arc<Usage>>;
        static MOUNTS: std::sync::LazyLock<std::sync::Mutex<Registry>> =
            std::sync::LazyLock::new(Default::default);
        let mut mounts = MOUNTS.lock().unwrap_or_else(|e| e.into_inner());
        mounts
            .entry((host.to_path_buf(), max_files))
            .or_default()
            .clone()
    }
}

/// One writable directory's quota of bytes and files.
pub(crate) struct Quota {
    host: PathBuf,
    guest: String,
    /// The policy table that sets it, such as `fs.scratch` or `fs.mount[0]`.
    table: String,
    audit: AuditLog,
    limit: u64,
    max_files: u64,
    usage: Arc<Usage>,
    /// Whether this call has measured the directory again (at most once, before a refusal).
    remeasured: AtomicBool,
}

/// What a reservation asks for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ask {
    pub(super) bytes: u64,
    pub(super) files: u64,
}

impl Quota {
    /// The directory measured again: `files = max_files + 1` when it holds more, and full when
    /// it cannot be measured.
    fn measure(&self) -> Counters {
        match usage::measure(&self.host, self.max_files) {
            Some(m) => Counters {
                bytes: m.bytes,
                files: m.files,
            },
            None => Counters {
                bytes: u64::MAX,
                files: u64::MAX,
            },
        }
    }

    fn try_reserve(&self, ask: Ask) -> Result<(), Counters> {
        let mut counters = self
            .usage
            .counters
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let c = counters.get_or_insert_with(|| self.measure());
        *c = admit(c, ask, self.limit, self.max_files)?;
        Ok(())
    }

    /// Reserve `ask`; false (and nothing reserved, and the refusal recorded under the target
    /// `fs`) when that would pass a limit. The counters can only run high (overwrites of a
    /// stream, concurrent writers, changes made outside): before refusing, a call measures the
    /// directory again, once.
    pub(super) fn reserve(&self, ask: Ask) -> bool {
        let mut refused = self.try_reserve(ask);
        if refused.is_err() && !self.remeasured.swap(true, Ordering::SeqCst) {
            let measured = self.measure();
            *self
                .usage
                .counters
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(measured);
            refused = self.try_reserve(ask);
        }
        let Err(held) = refused else {
            return true;
        };
        let refusal = over_quota(
            &self.table,
            &self.guest,
            (self.limit, self.max_files),
            &held,
            ask,
        );
        self.audit.deny(refusal, Instant::now(), 0);
        false
    }

    /// Record that the host's file system under this directory ran out of space. The guest's
    /// libc reports every failed stream write as `EIO`, and wasmtime-wasi's file stream reports
    /// `ENOSPC` only at the `check-write` or `flush` after the `write` (it writes on a blocking
    /// thread); the guest's `fs` finds this record, as it finds a quota refusal, and throws
    /// `ENOSPC`.
    fn disk_full(&self) {
        let reason = format!("{}: the host's file system is full", self.guest);
        let refusal = super::refusal(self.table.as_str(), reason, None);
        self.audit.deny(refusal, Instant::now(), 0);
    }

    pub(super) fn reserve_bytes(&self, bytes: u64) -> bool {
        bytes == 0 || self.reserve(Ask { bytes, files: 0 })
    }

    /// Give back what a removal or a failed operation freed.
    pub(super) fn release(&self, bytes: u64, files: u64) {
        let mut counters = self
            .usage
            .counters
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(c) = counters.as_mut() {
            c.bytes = c.bytes.saturating_sub(bytes);
            c.files = c.files.saturating_sub(files);
        }
    }

    /// Refuse a path below the root that is too deep or too long, recording why.
    pub(super) fn refuse_place(&self, place: Option<&Place>) -> bool {
        let reason = match place {
            None => return false,
            Some(place) => match place.too_deep(&self.host) {
                None => return false,
                Some(reason) => reason,
            },
        };
        let reason = format!("{}: {reason}", self.guest);
        let refusal = super::refusal(self.table.as_str(), reason, None);
        self.audit.deny(refusal, Instant::now(), 0);
        true
    }
}

/// The counters after `ask` in a directory that holds `held`, under `limit` bytes and
/// `max_files` entries; or, past either, what it holds.
fn admit(held: &Counters, ask: Ask, limit: u64, max_files: u64) -> Result<Counters, Counters> {
    let bytes = held.bytes.checked_add(ask.bytes).filter(|b| *b <= limit);
    let files = held
        .files
        .checked_add(ask.files)
        .filter(|f| *f <= max_files);
    match (bytes, files) {
        (Some(bytes), Some(files)) => Ok(Counters { bytes, files }),
        _ => Err(Counters {
            bytes: held.bytes,
            files: held.files,
        }),
    }
}

/// The refusal of `ask` in the directory `guest`, whose quota the policy table `table` sets to
/// `limits` (bytes, files), when it holds `held`: the byte quota if that is what it passes,
/// else the file limit, each with the setting that would have let it through.
fn over_quota(table: &str, guest: &str, limits: (u64, u64), held: &Counters, ask: Ask) -> Refusal {
    let (limit, max_files) = limits;
    let needed = held.bytes.saturating_add(ask.bytes);
    if needed > limit {
        let rule = format!("{table}.quota");
        let fix = (needed <= 1 << 40).then(|| Fix {
            key: rule.clone(),
            value: format!("\"{}\"", ByteSize(needed.next_power_of_two())),
        });
        let reason = format!(
            "{guest} holds {} bytes; {} more would pass its {} quota",
            held.bytes,
            ask.bytes,
            ByteSize(limit)
        );
        return super::refusal(rule, reason, fix);
    }
    let rule = format!("{table}.max_files");
    let needed = held.files.saturating_add(ask.files);
    let fix = (needed <= crate::policy::MAX_FILES_LIMIT).then(|| Fix {
        key: rule.clone(),
        value: needed
            .saturating_mul(2)
            .min(crate::policy::MAX_FILES_LIMIT)
            .to_string(),
    });
    let reason = format!(
        "{guest} holds {} files; another would pass its limit of {max_files}",
        held.files.min(max_files),
    );
    super::refusal(rule, reason, fix)
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

/// One writable directory's limits, as [`Quotas::add`] takes them.
pub(crate) struct Limits {
    pub bytes: u64,
    pub files: u64,
    /// The policy table that sets them, such as `fs.scratch` or `fs.mount[0]`.
    pub table: String,
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
                host: host.to_path_buf(),
                guest: guest.to_owned(),
                table: limits.table,
                audit: self.audit.clone(),
                limit: limits.bytes,
                max_files: limits.files,
                usage,
                remeasured: AtomicBool::new(false),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;

    #[test]
    fn reservations_fit_or_name_the_limit_they_pass() {
        let held = Counters {
            bytes: 900,
            files: 9,
        };
        let ask = |bytes, files| Ask { bytes, files };
        // (ask, the counters after it, or the refused rule and its fix)
        let cases = [
            (ask(100, 1), Ok((1000, 10))),
            (ask(0, 0), Ok((900, 9))),
            (ask(101, 0), Err(("fs.scratch.quota", Some("\"1KiB\"")))),
            (ask(0, 2), Err(("fs.scratch.max_files", Some("22")))),
            // Bytes are named first when both pass.
            (ask(200, 5), Err(("fs.scratch.quota", Some("\"2KiB\"")))),
            (ask(u64::MAX, 0), Err(("fs.scratch.quota", None))),
        ];
        for (ask, expected) in cases {
            let got = admit(&held, ask, 1000, 10)
                .map(|c| (c.bytes, c.files))
                .map_err(|held| {
                    assert_eq!(
                        held,
                        Counters {
                            bytes: 900,
                            files: 9
                        },
                        "nothing reserved"
                    );
                    let r = over_quota("fs.scratch", "/tmp", (1000, 10), &held, ask);
                    (r.rule.to_string(), r.fix.map(|f| f.value))
                });
            let expected =
                expected.map_err(|(rule, fix)| (rule.to_owned(), fix.map(str::to_owned)));
            assert_eq!(got, expected, "{ask:?}");
        }
        let r = over_quota("fs.mount[0]", "/data", (1000, 10), &held, ask(0, 2));
        assert_eq!(
            &*r.reason,
            "/data holds 9 files; another would pass its limit of 10"
        );
        assert_eq!(&*r.target, "fs");
    }

    fn files(usage: &Usage) -> u64 {
        usage.counters.lock().unwrap().as_ref().unwrap().files
    }

    #[test]
    fn a_mount_is_walked_once_then_counted() {
        let dir = std::env::temp_dir().join(format!("palisade-quota-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..3 {
            std::fs::write(dir.join(i.to_string()), "x").unwrap();
        }
        let quota = |usage| {
            let mut quotas = Quotas::new(AuditLog::new(&Policy::builtin_default()));
            let limits = Limits {
                bytes: 1 << 20,
                files: 10,
                table: "fs.mount[0]".into(),
            };
            quotas.add("/m", &dir, limits, usage);
            quotas.by_guest["/m"].clone()
        };
        let one = Ask { bytes: 0, files: 1 };
        let usage = Usage::of_mount(&dir, 10);
        assert!(Arc::ptr_eq(&usage, &Usage::of_mount(&dir, 10)));
        // The first call's first creation walks: 3 files, and the one it makes.
        assert!(quota(usage.clone()).reserve(one));
        assert_eq!(files(&usage), 4);
        // Files made outside are not seen by later calls: they walk no more.
        for i in 3..9 {
            std::fs::write(dir.join(i.to_string()), "x").unwrap();
        }
        let later = quota(Usage::of_mount(&dir, 10));
        assert!(later.reserve(one));
        assert_eq!(files(&usage), 5);
        later.release(0, 1);
        assert_eq!(files(&usage), 4);
        // Reservations that were never made into files run the count high (10 of 10)...
        assert!(later.reserve(Ask { bytes: 0, files: 6 }));
        assert_eq!(files(&usage), 10);
        // ...until a call is about to refuse: it measures again, once (9 files on disk).
        assert!(later.reserve(one));
        assert_eq!(files(&usage), 10);
        assert!(!later.reserve(one), "measured once per call");
        assert_eq!(files(&usage), 10);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
