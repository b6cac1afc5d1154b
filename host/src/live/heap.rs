//! Where a heap image's bytes live: in memory of their own ([`HeapBytes::Owned`]: a memfd of
//! the heap's own, mapped shared, where the system gives one), or mapped privately from a file
//! ([`HeapBytes::Mapped`]): the heap file a session woke from, or an owned heap's memfd frozen
//! when a fork shares it ([`HeapBytes::freeze`]). A restore maps such a file's blocks into the
//! instance's linear memory as well rather than copying them.
//!
//! A mapped heap is an anonymous reservation of the heap's size with, mapped over it, the
//! blocks of a fresh instance's memory above the stack (a sealed memfd made once per
//! runtime, [`MapBase`]) and then each run of the file's blocks. Every mapping is
//! `MAP_PRIVATE`: the pages are the page cache's until something writes them, and a write
//! goes to a copy of the writer's own, never to the file.

use super::image::{BLOCK, Blocks};
use std::fs::File;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// A checked heap file (or a frozen heap's sealed memfd), open, and where its blocks are.
#[derive(Debug)]
pub(crate) struct HeapFile {
    pub file: File,
    pub runs: Vec<Run>,
    /// A frozen heap's count among the memfds heaps hold ([`FdSlot`]).
    pub slot: Option<FdSlot>,
}

/// Memfds the heaps of this process hold: at most a quarter of its file descriptors (its soft
/// `RLIMIT_NOFILE`), so that heaps never take those its sockets and files need; past that, a
/// heap is a vector.
static HEAP_FDS: AtomicUsize = AtomicUsize::new(0);

/// One of [`HEAP_FDS`], given back when dropped.
#[derive(Debug)]
pub(crate) struct FdSlot(());

impl FdSlot {
    fn take() -> Option<FdSlot> {
        static ALLOWED: std::sync::LazyLock<usize> = std::sync::LazyLock::new(|| {
            let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
            limit.map_or(usize::MAX, |n| usize::try_from(n / 4).unwrap_or(usize::MAX))
        });
        HEAP_FDS
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < *ALLOWED).then_some(n + 1)
            })
            .ok()
            .map(|_| FdSlot(()))
    }
}

impl Drop for FdSlot {
    fn drop(&mut self) {
        HEAP_FDS.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A fresh instance's memory above its stack, in a sealed memfd: what a mapped heap shows
/// where the file has no block, and a fresh session's heap ([`MapBase::heap`]).
#[derive(Clone, Debug)]
pub(crate) struct MapBase {
    /// The memfd, as a file of one run of its whole blocks.
    file: Arc<HeapFile>,
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
        let runs = vec![Run {
            block: 0,
            count: (above_stack.len() / BLOCK) as u32,
            offset: 0,
        }];
        Ok(MapBase {
            file: Arc::new(HeapFile {
                file,
                runs,
                slot: None,
            }),
            len: above_stack.len(),
        })
    }

    /// The memfd, as a heap file.
    #[cfg(test)]
    pub fn file(&self) -> &Arc<HeapFile> {
        &self.file
    }

    /// A fresh instance's heap of `len` bytes, mapped from the memfd (nothing copied, and a
    /// restore maps it too); `None` unless it is this base's whole blocks.
    pub fn heap(&self, len: usize) -> Option<HeapBytes> {
        if len != self.len || !len.is_multiple_of(BLOCK) {
            return None;
        }
        HeapBytes::mapped(len, self.file.clone(), None)
    }
}

/// A heap's bytes (the memory from the stack top up).
pub(crate) enum HeapBytes {
    Owned(Owned),
    Mapped(Mapped),
}

/// A heap's bytes of its own: in a memfd mapped shared, which a fork freezes and shares
/// rather than copying it ([`HeapBytes::freeze`]); in a vector where the system gives no
/// memfd, or heaps hold their share of the process's file descriptors ([`FdSlot`]).
pub(crate) enum Owned {
    Memfd {
        file: File,
        map: memmap2::MmapMut,
        len: usize,
        slot: FdSlot,
    },
    Vec(Vec<u8>),
}

impl Owned {
    /// A copy of `bytes`.
    pub fn new(bytes: &[u8]) -> Owned {
        match Owned::memfd(bytes.len()) {
            Ok(mut owned) => {
                owned.copy_from_slice(bytes);
                owned
            }
            Err(_) => Owned::Vec(bytes.to_vec()),
        }
    }

    #[allow(unsafe_code)]
    fn memfd(len: usize) -> std::io::Result<Owned> {
        use rustix::fs::MemfdFlags;
        let slot = FdSlot::take().ok_or(std::io::ErrorKind::QuotaExceeded)?;
        let flags = MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING;
        let file = File::from(rustix::fs::memfd_create("palisade-live-heap", flags)?);
        // Whole blocks, so that a frozen heap maps as one run.
        file.set_len(len.next_multiple_of(BLOCK).max(BLOCK) as u64)?;
        // SAFETY: the memfd is this heap's alone, and only this mapping writes it; it is
        // frozen (sealed against writes) before any other maps it.
        let map = unsafe { memmap2::MmapMut::map_mut(&file)? };
        // A child process (fork(2)) would share the mapping, and write this process's heap:
        // it gets none (a child touching it faults).
        map.advise(memmap2::Advice::DontFork)?;
        Ok(Owned::Memfd {
            file,
            map,
            len,
            slot,
        })
    }

    /// Append `bytes`: the memfd grows in place (its mapping moved, not copied), or the
    /// bytes go to a vector where it cannot.
    #[allow(unsafe_code)]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        if let Owned::Memfd { file, map, len, .. } = self {
            let end = *len + bytes.len();
            let size = end.next_multiple_of(BLOCK).max(BLOCK);
            let grown = (size <= map.len()).then_some(()).map_or_else(
                || {
                    file.set_len(size as u64)?;
                    // SAFETY: the mapping is this heap's alone and no reference into it is
                    // held (`self` is borrowed mutably); the file now has `size` bytes.
                    unsafe { map.remap(size, memmap2::RemapOptions::new().may_move(true)) }
                },
                Ok,
            );
            if grown.is_ok() {
                map[*len..end].copy_from_slice(bytes);
                *len = end;
                return;
            }
            *self = Owned::Vec(map[..*len].to_vec());
        }
        if let Owned::Vec(vec) = self {
            vec.extend_from_slice(bytes);
        }
    }

    /// The memfd mapped privately as a file of one run, then sealed against any change; the
    /// heap as it was where it is a vector or cannot be mapped.
    fn freeze(self) -> Result<HeapBytes, Owned> {
        let Owned::Memfd {
            file,
            map,
            len,
            slot,
        } = self
        else {
            return Err(self);
        };
        let runs = vec![Run {
            block: 0,
            count: len.div_ceil(BLOCK) as u32,
            offset: 0,
        }];
        let slot = Some(slot);
        let file = Arc::new(HeapFile { file, runs, slot });
        let Some(mapped) = HeapBytes::mapped(len, file.clone(), None) else {
            return Err(match Arc::try_unwrap(file) {
                Ok(HeapFile {
                    file,
                    slot: Some(slot),
                    ..
                }) => Owned::Memfd {
                    file,
                    map,
                    len,
                    slot,
                },
                _ => Owned::Vec(map[..len].to_vec()),
            });
        };
        // The only writable mapping goes (sealing against writes needs it gone): nothing
        // writes the file from now on, and the seals make the kernel hold to that. Unmapping
        // a populated mapping costs about 1 ms for 16 MiB: where a runtime runs this, one of
        // its blocking threads does it, and the fork does not wait.
        let seal = move || {
            use rustix::fs::SealFlags;
            drop(map);
            let seals = SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE | SealFlags::SEAL;
            // Refused only while a writable mapping is left (none is): nothing writes the
            // file either way.
            let _ = rustix::fs::fcntl_add_seals(&file.file, seals);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(seal)),
            Err(_) => seal(),
        }
        Ok(mapped)
    }
}

impl std::ops::Deref for Owned {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Owned::Memfd { map, len, .. } => &map[..*len],
            Owned::Vec(vec) => vec,
        }
    }
}

impl std::ops::DerefMut for Owned {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            Owned::Memfd { map, len, .. } => &mut map[..*len],
            Owned::Vec(vec) => vec,
        }
    }
}

pub(crate) struct Mapped {
    map: memmap2::MmapMut,
    /// The file the blocks are mapped from, until anything borrows them mutably: from then on
    /// they may differ from it, and a restore copies them.
    file: Option<Arc<HeapFile>>,
    /// What the file's runs were mapped over (`None`: they cover the whole heap).
    base: Option<MapBase>,
    /// Blocks written over the file's since it was mapped ([`HeapBytes::patch`]): a restore
    /// maps the file, then writes these.
    patched: Blocks,
}

impl HeapBytes {
    /// A heap of its own holding `bytes`.
    pub fn owned(bytes: &[u8]) -> HeapBytes {
        HeapBytes::Owned(Owned::new(bytes))
    }

    /// The heap of `len` bytes that `file`'s runs make over `base` (over zeros without one),
    /// mapped; `None` when the runs are too many, or the system's pages are not blocks.
    #[allow(unsafe_code)]
    pub fn mapped(len: usize, file: Arc<HeapFile>, base: Option<&MapBase>) -> Option<HeapBytes> {
        if file.runs.len() > MAX_MAPPINGS || rustix::param::page_size() != BLOCK || len == 0 {
            return None;
        }
        let mut map = memmap2::MmapOptions::new().len(len).map_anon().ok()?;
        let at = map.as_mut_ptr();
        // SAFETY: `map` is this heap's own anonymous mapping of `len` bytes (whole pages), not
        // borrowed; the base run and the file's runs (checked by `HeapImage::open`, or a
        // frozen heap's one run of its length) lie within it.
        unsafe {
            if let Some(base) = base {
                let base_run = Run {
                    block: 0,
                    count: (base.len.min(len) / BLOCK) as u32,
                    offset: 0,
                };
                overlay(at, &base.file.file, &[base_run]).ok()?;
            }
            overlay(at, &file.file, &file.runs).ok()?;
        }
        Some(HeapBytes::Mapped(Mapped {
            map,
            file: Some(file),
            base: base.cloned(),
            patched: Blocks::default(),
        }))
    }

    /// Make the heap shareable without a copy: a heap of its own in a memfd becomes that
    /// memfd, sealed, mapped privately (a fork and its parent then each write pages of their
    /// own, and a restore maps the memfd). A mapped heap already is; a vector stays one.
    pub fn freeze(&mut self) {
        if let HeapBytes::Owned(owned) = self {
            let owned = std::mem::replace(owned, Owned::Vec(Vec::new()));
            *self = owned.freeze().unwrap_or_else(HeapBytes::Owned);
        }
    }

    /// The file the heap is mapped from, while its bytes are still that file's.
    pub fn file(&self) -> Option<&Arc<HeapFile>> {
        match self {
            HeapBytes::Mapped(mapped) => mapped.file.as_ref(),
            HeapBytes::Owned(_) => None,
        }
    }

    /// The runs of blocks written over the mapped file's ([`HeapBytes::patch`]), in order:
    /// first block and count.
    pub fn patched(&self) -> Vec<(u32, u32)> {
        let HeapBytes::Mapped(mapped) = self else {
            return Vec::new();
        };
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for i in mapped.patched.iter() {
            match runs.last_mut() {
                Some((first, count)) if *first + *count == i => *count += 1,
                _ => runs.push((i, 1)),
            }
        }
        runs
    }

    /// Write block `i` (`bytes`, a block or less at the heap's end): a heap still mapped from
    /// its file stays so, the block counted among those written over it, until they are half
    /// its blocks: then it becomes a heap of its own (its file's pages are then mostly
    /// shadowed, and a restore would write most blocks one run at a time).
    pub fn patch(&mut self, i: u32, bytes: &[u8]) {
        let at = i as usize * BLOCK;
        match self {
            HeapBytes::Mapped(mapped) if mapped.file.is_some() => {
                mapped.map[at..at + bytes.len()].copy_from_slice(bytes);
                mapped.patched.mark(i as usize..i as usize + 1);
                if mapped.patched.count() * 2 > mapped.map.len().div_ceil(BLOCK) {
                    let owned = HeapBytes::owned(&mapped.map);
                    *self = owned;
                }
            }
            _ => self[at..at + bytes.len()].copy_from_slice(bytes),
        }
    }

    /// Append `bytes` (the memory grew): a mapped heap becomes one of its own first.
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let HeapBytes::Mapped(mapped) = self {
            *self = HeapBytes::owned(&mapped.map);
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

/// A copy of a heap still mapped from its file maps that file again and writes the blocks
/// written over it; any other copy owns its bytes. (The pages are shared through the `Arc`
/// that holds a heap; a copy is made when one holder writes them: `Arc::make_mut`.)
impl Clone for HeapBytes {
    fn clone(&self) -> HeapBytes {
        if let HeapBytes::Mapped(mapped) = self
            && let Some(file) = &mapped.file
            && let Some(mut copy) =
                HeapBytes::mapped(mapped.map.len(), file.clone(), mapped.base.as_ref())
        {
            for i in mapped.patched.iter() {
                let at = i as usize * BLOCK;
                copy.patch(i, &mapped.map[at..(at + BLOCK).min(mapped.map.len())]);
            }
            return copy;
        }
        HeapBytes::owned(self)
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
            HeapBytes::Owned(Owned::Memfd { .. }) => "owned, memfd",
            HeapBytes::Owned(Owned::Vec(_)) => "owned",
            HeapBytes::Mapped(_) => "mapped",
        };
        write!(f, "HeapBytes({kind}, {} bytes)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frozen heap (a fork's) stays mapped while blocks are written over it, until they are
    /// more than half its blocks: then it is a heap of its own again, with every byte, and the
    /// frozen memfd (sealed) is as it was.
    #[test]
    fn a_frozen_heap_written_over_half_its_blocks_becomes_its_own_again() {
        use std::os::unix::fs::FileExt;
        let mut heap = HeapBytes::owned(&[1u8; 8 * BLOCK]);
        assert!(matches!(heap, HeapBytes::Owned(Owned::Memfd { .. })));
        heap.freeze();
        let frozen = heap.file().expect("frozen and mapped").clone();
        let seals = rustix::fs::fcntl_get_seals(&frozen.file).unwrap();
        assert!(seals.contains(rustix::fs::SealFlags::WRITE), "{seals:?}");
        for i in [0, 1, 3, 2] {
            heap.patch(i, &[2u8; BLOCK]);
        }
        assert_eq!(heap.patched(), vec![(0, 4)]);
        assert!(heap.file().is_some(), "half: still mapped");
        heap.patch(6, &[3u8; BLOCK]);
        assert!(matches!(heap, HeapBytes::Owned(_)), "{heap:?}");
        let expected: Vec<u8> = [2u8; 4 * BLOCK]
            .into_iter()
            .chain([1; 2 * BLOCK])
            .chain([3; BLOCK])
            .chain([1; BLOCK])
            .collect();
        assert!(heap[..] == expected[..]);
        let mut bytes = vec![0; 8 * BLOCK];
        frozen.file.read_exact_at(&mut bytes, 0).unwrap();
        assert!(bytes.iter().all(|&b| b == 1), "the frozen memfd changed");
    }
}
