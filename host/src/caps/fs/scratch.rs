//! Per-call scratch directories (`[fs.scratch]`): created for one call in memory-backed storage
//! when the host has it (`/dev/shm`), else the system's temp folder; seeded by copying the
//! policy's seed files; removed when the call's state is dropped, and, when a process was
//! killed before it could remove its own, by the next [`sweep_stale`] (each
//! `Palisade::builder().build()`).

use crate::seed::{SeedError, Seeded, copy_seed};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

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
        let seeded = copy_seed(seed, &dir.path, max_files)?;
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
