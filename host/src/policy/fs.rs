//! `[fs]`: host directories mounted into the guest, and the per-call scratch directory.

use super::raw::{RawFs, RawMount, RawScratch};
use super::{ByteSize, PolicyError, Source};
use serde::Serialize;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// `[fs]`: host directories mounted into the guest, and a per-call scratch directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fs {
    /// Host directories mounted into the guest (`[[fs.mount]]`).
    pub mount: Vec<Mount>,
    /// The per-call scratch directory (`[fs.scratch]`), if the policy asks for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scratch: Option<Scratch>,
}

/// A writable directory that exists for one call: created empty (or seeded from host files)
/// in memory-backed storage when the host has it (`/dev/shm`), removed when the call ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scratch {
    /// Absolute path the script uses, such as `/scratch`.
    pub guest: String,
    /// The most bytes the directory may hold, seed included.
    pub quota: ByteSize,
    /// The most entries (files, directories, links) it may hold, seed included.
    pub max_files: u64,
    /// Host files and directories copied in at the start of each call (a directory's
    /// contents, a file under its own name). Absolute, resolved against the policy's folder.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seed: Vec<PathBuf>,
}

/// One mount: a host directory, visible to the script at `guest`, read-only unless `rw`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mount {
    /// Absolute host path (relative paths in a policy file are resolved against its folder).
    pub host: PathBuf,
    /// Absolute path the script uses, such as `/workspace`.
    pub guest: String,
    /// `"ro"` or `"rw"`.
    pub mode: MountMode,
    /// For `rw` mounts: the most bytes the directory may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<ByteSize>,
    /// For `rw` mounts: the most entries (files, directories, links) it may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_files: Option<u64>,
}

/// Default quota of a `rw` mount.
pub const DEFAULT_MOUNT_QUOTA: ByteSize = ByteSize(256 << 20);
/// Default quota of the scratch directory (memory-backed on most hosts).
pub const DEFAULT_SCRATCH_QUOTA: ByteSize = ByteSize(64 << 20);
/// Default `max_files` of a `rw` mount and of the scratch directory. It also bounds the
/// walk that measures a mount (one `fstatat` per entry, about 10 ms for 10,000 entries).
pub const DEFAULT_MAX_FILES: u64 = 10_000;
/// Largest `max_files` a policy may set: each entry costs the host a `fstatat` when the
/// directory is measured.
pub const MAX_FILES_LIMIT: u64 = 1_000_000;

/// Whether a mount can be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MountMode {
    /// Read-only (`ro`).
    Ro,
    /// Read-write (`rw`), within the mount's quotas.
    Rw,
}

/// `[fs]` resolved: each mount and the scratch directory, with host paths made absolute
/// against the policy's folder.
pub(super) fn resolve(raw: &RawFs, source: &Source<'_>) -> Result<Fs, PolicyError> {
    let base = match source.file.and_then(Path::parent) {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut mount = Vec::new();
    for (i, m) in raw.mount.iter().enumerate() {
        let resolved = resolve_mount(i, m, &base, &mount, source)?;
        mount.push(resolved);
    }
    let scratch = match &raw.scratch {
        None => None,
        Some(s) => Some(resolve_scratch(s, &base, &mount, source)?),
    };
    Ok(Fs { mount, scratch })
}

/// An absolute guest path other than `/`, without `.` or `..` segments.
fn clean_guest(guest: &str) -> bool {
    guest.starts_with('/')
        && guest.len() > 1
        && !guest.split('/').any(|part| part == ".." || part == ".")
}

/// `[[fs.mount]]` number `i`: a clean guest path not mounted before (`earlier`), a host
/// directory, a mode, and the quotas of a `rw` mount.
fn resolve_mount(
    i: usize,
    m: &Spanned<RawMount>,
    base: &Path,
    earlier: &[Mount],
    source: &Source<'_>,
) -> Result<Mount, PolicyError> {
    let key = format!("fs.mount[{i}]");
    let span = Some(m.span());
    let m = m.get_ref();
    let guest = &m.guest;
    if !clean_guest(guest) {
        return Err(source.error(
            &format!("{key}.guest"),
            span,
            format!(
                "`{guest}` must be an absolute path such as \"/workspace\", without `.` or `..`"
            ),
        ));
    }
    if earlier.iter().any(|other: &Mount| other.guest == *guest) {
        return Err(source.error(
            &format!("{key}.guest"),
            span,
            format!("`{guest}` is mounted twice"),
        ));
    }
    let host = base.join(&m.host);
    let host = host.canonicalize().map_err(|e| {
        source.error(
            &format!("{key}.host"),
            span.clone(),
            format!("cannot use `{}`: {e}", m.host),
        )
    })?;
    if !host.is_dir() {
        return Err(source.error(
            &format!("{key}.host"),
            span,
            format!("`{}` is not a directory", m.host),
        ));
    }
    let mode = match m.mode.as_deref() {
        None | Some("ro") => MountMode::Ro,
        Some("rw") => MountMode::Rw,
        Some(other) => {
            return Err(source.error(
                &format!("{key}.mode"),
                span,
                format!("`{other}` is not a mode; use \"ro\" or \"rw\""),
            ));
        }
    };
    let (quota, max_files) = mount_quotas(&key, span, mode, m, source)?;
    Ok(Mount {
        host,
        guest: guest.clone(),
        mode,
        quota,
        max_files,
    })
}

/// The quota and file limit of a `rw` mount (or their defaults); a read-only one has none.
fn mount_quotas(
    key: &str,
    span: Option<Range<usize>>,
    mode: MountMode,
    m: &RawMount,
    source: &Source<'_>,
) -> Result<(Option<ByteSize>, Option<u64>), PolicyError> {
    let quota = match (mode, m.quota) {
        (MountMode::Ro, Some(_)) => {
            return Err(source.error(
                &format!("{key}.quota"),
                span,
                "a read-only mount has no quota; remove it or set mode = \"rw\"",
            ));
        }
        (MountMode::Ro, None) => None,
        (MountMode::Rw, quota) => Some(quota.unwrap_or(DEFAULT_MOUNT_QUOTA)),
    };
    let max_files = match (mode, m.max_files) {
        (MountMode::Ro, Some(_)) => {
            return Err(source.error(
                &format!("{key}.max_files"),
                span,
                "a read-only mount has no file limit; remove it or set mode = \"rw\"",
            ));
        }
        (MountMode::Ro, None) => None,
        (MountMode::Rw, n) => Some(check_max_files(
            n,
            &format!("{key}.max_files"),
            source,
            span,
        )?),
    };
    Ok((quota, max_files))
}

/// `[fs.scratch]`: a clean guest path that is no mount, a file limit, and a seed that every
/// call can copy.
fn resolve_scratch(
    s: &Spanned<RawScratch>,
    base: &Path,
    mounts: &[Mount],
    source: &Source<'_>,
) -> Result<Scratch, PolicyError> {
    let span = Some(s.span());
    let s = s.get_ref();
    if !clean_guest(&s.guest) {
        return Err(source.error(
            "fs.scratch.guest",
            span,
            format!(
                "`{}` must be an absolute path such as \"/scratch\"",
                s.guest
            ),
        ));
    }
    if mounts.iter().any(|m| m.guest == s.guest) {
        return Err(source.error(
            "fs.scratch.guest",
            span,
            format!("`{}` is also a mount", s.guest),
        ));
    }
    let max_files = check_max_files(s.max_files, "fs.scratch.max_files", source, span.clone())?;
    let mut seed = Vec::new();
    for (i, path) in s.seed.iter().enumerate() {
        let resolved = base.join(path).canonicalize().map_err(|e| {
            source.error(
                &format!("fs.scratch.seed[{i}]"),
                span.clone(),
                format!("cannot use `{path}`: {e}"),
            )
        })?;
        seed.push(resolved);
    }
    // Every call copies the seed: what cannot be copied is said here, not per call.
    crate::seed::check_seed(&seed, max_files).map_err(|e| {
        source.error(
            &format!("fs.scratch.seed[{}]", e.index),
            span.clone(),
            e.message,
        )
    })?;
    Ok(Scratch {
        guest: s.guest.clone(),
        quota: s.quota.unwrap_or(DEFAULT_SCRATCH_QUOTA),
        max_files,
        seed,
    })
}

/// A `max_files` value, or the default.
fn check_max_files(
    value: Option<u64>,
    key: &str,
    source: &Source<'_>,
    span: Option<Range<usize>>,
) -> Result<u64, PolicyError> {
    match value {
        None => Ok(DEFAULT_MAX_FILES),
        Some(n) if (1..=MAX_FILES_LIMIT).contains(&n) => Ok(n),
        Some(n) => Err(source.error(
            key,
            span,
            format!("{n} is out of range; use 1 to {MAX_FILES_LIMIT}"),
        )),
    }
}
