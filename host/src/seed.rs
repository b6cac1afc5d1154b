//! The seed of a scratch directory (`[fs.scratch] seed`): walked once when the policy loads, to
//! check it can be copied, and copied into each call's scratch directory. Symbolic links are
//! skipped, never followed; FIFOs, sockets, devices and pseudo file systems are refused.

use std::io;
use std::path::{Path, PathBuf};

/// Seeds larger than this are refused: they are copied for every call.
const MAX_SEED_BYTES: u64 = 256 << 20;

/// What a seed holds: bytes in its regular files, and its entries (files and directories).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Seeded {
    pub bytes: u64,
    pub files: u64,
}

/// Why a seed cannot be copied: which one (its index in `seed`), and what is wrong.
#[derive(Debug)]
pub(crate) struct SeedError {
    pub index: usize,
    pub message: String,
}

/// How a seed is walked: with its files copied into a directory, or only looked at.
struct Walk<'a> {
    target: Option<&'a Path>,
    max_files: u64,
    seeded: Seeded,
}

impl Walk<'_> {
    fn count(&mut self, bytes: u64) -> io::Result<()> {
        self.seeded.files += 1;
        if self.seeded.files > self.max_files {
            return Err(io::Error::other(format!(
                "the seed holds more than {} files (fs.scratch.max_files)",
                self.max_files
            )));
        }
        self.seeded.bytes = self.seeded.bytes.saturating_add(bytes);
        if self.seeded.bytes > MAX_SEED_BYTES {
            return Err(io::Error::other(format!(
                "the seed is over {MAX_SEED_BYTES} bytes"
            )));
        }
        Ok(())
    }

    /// One seed: a directory's contents, or a file under its own name.
    fn seed(&mut self, source: &Path) -> io::Result<()> {
        refuse_pseudo_fs(source)?;
        let meta = std::fs::symlink_metadata(source)?;
        if meta.is_dir() {
            return self.dir(source, self.target.map(Path::to_path_buf).as_deref());
        }
        let name = source
            .file_name()
            .ok_or_else(|| io::Error::other("a seed has no name"))?;
        let to = self.target.map(|t| t.join(name));
        self.entry(source, &meta, to.as_deref())
    }

    fn entry(
        &mut self,
        from: &Path,
        meta: &std::fs::Metadata,
        to: Option<&Path>,
    ) -> io::Result<()> {
        let kind = meta.file_type();
        if kind.is_symlink() {
            // Never followed: a link could lead anywhere on the host.
            return Ok(());
        }
        if kind.is_dir() {
            self.count(0)?;
            if let Some(to) = to {
                std::fs::create_dir(to)?;
            }
            return self.dir(from, to);
        }
        if !kind.is_file() {
            return Err(io::Error::other(format!(
                "{} is not a regular file or directory (a FIFO, socket or device)",
                from.display()
            )));
        }
        self.count(meta.len())?;
        match to {
            Some(to) => std::fs::copy(from, to).map(drop),
            // Only looking: the file must at least open for reading.
            None => std::fs::File::open(from).map(drop),
        }
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", from.display())))
    }

    /// A directory's contents; symbolic links are skipped, never followed.
    fn dir(&mut self, from: &Path, to: Option<&Path>) -> io::Result<()> {
        let entries = std::fs::read_dir(from)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", from.display())))?;
        for entry in entries {
            let entry = entry?;
            let meta = entry.metadata()?;
            let target = to.map(|t| t.join(entry.file_name()));
            self.entry(&entry.path(), &meta, target.as_deref())?;
        }
        Ok(())
    }
}

/// `/proc` and `/sys` report sizes of 0 for files that are not empty, and hold files that
/// cannot be read: no seed comes from them.
fn refuse_pseudo_fs(path: &Path) -> io::Result<()> {
    let kind = rustix::fs::statfs(path).map_err(io::Error::from)?.f_type;
    const SYSFS_MAGIC: i64 = 0x6265_6572;
    let magic = kind as i64;
    if magic == rustix::fs::PROC_SUPER_MAGIC || magic == SYSFS_MAGIC {
        return Err(io::Error::other(format!(
            "{} is on a pseudo file system (/proc, /sys), which cannot be copied",
            path.display()
        )));
    }
    Ok(())
}

/// Copy every seed into `target` (a call's new scratch directory); what they put there.
pub(crate) fn copy_seed(
    seed: &[PathBuf],
    target: &Path,
    max_files: u64,
) -> Result<Seeded, SeedError> {
    let mut walk = Walk {
        target: Some(target),
        max_files,
        seeded: Seeded::default(),
    };
    for (index, source) in seed.iter().enumerate() {
        walk.seed(source).map_err(|e| SeedError {
            index,
            message: format!("cannot copy `{}`: {e}", source.display()),
        })?;
    }
    Ok(walk.seeded)
}

/// Check that every seed can be copied (policy load): regular files and directories only, no
/// more than `max_files` entries and 256 MiB in all, readable.
pub(crate) fn check_seed(seed: &[PathBuf], max_files: u64) -> Result<(), SeedError> {
    let mut walk = Walk {
        target: None,
        max_files,
        seeded: Seeded::default(),
    };
    for (index, source) in seed.iter().enumerate() {
        walk.seed(source).map_err(|e| SeedError {
            index,
            message: format!(
                "cannot copy `{}` into each call's scratch: {e}",
                source.display()
            ),
        })?;
    }
    Ok(())
}
