//! Where a heap image's bytes live: in memory of their own ([`HeapBytes::Owned`]), or mapped
//! privately from the heap file a session woke from ([`HeapBytes::Mapped`]), whose blocks a
//! restore then maps into the instance's linear memory as well rather than copying them.
//!
//! A mapped heap is an anonymous reservation of the heap's size with, mapped over it, the
//! blocks of a fresh instance's memory above the stack (a sealed memfd made once per
//! runtime, [`MapBase`]) and then each run of the file's blocks. Every mapping is
//! `MAP_PRIVATE`: the pages are the page cache's until something writes them, and a write
//! goes to a copy of the writer's own, never to the file.

use super::image::BLOCK;
use std::fs::File;
use std::sync::Arc;

/// Mappings one heap may take (the image's and the instance's each): past this many runs of
/// blocks, a heap is copied instead. Each mapping is an entry of the process's table, which
/// Linux caps (`vm.max_map_count`, 65,530 by default) for all sessions together.
pub(crate) const MAX_MAPPINGS: usize = 64;

/// A run of blocks in a heap file: `count` blocks from block `block` of the heap (counted from
/// the stack top), stored at `offset` in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub block: u32,
    pub count: u32,
    pub offset: u64,
}

impl Run {
    /// The heap's bytes the run covers.
    pub fn span(&self) -> std::ops::Range<usize> {
        self.block as usize * BLOCK..(self.block + self.count) as usize * BLOCK
    }
}

/// A checked heap file, open, and where its blocks are.
#[derive(Debug)]
pub(crate) struct HeapFile {
    pub file: File,
    pub runs: Vec<Run>,
}

/// A fresh instance's memory above its stack, in a sealed memfd: what a mapped heap shows
/// where the file has no block.
#[derive(Debug)]
pub(crate) struct MapBase {
    file: File,
    len: usize,
}

impl MapBase {
    /// `above_stack` in a memfd sealed against any change.
    pub fn new(above_stack: &[u8]) -> std::io::Result<MapBase> {
        use rustix::fs::{MemfdFlags, SealFlags};
        use std::io::Write;
        let flags = MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING;
        let mut file = File::from(rustix::fs::memfd_create("palisade-live-base", flags)?);
        file.write_all(above_stack)?;
        let seals = SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE | SealFlags::SEAL;
        rustix::fs::fcntl_add_seals(&file, seals)?;
        Ok(MapBase {
            file,
            len: above_stack.len(),
        })
    }
}

/// A heap's bytes (the memory from the stack top up).
pub(crate) enum HeapBytes {
    Owned(Vec<u8>),
    Mapped(Mapped),
}

pub(crate) struct Mapped {
    map: memmap2::MmapMut,
    /// The file the blocks are mapped from, until anything borrows them mutably: from then on
    /// they may differ from it, and a restore copies them.
    file: Option<Arc<HeapFile>>,
    /// Blocks written over the file's since it was mapped ([`HeapBytes::patch`]): a restore
    /// maps the file, then writes these.
    patched: Vec<u32>,
}

impl HeapBytes {
    /// The heap of `len` bytes that `file`'s runs make over `base`, mapped; `None` when the
    /// runs are too many, or the system's pages are not blocks.
    #[allow(unsafe_code)]
    pub fn mapped(len: usize, file: Arc<HeapFile>, base: &MapBase) -> Option<HeapBytes> {
        if file.runs.len() > MAX_MAPPINGS || rustix::param::page_size() != BLOCK || len == 0 {
            return None;
        }
        let mut map = memmap2::MmapOptions::new().len(len).map_anon().ok()?;
        let at = map.as_mut_ptr();
        let base_run = Run {
            block: 0,
            count: (base.len.min(len) / BLOCK) as u32,
            offset: 0,
        };
        // SAFETY: `map` is this heap's own anonymous mapping of `len` bytes, not borrowed; the
        // base run and the file's runs (checked by `HeapImage::open`) lie within it.
        unsafe {
            overlay(at, &base.file, &[base_run]).ok()?;
            overlay(at, &file.file, &file.runs).ok()?;
        }
        Some(HeapBytes::Mapped(Mapped {
            map,
            file: Some(file),
            patched: Vec::new(),
        }))
    }

    /// The file the heap is mapped from, while its bytes are still that file's.
    pub fn file(&self) -> Option<&Arc<HeapFile>> {
        match self {
            HeapBytes::Mapped(mapped) => mapped.file.as_ref(),
            HeapBytes::Owned(_) => None,
        }
    }

    /// The blocks written over the mapped file's ([`HeapBytes::patch`]), in order, once each.
    pub fn patched(&self) -> &[u32] {
        match self {
            HeapBytes::Mapped(mapped) => &mapped.patched,
            HeapBytes::Owned(_) => &[],
        }
    }

    /// Write block `i` (`bytes`, a block or less at the heap's end): a heap still mapped from
    /// its file stays so, the block counted among those written over it.
    #[cfg(feature = "serve")]
    pub fn patch(&mut self, i: u32, bytes: &[u8]) {
        let at = i as usize * BLOCK;
        match self {
            HeapBytes::Mapped(mapped) if mapped.file.is_some() => {
                mapped.map[at..at + bytes.len()].copy_from_slice(bytes);
                if let Err(place) = mapped.patched.binary_search(&i) {
                    mapped.patched.insert(place, i);
                }
            }
            _ => self[at..at + bytes.len()].copy_from_slice(bytes),
        }
    }

    /// Append `bytes` (the memory grew): a mapped heap becomes a copy first.
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let HeapBytes::Mapped(mapped) = self {
            let mut owned = Vec::with_capacity(mapped.map.len() + bytes.len());
            owned.extend_from_slice(&mapped.map);
            *self = HeapBytes::Owned(owned);
        }
        if let HeapBytes::Owned(owned) = self {
            owned.extend_from_slice(bytes);
        }
    }
}

/// Map `runs` of `file` privately over the memory at `at`, where the heap's block 0 goes: one
/// mapping per run, read-write, whose writes go to pages of this process's own.
///
/// # Safety
///
/// Every run's span from `at` must lie within a mapping this process owns, that no reference
/// borrows while this runs, and whose owner neither relies on its old content nor remaps it;
/// `file` must not change while it is mapped.
#[allow(unsafe_code)]
pub(crate) unsafe fn overlay(at: *mut u8, file: &File, runs: &[Run]) -> std::io::Result<()> {
    use rustix::mm::{MapFlags, ProtFlags};
    for run in runs.iter().filter(|run| run.count > 0) {
        let span = run.span();
        // SAFETY: the caller's: the span lies in a mapping it owns and lends to this call.
        let placed = unsafe {
            rustix::mm::mmap(
                at.add(span.start).cast(),
                span.len(),
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE | MapFlags::FIXED,
                file,
                run.offset,
            )?
        };
        debug_assert_eq!(placed, at.wrapping_add(span.start).cast());
    }
    Ok(())
}

impl std::ops::Deref for HeapBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            HeapBytes::Owned(owned) => owned,
            HeapBytes::Mapped(mapped) => &mapped.map,
        }
    }
}

impl std::ops::DerefMut for HeapBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            HeapBytes::Owned(owned) => owned,
            HeapBytes::Mapped(mapped) => {
                mapped.file = None;
                &mut mapped.map
            }
        }
    }
}

/// A copy owns its bytes: the file's pages are shared through the `Arc` that holds a heap,
/// not by cloning it.
impl Clone for HeapBytes {
    fn clone(&self) -> HeapBytes {
        HeapBytes::Owned(self.to_vec())
    }
}

impl PartialEq for HeapBytes {
    fn eq(&self, other: &HeapBytes) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for HeapBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            HeapBytes::Owned(_) => "owned",
            HeapBytes::Mapped(_) => "mapped",
        };
        write!(f, "HeapBytes({kind}, {} bytes)", self.len())
    }
}
