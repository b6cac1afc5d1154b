//! Per-call scratch directories (`[fs.scratch]`): created for one call in memory-backed storage
//! when the host has it (`/dev/shm`), else the system's temp folder; seeded by copying the
//! policy's seed files; removed when the call's state is dropped.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Seeds larger than this are refused: they are copied for every call.
const MAX_SEED_BYTES: u64 = 256 << 20;

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
    /// A new, empty directory, seeded from `seed`.
    pub fn create(seed: &[PathBuf]) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "palisade-scratch-{}-{}-{:08x}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            rand::random::<u32>()
        );
        let path = base().join(name);
        // Only this process's user may look inside.
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
            .create(&path)?;
        let dir = ScratchDir { path };
        let mut budget = MAX_SEED_BYTES;
        for source in seed {
            let meta = std::fs::symlink_metadata(source)?;
            if meta.is_dir() {
                copy_dir(source, &dir.path, &mut budget)?;
            } else if meta.is_file() {
                let name = source
                    .file_name()
                    .ok_or_else(|| io::Error::other("a seed has no name"))?;
                copy_file(source, &dir.path.join(name), meta.len(), &mut budget)?;
            }
        }
        Ok(dir)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn copy_file(from: &Path, to: &Path, len: u64, budget: &mut u64) -> io::Result<()> {
    *budget = budget
        .checked_sub(len)
        .ok_or_else(|| io::Error::other(format!("the seed is over {MAX_SEED_BYTES} bytes")))?;
    std::fs::copy(from, to)?;
    Ok(())
}

/// Copy a directory's contents; symbolic links are skipped, never followed.
fn copy_dir(from: &Path, to: &Path, budget: &mut u64) -> io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            std::fs::create_dir(&target)?;
            copy_dir(&entry.path(), &target, budget)?;
        } else if kind.is_file() {
            copy_file(&entry.path(), &target, entry.metadata()?.len(), budget)?;
        }
    }
    Ok(())
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
