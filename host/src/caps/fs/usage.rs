//! What a writable directory holds, measured with `*at` calls relative to directory handles
//! (`openat`, `fstatat`, `getdents`), so that no path is ever longer than one name and a tree
//! of any path length can be measured; and where a path below such a directory may go.

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

/// Most directory levels a script may make below a writable directory's root. The walk holds
/// one directory handle per level it is in.
pub(crate) const MAX_DEPTH: usize = 128;
/// The walk gives up (and the directory counts as full) below this many levels, which only a
/// tree made outside the sandbox can reach: each level holds a file descriptor.
const MAX_WALK_DEPTH: usize = 512;
/// `PATH_MAX` on Linux, terminating NUL included.
const PATH_MAX: usize = 4096;

/// Bytes in regular files and entries of every kind (files, directories, links) below a root.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Measure {
    pub bytes: u64,
    pub files: u64,
}

/// Measure the tree at `root`, not following symbolic links, stopping once it has seen more
/// than `max_files` entries (the result then has `files == max_files + 1`), so that the walk
/// costs at most that many `fstatat` calls. `None` when part of it cannot be read.
pub(crate) fn measure(root: &Path, max_files: u64) -> Option<Measure> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(rustix::fs::CWD, root, flags, Mode::empty()).ok()?;
    measure_fd(fd, max_files)
}

fn measure_fd(root: OwnedFd, max_files: u64) -> Option<Measure> {
    let mut total = Measure::default();
    let mut stack = vec![Dir::new(root).ok()?];
    loop {
        let depth = stack.len();
        let Some(dir) = stack.last_mut() else {
            break;
        };
        let Some(entry) = dir.next() else {
            stack.pop();
            continue;
        };
        let entry = entry.ok()?;
        let name = entry.file_name();
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        total.files += 1;
        if total.files > max_files {
            return Some(total);
        }
        let parent = dir.fd().ok()?;
        let stat = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => total.bytes = total.bytes.saturating_add(stat.st_size as u64),
            FileType::Directory => {
                if depth >= MAX_WALK_DEPTH {
                    return None;
                }
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let child = rustix::fs::openat(parent.as_fd(), name, flags, Mode::empty()).ok()?;
                stack.push(Dir::new(child).ok()?);
            }
            _ => {}
        }
    }
    Some(total)
}

/// Where a path below a writable directory's root lies: `..` and `.` resolved by name, as
/// cap-std resolves them (it refuses a path that climbs above the root).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Place {
    parts: Vec<String>,
}

impl Place {
    /// `path` taken from this place; `None` when it climbs above the root or is absolute.
    pub fn join(&self, path: &str) -> Option<Place> {
        if path.starts_with('/') {
            return None;
        }
        let mut parts = self.parts.clone();
        for part in path.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop()?;
                }
                name => parts.push(name.to_owned()),
            }
        }
        Some(Place { parts })
    }

    /// Directory levels below the root (a file directly in it is at depth 1).
    pub fn depth(&self) -> usize {
        self.parts.len()
    }

    /// Bytes of the path relative to the root.
    pub fn len(&self) -> usize {
        self.parts
            .iter()
            .map(|p| p.len() + 1)
            .sum::<usize>()
            .saturating_sub(1)
    }

    /// Why nothing may be made here below the root at `host`: deeper than [`MAX_DEPTH`], or a
    /// host path (root, `/`, this path) longer than `PATH_MAX`.
    pub fn too_deep(&self, host: &Path) -> Option<String> {
        let host_len = host.as_os_str().len() + 1;
        if self.depth() > MAX_DEPTH {
            Some(format!(
                "the path is {} levels deep; at most {MAX_DEPTH} are allowed",
                self.depth()
            ))
        } else if host_len + self.len() >= PATH_MAX {
            Some(format!(
                "the path is {} bytes long; at most {} are allowed here",
                self.len(),
                PATH_MAX - 1 - host_len
            ))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_resolve_dots() {
        let root = Place::default();
        let p = root.join("a/./b/../c").unwrap();
        assert_eq!((p.depth(), p.len()), (2, 3));
        assert_eq!(p.join(".."), Some(root.join("a").unwrap()));
        assert_eq!(root.join(".."), None);
        assert_eq!(root.join("/etc"), None);
        let deep = root.join(&"d/".repeat(MAX_DEPTH + 1)).unwrap();
        assert!(deep.too_deep(Path::new("/tmp/x")).is_some());
        let long = root.join(&"x".repeat(4090)).unwrap();
        assert!(long.too_deep(Path::new("/tmp/x")).is_some());
        assert!(
            root.join("a/b")
                .unwrap()
                .too_deep(Path::new("/tmp/x"))
                .is_none()
        );
    }

    #[test]
    fn measures_a_tree_deeper_than_path_max() {
        let root = std::env::temp_dir().join(format!("palisade-usage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // 40 levels of 200-byte names: 8 KB of path, past PATH_MAX; made with *at calls.
        let name = "n".repeat(200);
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let mut fd = rustix::fs::openat(rustix::fs::CWD, &root, flags, Mode::empty()).unwrap();
        for _ in 0..40 {
            rustix::fs::mkdirat(&fd, name.as_str(), Mode::RWXU).unwrap();
            fd = rustix::fs::openat(&fd, name.as_str(), flags, Mode::empty()).unwrap();
        }
        let file = rustix::fs::openat(
            &fd,
            "f",
            OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC,
            Mode::RUSR | Mode::WUSR,
        )
        .unwrap();
        rustix::io::write(&file, b"12345").unwrap();
        assert_eq!(
            measure(&root, 1000),
            Some(Measure {
                bytes: 5,
                files: 41
            })
        );
        assert_eq!(
            measure(&root, 10).unwrap().files,
            11,
            "stops past the limit"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_walk_of_a_full_default_limit_is_short() {
        let root = std::env::temp_dir().join(format!("palisade-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in 0..10 {
            std::fs::create_dir_all(root.join(d.to_string())).unwrap();
            for f in 0..999 {
                std::fs::write(root.join(format!("{d}/{f}")), "x").unwrap();
            }
        }
        let started = std::time::Instant::now();
        let measured = measure(&root, 10_000).unwrap();
        let took = started.elapsed();
        println!("walked {} entries in {took:?}", measured.files);
        assert_eq!(measured.files, 10 * 1000);
        assert!(took < std::time::Duration::from_secs(1), "{took:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
