//! `POST /v1/sessions/{id}/fs/{op}`: file operations in a session's directory. Every path goes
//! through cap-primitives, the confinement the guest's file gate (wasmtime-wasi) uses: an
//! absolute path, a `..` that climbs out, or a symbolic link that points out fails as
//! `policy_denied` (rule `fs.confine`), as it would for the script. A path may also be given
//! as the script sees it (`/scratch/a.txt` is `a.txt`). Writes are checked against the
//! session's quota and file limit (the policy's `[fs.scratch]`) before they happen.

use super::errors::ApiError;
use crate::Error;
use base64::Engine as _;
use cap_primitives::fs::{self as cap, FollowSymlinks, OpenOptions};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use utoipa::ToSchema;

/// Largest file `read` returns (it is sent in one response).
pub const MAX_READ_BYTES: u64 = 16 << 20;
/// Files `read` returns inline as `body` when they are UTF-8 and at most this large.
pub const MAX_INLINE_BYTES: u64 = 1 << 20;
/// Deepest directory a walk enters (grep, sed, measuring the quota).
const MAX_DEPTH: usize = 64;

/// The fields of every file operation (each uses some).
#[derive(Debug, Default, Deserialize, ToSchema)]
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
    /// `grep`: stop after this many matches (default 10,000).
    pub max_matches: Option<usize>,
    /// `grep`: cut longer lines to this many bytes (default 4,096).
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

/// A session's directory, as the file operations see it.
pub struct Root {
    pub(super) dir: File,
    /// Where the script sees the directory, such as `/scratch`.
    pub guest: String,
    /// The most bytes it may hold.
    pub quota: u64,
    /// The most entries it may hold.
    pub max_files: u64,
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

/// The error of a failed operation on `path`.
pub(super) fn io_error(path: &str, e: std::io::Error) -> ApiError {
    use std::io::ErrorKind as K;
    let conflict = |detail: &str| {
        ApiError::from(Error::FileConflict {
            path: path.to_owned(),
            detail: detail.to_owned(),
        })
    };
    match e.kind() {
        K::NotFound => Error::FileNotFound {
            path: path.to_owned(),
        }
        .into(),
        K::PermissionDenied => denied(path),
        K::AlreadyExists => conflict("it already exists").fix(json!({"overwrite": true})),
        K::DirectoryNotEmpty => {
            conflict("the directory is not empty").fix(json!({"recursive": true}))
        }
        K::IsADirectory => conflict("it is a directory"),
        K::NotADirectory => conflict("a part of the path is not a directory"),
        K::InvalidFilename | K::InvalidInput => {
            ApiError::invalid(format!("`{path}` is not a valid path: {e}"))
        }
        _ if e.raw_os_error() == Some(40) => conflict("too many levels of symbolic links"),
        _ => Error::Internal {
            detail: format!("file operation on `{path}`: {e}"),
        }
        .into(),
    }
}

fn over_quota(rule: &str, detail: String) -> ApiError {
    Error::PolicyDenied {
        capability: "fs".to_owned(),
        rule: rule.to_owned(),
        reason: detail,
        fix: None,
    }
    .into()
}

impl Root {
    /// Open `dir` (a session's directory) with its guest path and quotas.
    pub fn open(dir: &Path, guest: &str, quota: u64, max_files: u64) -> Result<Root, ApiError> {
        let dir = cap::open_ambient_dir(dir, cap_primitives::ambient_authority()).map_err(|e| {
            ApiError::from(Error::Internal {
                detail: format!("cannot open the session directory {}: {e}", dir.display()),
            })
        })?;
        Ok(Root {
            dir,
            guest: guest.to_owned(),
            quota,
            max_files,
        })
    }

    /// The path below the root that `path` names (relative, or under the guest path).
    pub(super) fn rel(&self, path: &str) -> PathBuf {
        let stripped = if path == self.guest {
            "."
        } else if let Some(rest) = path
            .strip_prefix(self.guest.as_str())
            .and_then(|r| r.strip_prefix('/'))
        {
            rest
        } else {
            path
        };
        if stripped.is_empty() {
            PathBuf::from(".")
        } else {
            PathBuf::from(stripped)
        }
    }

    /// Bytes and entries the directory holds, counted up to one past the file limit.
    fn usage(&self) -> Result<(u64, u64), ApiError> {
        let mut bytes = 0;
        let mut files = 0;
        self.walk(Path::new("."), true, 0, &mut |_, meta| {
            files += 1;
            if meta.is_file() {
                bytes += meta.len();
            }
            files <= self.max_files
        })
        .map_err(|e| io_error(".", e))?;
        Ok((bytes, files))
    }

    /// Visit every entry below `dir` (not following links); `visit` returns false to stop.
    pub(super) fn walk(
        &self,
        dir: &Path,
        recursive: bool,
        depth: usize,
        visit: &mut dyn FnMut(&Path, &cap::Metadata) -> bool,
    ) -> std::io::Result<bool> {
        if depth > MAX_DEPTH {
            return Ok(true);
        }
        let mut names: Vec<_> = cap::read_dir(&self.dir, dir)?
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        names.sort();
        for name in names {
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
            if recursive && meta.is_dir() && !self.walk(&path, true, depth + 1, visit)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    pub(super) fn stat(&self, path: &str) -> Result<cap::Metadata, ApiError> {
        cap::stat(&self.dir, &self.rel(path), FollowSymlinks::No).map_err(|e| io_error(path, e))
    }

    fn exists(&self, rel: &Path) -> Option<cap::Metadata> {
        cap::stat(&self.dir, rel, FollowSymlinks::No).ok()
    }

    /// Check that adding `bytes` and `files` keeps the directory within its quotas.
    fn reserve(&self, bytes: i64, files: u64) -> Result<(), ApiError> {
        let (used, count) = self.usage()?;
        let after = (used as i64 + bytes).max(0) as u64;
        if bytes > 0 && after > self.quota {
            return Err(over_quota(
                "fs.scratch.quota",
                format!(
                    "the session's directory would hold {after} bytes, over its quota of {}",
                    self.quota
                ),
            ));
        }
        if files > 0 && count + files > self.max_files {
            return Err(over_quota(
                "fs.scratch.max_files",
                format!(
                    "the session's directory would hold more than {} entries",
                    self.max_files
                ),
            ));
        }
        Ok(())
    }

    fn mkdirs(&self, rel: &Path, shown: &str) -> Result<u64, ApiError> {
        let mut made = Vec::new();
        let mut at = PathBuf::new();
        for part in rel.components() {
            at.push(part);
            if matches!(part, Component::CurDir) {
                continue;
            }
            match self.exists(&at) {
                Some(meta) if meta.is_dir() => {}
                Some(_) => {
                    return Err(io_error(
                        shown,
                        std::io::Error::from(std::io::ErrorKind::NotADirectory),
                    ));
                }
                None => made.push(at.clone()),
            }
        }
        if !made.is_empty() {
            self.reserve(0, made.len() as u64)?;
        }
        for dir in &made {
            cap::create_dir(&self.dir, dir, &cap::DirOptions::new())
                .map_err(|e| io_error(shown, e))?;
        }
        Ok(made.len() as u64)
    }

    /// Write `content` to `path`, within the quotas.
    pub fn write(&self, path: &str, content: &[u8], parents: bool) -> Result<Value, ApiError> {
        let rel = self.rel(path);
        if parents && let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.mkdirs(parent, path)?;
        }
        let old = self.exists(&rel);
        if old.as_ref().is_some_and(cap::Metadata::is_dir) {
            return Err(io_error(path, std::io::ErrorKind::IsADirectory.into()));
        }
        let old_len = old.as_ref().map_or(0, cap::Metadata::len);
        self.reserve(
            content.len() as i64 - old_len as i64,
            u64::from(old.is_none()),
        )?;
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        let mut file = cap::open(&self.dir, &rel, &options).map_err(|e| io_error(path, e))?;
        file.write_all(content).map_err(|e| io_error(path, e))?;
        Ok(json!({"bytes_written": content.len(), "path": path}))
    }

    pub(super) fn read_all(
        &self,
        rel: &Path,
        shown: &str,
        max: u64,
    ) -> Result<Option<Vec<u8>>, ApiError> {
        let mut options = OpenOptions::new();
        options.read(true);
        let file = cap::open(&self.dir, rel, &options).map_err(|e| io_error(shown, e))?;
        let meta = file.metadata().map_err(|e| io_error(shown, e))?;
        if meta.is_dir() {
            return Err(io_error(shown, std::io::ErrorKind::IsADirectory.into()));
        }
        if meta.len() > max {
            return Ok(None);
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(shown, e))?;
        Ok((bytes.len() as u64 <= max).then_some(bytes))
    }

    /// Run the operation `op`.
    pub fn op(&self, op: &str, r: &FsRequest) -> Result<Value, ApiError> {
        let path = || {
            r.path.as_deref().ok_or_else(|| {
                ApiError::invalid(format!("fs/{op} needs `path`")).fix(json!({"path": "."}))
            })
        };
        match op {
            "ls" => {
                let path = r.path.as_deref().unwrap_or(".");
                let rel = self.rel(path);
                let mut entries = Vec::new();
                let listing = cap::read_dir(&self.dir, &rel).map_err(|e| io_error(path, e))?;
                for entry in listing.filter_map(Result::ok) {
                    let name = entry.file_name();
                    if let Some(meta) = self.exists(&rel.join(&name)) {
                        entries.push(entry_json(&name.to_string_lossy(), &meta));
                    }
                }
                entries.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
                Ok(json!({ "entries": entries }))
            }
            "stat" => {
                let path = path()?;
                let meta = self.stat(path)?;
                let name = Path::new(path)
                    .file_name()
                    .map_or_else(|| ".".to_owned(), |n| n.to_string_lossy().into_owned());
                Ok(entry_json(&name, &meta))
            }
            "mkdir" => {
                let path = path()?;
                let rel = self.rel(path);
                if r.parents {
                    return Ok(json!({"created": self.mkdirs(&rel, path)? > 0}));
                }
                if self.exists(&rel).is_some() {
                    return Err(io_error(path, std::io::ErrorKind::AlreadyExists.into()));
                }
                self.reserve(0, 1)?;
                cap::create_dir(&self.dir, &rel, &cap::DirOptions::new())
                    .map_err(|e| io_error(path, e))?;
                Ok(json!({"created": true}))
            }
            "write" => {
                let path = path()?;
                let content = match (&r.content, &r.content_b64) {
                    (Some(text), None) => text.as_bytes().to_vec(),
                    (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .map_err(|e| {
                            ApiError::invalid(format!("content_b64 is not base64: {e}"))
                        })?,
                    _ => {
                        return Err(ApiError::invalid(
                            "fs/write needs exactly one of `content` and `content_b64`",
                        ));
                    }
                };
                self.write(path, &content, r.parents)
            }
            "read" => {
                let path = path()?;
                let rel = self.rel(path);
                let bytes = self.read_all(&rel, path, MAX_READ_BYTES)?.ok_or_else(|| {
                    ApiError::invalid(format!(
                        "`{path}` is larger than the {MAX_READ_BYTES} bytes fs/read returns"
                    ))
                })?;
                let meta = self.stat(path)?;
                let mut out = entry_json(
                    &Path::new(path)
                        .file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                    &meta,
                );
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
            "rm" => {
                let path = path()?;
                let rel = self.rel(path);
                if rel == Path::new(".") {
                    return Err(ApiError::invalid(
                        "fs/rm cannot remove the session's directory",
                    ));
                }
                let meta = self.stat(path)?;
                let result = if meta.is_dir() && r.recursive.unwrap_or(false) {
                    cap::remove_dir_all(&self.dir, &rel)
                } else if meta.is_dir() {
                    cap::remove_dir(&self.dir, &rel)
                } else {
                    cap::remove_file(&self.dir, &rel)
                };
                result.map_err(|e| io_error(path, e))?;
                Ok(json!({"removed": true}))
            }
            "mv" => {
                let (Some(src), Some(dst)) = (&r.src, &r.dst) else {
                    return Err(ApiError::invalid("fs/mv needs `src` and `dst`"));
                };
                let (from, to) = (self.rel(src), self.rel(dst));
                self.stat(src)?;
                if !r.overwrite && self.exists(&to).is_some() {
                    return Err(io_error(dst, std::io::ErrorKind::AlreadyExists.into()));
                }
                cap::rename(&self.dir, &from, &self.dir, &to).map_err(|e| io_error(dst, e))?;
                Ok(json!({"moved": true}))
            }
            "grep" => self.grep(r),
            "sed" => self.sed(r),
            other => Err(ApiError::invalid(format!(
                "no file operation `{other}`; use ls, stat, mkdir, write, read, rm, mv, grep or sed"
            ))),
        }
    }
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
