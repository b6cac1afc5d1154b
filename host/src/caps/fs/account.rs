//! One writable directory's account: its limits of bytes and entries, and what it holds,
//! shared by every call of this process that mounts it and by the session file operations of
//! `palisade serve`, so that the script and the file API meet one quota with one count. The
//! usage is measured once (a walk with `*at` calls, see [`super::usage`]), then kept up to date
//! by each write, creation and removal; the count can only run high, and an account measures
//! again, once, before it refuses.

use super::usage::{self, Place};
use crate::Fix;
use crate::caps::gate::Refusal;
use crate::policy::ByteSize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
        // limit that the operator's policies name (and per session directory under `serve`).
        type Registry = HashMap<(PathBuf, u64), Arc<Usage>>;
        static MOUNTS: std::sync::LazyLock<std::sync::Mutex<Registry>> =
            std::sync::LazyLock::new(Default::default);
        let mut mounts = MOUNTS.lock().unwrap_or_else(|e| e.into_inner());
        mounts
            .entry((host.to_path_buf(), max_files))
            .or_default()
            .clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Counters>> {
        self.counters.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What a reservation asks for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ask {
    pub bytes: u64,
    pub files: u64,
}

/// One writable directory's limits, as [`Account::new`] takes them.
pub(crate) struct Limits {
    pub bytes: u64,
    pub files: u64,
    /// The policy table that sets them, such as `fs.scratch` or `fs.mount[0]`.
    pub table: String,
}

/// One writable directory's quota of bytes and files, over its shared [`Usage`].
pub(crate) struct Account {
    host: PathBuf,
    guest: String,
    /// The policy table that sets it, such as `fs.scratch` or `fs.mount[0]`.
    table: String,
    limit: u64,
    max_files: u64,
    usage: Arc<Usage>,
    /// Whether this account has measured the directory again (at most once, before a refusal).
    remeasured: AtomicBool,
}

impl Account {
    /// The account of the directory at `host`, seen by scripts at `guest`, over `usage`.
    pub fn new(guest: &str, host: &Path, limits: Limits, usage: Arc<Usage>) -> Account {
        Account {
            host: host.to_path_buf(),
            guest: guest.to_owned(),
            table: limits.table,
            limit: limits.bytes,
            max_files: limits.files,
            usage,
            remeasured: AtomicBool::new(false),
        }
    }

    /// The account of the `rw` mount at `host`, over the usage every call that mounts it
    /// with the same file limit shares ([`Usage::of_mount`]).
    #[cfg(feature = "serve")]
    pub fn of_mount(guest: &str, host: &Path, limits: Limits) -> Account {
        let usage = Usage::of_mount(host, limits.files);
        Account::new(guest, host, limits, usage)
    }

    /// Where scripts see the directory, such as `/scratch`.
    pub fn guest(&self) -> &str {
        &self.guest
    }

    /// The policy table that sets the limits.
    pub fn table(&self) -> &str {
        &self.table
    }

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
        let mut counters = self.usage.lock();
        let c = counters.get_or_insert_with(|| self.measure());
        *c = admit(c, ask, self.limit, self.max_files)?;
        Ok(())
    }

    /// Measure the directory again, unless this account already did; whether it did.
    fn remeasure_once(&self) -> bool {
        if self.remeasured.swap(true, Ordering::SeqCst) {
            return false;
        }
        let measured = self.measure();
        *self.usage.lock() = Some(measured);
        true
    }

    /// Reserve `ask`, or the refusal that names the limit it would pass (nothing reserved).
    /// The counters can only run high (overwrites of a stream, concurrent writers, changes
    /// made outside): before refusing, an account measures the directory again, once.
    pub fn reserve(&self, ask: Ask) -> Result<(), Refusal> {
        let mut refused = self.try_reserve(ask);
        if refused.is_err() && self.remeasure_once() {
            refused = self.try_reserve(ask);
        }
        refused.map_err(|held| {
            over_quota(
                &self.table,
                &self.guest,
                (self.limit, self.max_files),
                &held,
                ask,
            )
        })
    }

    /// The bytes that may still be added, measured again (once) when the count says none.
    #[cfg(feature = "serve")]
    pub fn available(&self) -> u64 {
        let left = || {
            let mut counters = self.usage.lock();
            let c = counters.get_or_insert_with(|| self.measure());
            self.limit.saturating_sub(c.bytes)
        };
        match left() {
            0 if self.remeasure_once() => left(),
            n => n,
        }
    }

    /// Give back what a removal or a failed operation freed.
    pub fn release(&self, bytes: u64, files: u64) {
        if let Some(c) = self.usage.lock().as_mut() {
            c.bytes = c.bytes.saturating_sub(bytes);
            c.files = c.files.saturating_sub(files);
        }
    }

    /// Forget the count (after a removal whose size is not known): the next reservation
    /// measures the directory.
    #[cfg(feature = "serve")]
    pub fn recount(&self) {
        *self.usage.lock() = None;
    }

    /// Why nothing may be made at `place` below the root: deeper than
    /// [`usage::MAX_DEPTH`] levels, or a host path longer than `PATH_MAX`.
    pub fn refuse_place(&self, place: &Place) -> Option<Refusal> {
        let reason = place.too_deep(&self.host)?;
        let reason = format!("{}: {reason}", self.guest);
        Some(super::refusal(self.table.as_str(), reason, None))
    }

    /// As [`Account::refuse_place`], for `path` relative to the root with `below` more levels
    /// under it (a directory's subtree moved there). A path that climbs above the root or is
    /// absolute is left to the confinement that opens it.
    #[cfg(feature = "serve")]
    pub fn refuse_path(&self, path: &str, below: usize) -> Option<Refusal> {
        let place = Place::default().join(path)?;
        if below > 0 && place.depth() + below > usage::MAX_DEPTH {
            let reason = format!(
                "{}: the moved directory would reach {} levels deep; at most {} are allowed",
                self.guest,
                place.depth() + below,
                usage::MAX_DEPTH
            );
            return Some(super::refusal(self.table.as_str(), reason, None));
        }
        self.refuse_place(&place)
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let dir = std::env::temp_dir().join(format!("palisade-account-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..3 {
            std::fs::write(dir.join(i.to_string()), "x").unwrap();
        }
        let quota = |usage| {
            let limits = Limits {
                bytes: 1 << 20,
                files: 10,
                table: "fs.mount[0]".into(),
            };
            Account::new("/m", &dir, limits, usage)
        };
        let one = Ask { bytes: 0, files: 1 };
        let usage = Usage::of_mount(&dir, 10);
        assert!(Arc::ptr_eq(&usage, &Usage::of_mount(&dir, 10)));
        // The first call's first creation walks: 3 files, and the one it makes.
        assert!(quota(usage.clone()).reserve(one).is_ok());
        assert_eq!(files(&usage), 4);
        // Files made outside are not seen by later calls: they walk no more.
        for i in 3..9 {
            std::fs::write(dir.join(i.to_string()), "x").unwrap();
        }
        let later = quota(Usage::of_mount(&dir, 10));
        assert!(later.reserve(one).is_ok());
        assert_eq!(files(&usage), 5);
        later.release(0, 1);
        assert_eq!(files(&usage), 4);
        // Reservations that were never made into files run the count high (10 of 10)...
        assert!(later.reserve(Ask { bytes: 0, files: 6 }).is_ok());
        assert_eq!(files(&usage), 10);
        // ...until a call is about to refuse: it measures again, once (9 files on disk).
        assert!(later.reserve(one).is_ok());
        assert_eq!(files(&usage), 10);
        assert!(later.reserve(one).is_err(), "measured once per account");
        assert_eq!(files(&usage), 10);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
