//! Per-call scratch directories (`[fs.scratch]`): created for one call in memory-backed storage
//! when the host has it (`/dev/shm`), else the system's temp folder; seeded by copying the
//! policy's seed files; removed when the call's state is dropped, and, when a process was
//! killed before it could remove its own, by the next [`sweep_stale`] (each
//! `Palisade::builder().build()`).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Seeds larger than this are refused: they are copied for every call.
const MAX_SEED_BYTES: u64 = 256 << 20;

/// Every scratch directory's name starts with this, then the creating process's id.
const PREFIX: &str = "palisade-scratch-";

/// A directory that is removed when dropped.
pub(crate) struct ScratchDir {
    path: PathBuf,
}

fn base() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

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

impl ScratchDir {
    /// A new, empty directory, seeded from `seed` (at most `max_files` entries), and what the
    /// seed put in it.
    pub fn create(seed: &[PathBuf], max_files: u64) -> Result<(Self, Seeded), SeedError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{PREFIX}{}-{}-{:08x}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            rand::random::<u32>()
        );
        let path = base().join(name);
        // Only this process's user may look inside.
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
            .create(&path)
            .map_err(|e| SeedError {
                index: usize::MAX,
                message: format!("cannot create {}: {e}", path.display()),
            })?;
        let dir = ScratchDir { path };
        let mut walk = Walk {
            target: Some(&dir.path),
            max_files,
            seeded: Seeded::default(),
        };
        for (index, source) in seed.iter().enumerate() {
            walk.seed(source).map_err(|e| SeedError {
                index,
                message: format!("cannot copy `{}`: {e}", source.display()),
            })?;
        }
        let seeded = walk.seeded;
        Ok((dir, seeded))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            tracing::warn!(
                "cannot remove the scratch directory {}: {e}",
                self.path.display()
            );
        }
    }
}

/// Remove the scratch directories that processes of this user left behind when they were
/// killed (`kill -9`) before their calls ended: those whose process no longer runs. A
/// directory of a live process, or of another user, is left alone; without `/proc`, all are.
/// Returns how many were removed.
pub(crate) fn sweep_stale() -> usize {
    sweep_stale_in(&base())
}

fn sweep_stale_in(base: &Path) -> usize {
    use std::os::unix::fs::MetadataExt;
    if !Path::new("/proc/self").exists() {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let me = rustix::process::geteuid().as_raw();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let ours = entry.metadata().is_ok_and(|m| m.is_dir() && m.uid() == me);
        if !ours || pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        match std::fs::remove_dir_all(entry.path()) {
            Ok(()) => removed += 1,
            Err(e) => tracing::warn!(
                "cannot remove the stale scratch directory {}: {e}",
                entry.path().display()
            ),
        }
    }
    removed
}
