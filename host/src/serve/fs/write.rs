//! The file operations that add to a session's directory: `write`, `mkdir` and `mv`, each
//! within the directory's account (quota, file limit, depth). A write replaces its file whole:
//! the content goes to a new file beside it, is flushed to disk, and is renamed over the old
//! one, and the directory is flushed, so that a crash leaves the old content or the new,
//! never a part (at worst a `.palisade-write-*` file beside it).

use super::{ApiError, Root, conflict, freed_bytes, io_error, refused};
use crate::caps::fs::Ask;
use cap_primitives::fs::{self as cap, FollowSymlinks, OpenOptions};
use serde_json::{Value, json};
use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// The start of the name of a file a write fills before renaming it over its target.
pub const TEMP_PREFIX: &str = ".palisade-write-";

/// The directory `rel` lies in (`.` for a name in the root).
fn parent_of(rel: &Path) -> &Path {
    rel.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Directory levels below the root that `rel` reaches, `..` resolved by name.
fn depth_of(rel: &Path) -> usize {
    rel.components().fold(0usize, |depth, c| match c {
        Component::Normal(_) => depth + 1,
        Component::ParentDir => depth.saturating_sub(1),
        _ => depth,
    })
}

/// Put a file at `rel` below `root` whole: `fill` writes it under a fresh name in `rel`'s
/// directory, it is flushed to disk and renamed over `rel`, and the directory is flushed. If
/// any step fails, the new file is removed and `rel` is as it was.
pub(super) fn replace_in(
    root: &File,
    rel: &Path,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let parent = parent_of(rel);
    let temp = parent.join(format!("{TEMP_PREFIX}{:016x}", rand::random::<u64>()));
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let mut file = cap::open(root, &temp, &options)?;
    let filled = fill(&mut file).and_then(|()| file.sync_all());
    drop(file);
    if let Err(e) = filled.and_then(|()| cap::rename(root, &temp, root, rel)) {
        let _ = cap::remove_file(root, &temp);
        return Err(e);
    }
    // Read-only, not `open_dir`'s `O_PATH` handle, which cannot be flushed.
    let mut read = OpenOptions::new();
    read.read(true)._cap_fs_ext_maybe_dir(true);
    cap::open(root, parent, &read)?.sync_all()
}

impl Root {
    /// Refuse a path deeper than the guest's limit (or, with `below` more levels, a
    /// directory's subtree moved there) or longer than the host allows.
    fn check_place(&self, rel: &Path, below: usize) -> Result<(), ApiError> {
        match self.account.refuse_path(&rel.to_string_lossy(), below) {
            Some(refusal) => Err(refused(refusal)),
            None => Ok(()),
        }
    }

    /// Make the missing directories of `rel`, within the file limit; how many it made.
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
                    return Err(io_error(shown, std::io::ErrorKind::NotADirectory.into()));
                }
                None => made.push(at.clone()),
            }
        }
        let count = made.len() as u64;
        if count > 0 {
            let ask = Ask {
                bytes: 0,
                files: count,
            };
            self.account.reserve(ask).map_err(refused)?;
        }
        for (i, dir) in made.iter().enumerate() {
            if let Err(e) = cap::create_dir(&self.dir, dir, &cap::DirOptions::new()) {
                self.account.release(0, count - i as u64);
                return Err(io_error(shown, e));
            }
        }
        Ok(count)
    }

    /// `path`'s parent must exist unless `parents` makes it: the missing parent's error names
    /// that recovery.
    fn parent_ready(&self, rel: &Path, shown: &str, parents: bool) -> Result<(), ApiError> {
        let parent = parent_of(rel);
        if parents {
            self.mkdirs(parent, shown)?;
            return Ok(());
        }
        // Followed as the write will follow it (within the directory): a link that leads out
        // is refused here as it would be there.
        match cap::stat(&self.dir, parent, FollowSymlinks::Yes) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(io_error(shown, e).fix(json!({"parents": true})))
            }
            Err(e) => Err(io_error(shown, e)),
            Ok(_) => Ok(()),
        }
    }

    /// Write `content` to `path` whole (the old content or the new, never a part), within the
    /// quotas.
    pub fn write(&self, path: &str, content: &[u8], parents: bool) -> Result<Value, ApiError> {
        let rel = self.rel(path);
        self.check_place(&rel, 0)?;
        self.parent_ready(&rel, path, parents)?;
        let old = self.exists(&rel);
        if old.as_ref().is_some_and(cap::Metadata::is_dir) {
            return Err(io_error(path, std::io::ErrorKind::IsADirectory.into()));
        }
        let freed = old.as_ref().map_or(0, freed_bytes);
        let ask = Ask {
            bytes: (content.len() as u64).saturating_sub(freed),
            files: u64::from(old.is_none()),
        };
        self.account.reserve(ask).map_err(refused)?;
        match replace_in(&self.dir, &rel, |file| file.write_all(content)) {
            Ok(()) => {
                self.account
                    .release(freed.saturating_sub(content.len() as u64), 0);
                Ok(json!({"bytes_written": content.len(), "path": path}))
            }
            Err(e) => {
                self.account.release(ask.bytes, ask.files);
                Err(io_error(path, e))
            }
        }
    }

    pub(super) fn mkdir(&self, path: &str, parents: bool) -> Result<Value, ApiError> {
        let rel = self.rel(path);
        self.check_place(&rel, 0)?;
        if parents {
            return Ok(json!({"created": self.mkdirs(&rel, path)? > 0}));
        }
        match self.exists(&rel) {
            // `mkdir -p` of an existing directory succeeds.
            Some(meta) if meta.is_dir() => {
                return Err(
                    conflict(path, "the directory already exists").fix(json!({"parents": true}))
                );
            }
            Some(_) => {
                return Err(conflict(path, "a file of that name exists")
                    .note("remove it with fs/rm, or choose another path"));
            }
            None => {}
        }
        self.parent_ready(&rel, path, false)?;
        self.account
            .reserve(Ask { bytes: 0, files: 1 })
            .map_err(refused)?;
        if let Err(e) = cap::create_dir(&self.dir, &rel, &cap::DirOptions::new()) {
            self.account.release(0, 1);
            return Err(io_error(path, e));
        }
        Ok(json!({"created": true}))
    }

    /// How many levels a directory's subtree reaches below it (up to the depth limit).
    fn subtree_depth(&self, rel: &Path) -> Result<usize, ApiError> {
        let base = depth_of(rel);
        let mut deepest = 0;
        self.walk(rel, true, &mut |p, _| {
            deepest = deepest.max(depth_of(p).saturating_sub(base));
            true
        })?;
        Ok(deepest)
    }

    pub(super) fn mv(&self, r: &super::FsRequest) -> Result<Value, ApiError> {
        let (Some(src), Some(dst)) = (&r.src, &r.dst) else {
            return Err(ApiError::invalid("fs/mv needs `src` and `dst`"));
        };
        let (from, to) = (self.rel(src), self.rel(dst));
        let moved = self.stat(src)?;
        // A directory moved deeper takes its subtree with it.
        let below = if moved.is_dir() && depth_of(&to) > depth_of(&from) {
            self.subtree_depth(&from)?
        } else {
            0
        };
        self.check_place(&to, below)?;
        let existing = self.exists(&to);
        if let (Some(there), false) = (&existing, r.overwrite) {
            let e = conflict(dst, "it already exists");
            return Err(if self.replaceable(&moved, there, &to) {
                e.fix(json!({"overwrite": true}))
            } else {
                e.note("a directory replaces only an empty directory, and a file only a file")
            });
        }
        cap::rename(&self.dir, &from, &self.dir, &to).map_err(|e| io_error(dst, e))?;
        if existing.is_some() {
            // What the replaced entry held is not known without a walk.
            self.account.recount();
        }
        Ok(json!({"moved": true}))
    }

    /// Whether a rename of `moved` may replace `there` (at `to`): a file a file, a directory
    /// an empty directory.
    fn replaceable(&self, moved: &cap::Metadata, there: &cap::Metadata, to: &Path) -> bool {
        match (moved.is_dir(), there.is_dir()) {
            (false, false) => true,
            (true, true) => cap::read_dir(&self.dir, to).is_ok_and(|mut d| d.next().is_none()),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(name: &str) -> (PathBuf, File) {
        let dir = std::env::temp_dir().join(format!("palisade-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = cap::open_ambient_dir(&dir, cap_primitives::ambient_authority()).unwrap();
        (dir, file)
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_write_that_fails_midway_leaves_the_old_content_and_no_temporary_file() {
        let (dir, handle) = root("replace");
        std::fs::write(dir.join("f.txt"), "old content").unwrap();
        let failed = replace_in(&handle, Path::new("f.txt"), |file| {
            file.write_all(b"half of the ne")?;
            Err(std::io::Error::other("the disk went away"))
        });
        assert_eq!(failed.unwrap_err().to_string(), "the disk went away");
        assert_eq!(
            std::fs::read_to_string(dir.join("f.txt")).unwrap(),
            "old content"
        );
        assert_eq!(names(&dir), ["f.txt"]);
        replace_in(&handle, Path::new("f.txt"), |file| file.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("f.txt")).unwrap(), "new");
        assert_eq!(names(&dir), ["f.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn depths_resolve_dots_by_name() {
        assert_eq!(depth_of(Path::new("a/b/c")), 3);
        assert_eq!(depth_of(Path::new("./a/../b")), 1);
        assert_eq!(parent_of(Path::new("a.txt")), Path::new("."));
        assert_eq!(parent_of(Path::new("a/b.txt")), Path::new("a"));
    }
}
