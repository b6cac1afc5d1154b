//! `POST /v1/sessions/{id}/fs/{op}`: file operations in a session's directory. Every path goes
//! through cap-primitives, the confinement the guest's file gate (wasmtime-wasi) uses: a `..`
//! that climbs out, or a symbolic link that points out fails as `policy_denied` (rule
//! `fs.confine`), as it would for the script. A path is relative to the directory, or given as
//! the script sees it (`/scratch/a.txt` is `a.txt`); `/` and `/scratch` name the directory
//! itself.
//!
//! The operations meet the guest's own gate (`caps::fs::Account`): one count of bytes
//! and entries per session directory, shared with the scripts that write there, under the
//! policy's `[fs.scratch]` quota and file limit, and one depth limit (128 levels). Only regular
//! files and directories are opened: a FIFO would block the thread that reads it.
//!
//! One request's work is bounded (docs/server.md, "Session files"): [`MAX_READ_BYTES`] per
//! read and [`MAX_LIST_ENTRIES`] per listing; grep and sed read at most 16 MiB per file and
//! 256 MiB per request, and sed builds each file's result within the quota; a [`Stop`] set by
//! the caller ends a walk, a grep or a sed at its next check.

mod write;

use super::errors::ApiError;
use crate::Error;
use crate::caps::fs::{Account, AccountLimits};
use base64::Engine as _;
use cap_primitives::fs::{self as cap, FollowSymlinks, MetadataExt as _, OpenOptions};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use utoipa::ToSchema;

/// Largest file `read` returns (it is sent in one response).
pub const MAX_READ_BYTES: u64 = 16 << 20;
/// Files `read` returns inline as `body` when they are UTF-8 and at most this large.
pub const MAX_INLINE_BYTES: u64 = 1 << 20;
/// Most entries `ls` returns; past it the answer says `truncated` (which entries is unspecified).
pub const MAX_LIST_ENTRIES: usize = 10_000;

/// The fields of every file operation (each uses some).
#[derive(Debug, Default, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FsRequest {
    /// The path the operation works on.
    pub path: Option<String>,
    /// `mkdir`, `write`: create missing parent directories.
    #[serde(default)]
    pub parents: bool,
    /// `write`: the content as UTF-8 text.
    pub content: Option<String>,
    /// `write`: the content as base64.
    pub content_b64: Option<String>,
    /// `rm`: remove a directory and its contents; `grep`, `sed`: walk subdirectories (default).
    pub recursive: Option<bool>,
    /// `mv`: the source.
    pub src: Option<String>,
    /// `mv`: the destination.
    pub dst: Option<String>,
    /// `mv`: replace an existing destination.
    #[serde(default)]
    pub overwrite: bool,
    /// `grep`, `sed`: the regular expression (or literal, for `sed` with `regex: false`).
    pub pattern: Option<String>,
    /// `grep`, `sed`: match without case.
    #[serde(default)]
    pub ignore_case: bool,
    /// `grep`, `sed`: only paths matching one of these globs.
    #[serde(default)]
    pub include_glob: Vec<String>,
    /// `grep`, `sed`: no path matching one of these globs.
    #[serde(default)]
    pub exclude_glob: Vec<String>,
    /// `grep`: stop after this many matches (default 10,000, at most 100,000).
    pub max_matches: Option<usize>,
    /// `grep`: cut longer lines to this many bytes (default 4,096, at most 65,536).
    pub max_line_bytes: Option<usize>,
    /// `sed`: the files to edit (instead of `path`).
    pub files: Option<Vec<String>>,
    /// `sed`: the replacement (`$1` names a group when `regex` is true).
    pub replacement: Option<String>,
    /// `sed`: `pattern` is a regular expression (default) or a literal.
    pub regex: Option<bool>,
    /// `sed`: replace only the first match in each file.
    #[serde(default)]
    pub first_only: bool,
}

/// When a file operation gives up: a flag its caller sets (the client went away, the server
/// shuts down) and a deadline. A walk checks it at each entry, grep and sed at each file and
/// every 1 MiB they scan; a stopped operation answers `cancelled` or
/// `timeout`, and every file it had not yet replaced is as it was (sed replaces each file
/// whole, [`Root::write`]).
#[derive(Clone, Debug, Default)]
pub struct Stop {
    /// Set to stop the operation at its next check.
    pub cancelled: Arc<AtomicBool>,
    /// When to stop, and the limit the `timeout` error names.
    pub deadline: Option<(Instant, Duration)>,
}

impl Stop {
    /// A stop `limit` from now, with its own flag.
    pub fn after(limit: Duration) -> Stop {
        Stop {
            cancelled: Arc::default(),
            deadline: Some((Instant::now() + limit, limit)),
        }
    }

    /// `Err` when the operation must stop now.
    pub fn check(&self) -> Result<(), ApiError> {
        if self.cancelled.load(Ordering::Relaxed) {
            return Err(Error::Cancelled.into());
        }
        match self.deadline {
            Some((at, limit)) if Instant::now() >= at => Err(ApiError::from(Error::Timeout {
                limit: crate::policy::HumanDuration(limit),
            })
            .fix(Value::Null)
            .note("narrow the operation (`path`, `include_glob`, `files`) or split it")),
            _ => Ok(()),
        }
    }
}

/// A session's directory, as the file operations see it.
pub struct Root {
    pub(super) dir: File,
    /// Where the script sees the directory, such as `/scratch`.
    pub guest: String,
    /// The most bytes it may hold.
    pub quota: u64,
    /// The most entries it may hold.
    pub max_files: u64,
    /// When an operation gives up (never, unless the caller sets it).
    pub stop: Stop,
    /// The directory's account, shared with the scripts that write there.
    pub(super) account: Account,
}

/// How to name a path in requests, for refusals of paths outside the directory.
fn path_note(guest: &str) -> String {
    format!(
        "a session path is relative to the session's directory (`a.txt`) or starts with \
         `{guest}/` (`{guest}/a.txt`); `/` and `{guest}` name the directory itself"
    )
}

fn denied(path: &str) -> ApiError {
    Error::PolicyDenied {
        capability: "fs".to_owned(),
        rule: "fs.confine".to_owned(),
        reason: format!("`{path}` leads outside the session's directory"),
        fix: None,
    }
    .into()
}

/// A conflict at `path`, described by `detail` (no fix: the caller adds one where it works).
pub(super) fn conflict(path: &str, detail: &str) -> ApiError {
    Error::FileConflict {
        path: path.to_owned(),
        detail: detail.to_owned(),
    }
    .into()
}

/// The error of a failed operation on `path`, without a `fix`: only the operation knows
/// which change of the request would work.
pub(super) fn io_error(path: &str, e: std::io::Error) -> ApiError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => Error::FileNotFound {
            path: path.to_owned(),
        }
        .into(),
        K::PermissionDenied => denied(path),
        K::AlreadyExists => conflict(path, "it already exists"),
        K::DirectoryNotEmpty => conflict(path, "the directory is not empty"),
        K::IsADirectory => conflict(path, "it is a directory"),
        K::NotADirectory => conflict(path, "a part of the path is not a directory"),
        K::InvalidFilename | K::InvalidInput => {
            ApiError::invalid(format!("`{path}` is not a valid path: {e}"))
        }
        _ if e.raw_os_error() == Some(40) => conflict(path, "too many levels of symbolic links"),
        _ => Error::Internal {
            detail: format!("file operation on `{path}`: {e}"),
        }
        .into(),
    }
}

/// A refusal of the directory's account (quota, file limit, depth) as the caller sees it. The
/// policy change that would allow it is a note: a session's policy is not part of the request.
pub(super) fn refused(refusal: crate::caps::gate::Refusal) -> ApiError {
    let note = match refusal.fix_text() {
        Some(fix) => format!("free room with fs/rm, or start a session under a policy with {fix}"),
        None => "use a shallower or shorter path".to_owned(),
    };
    ApiError::from(Error::PolicyDenied {
        capability: "fs".to_owned(),
        rule: refusal.rule.to_string(),
        reason: refusal.reason.to_string(),
        fix: None,
    })
    .note(note)
}

/// A file that is neither a regular file nor a directory (a FIFO, a socket, a device): never
/// opened, as the guest's gate never opens one.
fn not_regular(path: &str) -> ApiError {
    Error::PolicyDenied {
        capability: "fs".to_owned(),
        rule: "fs.scratch".to_owned(),
        reason: format!("`{path}` is not a regular file or directory (a FIFO, socket or device)"),
        fix: None,
    }
    .into()
}

/// The bytes that removing or replacing this entry frees: a regular file's size, unless
/// another name still links to it.
pub(super) fn freed_bytes(meta: &cap::Metadata) -> u64 {
    if meta.is_file() && meta.nlink() <= 1 {
        meta.len()
    } else {
        0
    }
}

impl Root {
    /// Open `dir` (a session's directory) with its guest path and quotas. Its account is the
    /// one every call that mounts `dir` read-write under `max_files` shares: pass the same
    /// path the session's policy mounts.
    pub fn open(dir: &Path, guest: &str, quota: u64, max_files: u64) -> Result<Root, ApiError> {
        let handle =
            cap::open_ambient_dir(dir, cap_primitives::ambient_authority()).map_err(|e| {
                ApiError::from(Error::Internal {
                    detail: format!("cannot open the session directory {}: {e}", dir.display()),
                })
            })?;
        let limits = AccountLimits {
            bytes: quota,
            files: max_files,
            table: "fs.scratch".to_owned(),
        };
        Ok(Root {
            dir: handle,
            guest: guest.to_owned(),
            quota,
            max_files,
            stop: Stop::default(),
            account: Account::of_mount(guest, dir, limits),
        })
    }

    /// The path below the root that `path` names: relative, under the guest path, or `/`.
    pub(super) fn rel(&self, path: &str) -> PathBuf {
        let stripped = if path == "/" || path == self.guest {
            "."
        } else if let Some(rest) = path
            .strip_prefix(self.guest.as_str())
            .and_then(|r| r.strip_prefix('/'))
        {
            rest.trim_start_matches('/')
        } else {
            path
        };
        if stripped.is_empty() {
            PathBuf::from(".")
        } else {
            PathBuf::from(stripped)
        }
    }

    /// `path` from the request's `path` field, refused (with the guest form as the fix) when
    /// it is absolute and outside the guest path.
    fn path_field<'r>(&self, op: &str, r: &'r FsRequest) -> Result<&'r str, ApiError> {
        let Some(path) = r.path.as_deref() else {
            let e = ApiError::invalid(format!("fs/{op} needs `path`"));
            // Only `stat` has a path that always works: the directory itself.
            return Err(match op {
                "stat" => e.fix(json!({"path": "."})),
                _ => e.note("name the file or directory in `path`"),
            });
        };
        if self.rel(path).is_absolute() {
            let inside = format!("{}{path}", self.guest);
            return Err(denied(path)
                .fix(json!({ "path": inside }))
                .note(path_note(&self.guest)));
        }
        Ok(path)
    }

    /// Visit every entry below `dir` (not following links, at most [`crate::caps::fs::MAX_DEPTH`]
    /// levels below the root, the guest's depth limit); `visit` returns false to stop.
    pub(super) fn walk(
        &self,
        dir: &Path,
        recursive: bool,
        visit: &mut dyn FnMut(&Path, &cap::Metadata) -> bool,
    ) -> Result<bool, ApiError> {
        let depth = dir
            .components()
            .filter(|c| matches!(c, std::path::Component::Normal(_)))
            .count();
        if depth >= crate::caps::fs::MAX_DEPTH {
            return Ok(true);
        }
        let shown = dir.to_string_lossy();
        let mut names: Vec<_> = cap::read_dir(&self.dir, dir)
            .map_err(|e| io_error(&shown, e))?
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        names.sort();
        for name in names {
            self.stop.check()?;
            let path = if dir == Path::new(".") {
                PathBuf::from(&name)
            } else {
                dir.join(&name)
            };
            let Ok(meta) = cap::stat(&self.dir, &path, FollowSymlinks::No) else {
                continue;
            };
            if !visit(&path, &meta) {
                return Ok(false);
            }
            if recursive && meta.is_dir() && !self.walk(&path, true, visit)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    pub(super) fn stat(&self, path: &str) -> Result<cap::Metadata, ApiError> {
        cap::stat(&self.dir, &self.rel(path), FollowSymlinks::No).map_err(|e| io_error(path, e))
    }

    pub(super) fn exists(&self, rel: &Path) -> Option<cap::Metadata> {
        cap::stat(&self.dir, rel, FollowSymlinks::No).ok()
    }

    /// The contents of the regular file at `rel`, or its size when it is over `max` bytes. A
    /// FIFO, socket or device is refused without blocking: it is opened with `O_NONBLOCK` and
    /// looked at before anything is read.
    pub(super) fn read_all(
        &self,
        rel: &Path,
        shown: &str,
        max: u64,
    ) -> Result<Result<Vec<u8>, u64>, ApiError> {
        let mut options = OpenOptions::new();
        options.read(true)._cap_fs_ext_nonblock(true);
        let file = cap::open(&self.dir, rel, &options).map_err(|e| io_error(shown, e))?;
        let meta = file.metadata().map_err(|e| io_error(shown, e))?;
        if meta.is_dir() {
            return Err(io_error(shown, std::io::ErrorKind::IsADirectory.into()));
        }
        if !meta.is_file() {
            return Err(not_regular(shown));
        }
        if meta.len() > max {
            return Ok(Err(meta.len()));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(shown, e))?;
        let len = bytes.len() as u64;
        Ok(if len <= max { Ok(bytes) } else { Err(len) })
    }

    /// Run the operation `op`.
    pub fn op(&self, op: &str, r: &FsRequest) -> Result<Value, ApiError> {
        match op {
            "ls" => match r.path {
                Some(_) => self.ls(self.path_field(op, r)?),
                None => self.ls("."),
            },
            "stat" => {
                let path = self.path_field(op, r)?;
                let meta = self.stat(path)?;
                Ok(entry_json(&name_of(path, "."), &meta))
            }
            "mkdir" => self.mkdir(self.path_field(op, r)?, r.parents),
            "write" => {
                let path = self.path_field(op, r)?;
                self.write(path, &content(r)?, r.parents)
            }
            "read" => self.read(self.path_field(op, r)?),
            "rm" => self.rm(self.path_field(op, r)?, r.recursive.unwrap_or(false)),
            "mv" => self.mv(r),
            "grep" => self.grep(r),
            "sed" => self.sed(r),
            other => Err(ApiError::invalid(format!(
                "no file operation `{other}`; use ls, stat, mkdir, write, read, rm, mv, grep or sed"
            ))),
        }
    }

    fn ls(&self, path: &str) -> Result<Value, ApiError> {
        let rel = self.rel(path);
        let listing = cap::read_dir(&self.dir, &rel).map_err(|e| io_error(path, e))?;
        let mut names = Vec::new();
        let mut truncated = false;
        for entry in listing.filter_map(Result::ok) {
            if names.len() == MAX_LIST_ENTRIES {
                truncated = true;
                break;
            }
            names.push(entry.file_name());
        }
        names.sort();
        let mut entries = Vec::with_capacity(names.len());
        for name in names {
            self.stop.check()?;
            if let Some(meta) = self.exists(&rel.join(&name)) {
                entries.push(entry_json(&name.to_string_lossy(), &meta));
            }
        }
        let mut out = json!({ "entries": entries });
        if truncated {
            out["truncated"] = true.into();
        }
        Ok(out)
    }

    fn read(&self, path: &str) -> Result<Value, ApiError> {
        let rel = self.rel(path);
        let bytes = self.read_all(&rel, path, MAX_READ_BYTES)?.map_err(|size| {
            ApiError::invalid(format!(
                "`{path}` holds {size} bytes, more than the {MAX_READ_BYTES} fs/read returns"
            ))
        })?;
        let meta = self.stat(path)?;
        let mut out = entry_json(&name_of(path, ""), &meta);
        match std::str::from_utf8(&bytes) {
            Ok(text) if bytes.len() as u64 <= MAX_INLINE_BYTES => {
                out["body"] = text.into();
            }
            _ => {
                out["content_b64"] = base64::engine::general_purpose::STANDARD
                    .encode(&bytes)
                    .into();
            }
        }
        Ok(out)
    }

    fn rm(&self, path: &str, recursive: bool) -> Result<Value, ApiError> {
        let rel = self.rel(path);
        if rel == Path::new(".") {
            return Err(ApiError::invalid(
                "fs/rm cannot remove the session's directory",
            ));
        }
        let meta = self.stat(path)?;
        if meta.is_dir() && recursive {
            let removed = cap::remove_dir_all(&self.dir, &rel);
            // Its size is not known without a walk: the next reservation measures.
            self.account.recount();
            removed.map_err(|e| io_error(path, e))?;
        } else if meta.is_dir() {
            cap::remove_dir(&self.dir, &rel).map_err(|e| match e.kind() {
                std::io::ErrorKind::DirectoryNotEmpty => {
                    io_error(path, e).fix(json!({"recursive": true}))
                }
                _ => io_error(path, e),
            })?;
            self.account.release(0, 1);
        } else {
            cap::remove_file(&self.dir, &rel).map_err(|e| io_error(path, e))?;
            self.account.release(freed_bytes(&meta), 1);
        }
        Ok(json!({"removed": true}))
    }
}

/// The content of a `write` request.
fn content(r: &FsRequest) -> Result<Vec<u8>, ApiError> {
    match (&r.content, &r.content_b64) {
        (Some(text), None) => Ok(text.as_bytes().to_vec()),
        (None, Some(b64)) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| ApiError::invalid(format!("content_b64 is not base64: {e}"))),
        _ => Err(ApiError::invalid(
            "fs/write needs exactly one of `content` and `content_b64`",
        )),
    }
}

/// The last part of `path`, or `root` when it has none.
fn name_of(path: &str, root: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or_else(|| root.to_owned(), |n| n.to_string_lossy().into_owned())
}

fn entry_json(name: &str, meta: &cap::Metadata) -> Value {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.into_std().duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    json!({
        "name": name,
        "is_dir": meta.is_dir(),
        "is_symlink": meta.is_symlink(),
        "size": meta.len(),
        "mtime": mtime,
    })
}
