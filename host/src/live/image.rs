//! A live session's heap image: the guest's memory above the shadow stack, kept as a copy that
//! each successful call brings up to date block by block, and its one file format
//! (hibernation, restarts), which holds only the blocks that differ from a fresh instance's.
//!
//! The file: `PALIHEAP`, the format version (u32), the SHA-256 of the guest build the image
//! belongs to (32 bytes), the memory size in bytes (u64), the number of runs (u32), the runs
//! (first block and block count, u32 each), zeros up to the next multiple of 4 KiB, each run's
//! blocks whole and in order, and the BLAKE3 digest of everything before it. All integers are
//! little-endian. Blocks are counted from the stack top; a run may hold blocks that equal a
//! fresh instance's, to join two runs into one ([`GAP`], [`MAX_MAPPINGS`]). Every block starts
//! at a multiple of 4 KiB in the file, so that a wake maps the runs ([`HeapImage::open`])
//! rather than copying them. [`HeapImage::decode`] and [`HeapImage::open`] check the length and the digest before
//! they read anything else: a truncated or altered file is refused as `invalid_component`,
//! never restored. Both also read such a file compressed for keeping while idle
//! ([`HeapImage::compress`], `packed.rs`), decompressed into memory first.

use super::heap::{HeapBytes, HeapFile, MAX_MAPPINGS, MapBase, Owned, Run};
use super::packed;
use crate::Error;
use std::sync::Arc;

/// Bytes per block: what an image keeps, compares and writes back at a time.
pub(crate) const BLOCK: usize = 4096;

/// Bytes per WebAssembly page.
pub(crate) const WASM_PAGE: u64 = 65536;

const MAGIC: &[u8; 8] = b"PALIHEAP";
/// Version 4: the digest is the BLAKE3 of the content's XXH3-128 checksum, four times faster
/// to check than version 3's BLAKE3 of the whole (still read). Since version 3 the blocks are
/// stored whole at multiples of 4 KiB, to be mapped (version 2's were zstd-compressed; version
/// 1's digest was SHA-256): older files are refused.
const VERSION: u32 = 4;
/// The oldest version read.
const OLDEST: u32 = 3;
/// Magic, version, guest digest, memory size and run count.
const HEADER: usize = 8 + 4 + 32 + 8 + 4;
/// Bytes of a run in the file's table: its first block and its block count.
const RUN: usize = 8;
const DIGEST: usize = 32;
/// Unchanged blocks between two runs of changed ones that a file stores anyway, joining the
/// two runs: one mapping fewer at a wake for at most 32 KiB more on disk.
const GAP: u32 = 8;

/// A heap: the guest's memory from the top of its shadow stack to its end, copied. Cheap to
/// clone (shared until one copy changes).
#[derive(Clone, Debug)]
pub struct HeapImage {
    pub(crate) memory_size: u64,
    pub(crate) stack_top: u32,
    /// The memory from `stack_top` up.
    pub(crate) heap: Arc<HeapBytes>,
    /// The blocks changed since [`HeapImage::take_changed`] last ran.
    changed: Blocks,
}

/// Blocks of a heap, by index from the stack top, a bit each, and how many.
#[derive(Clone, Debug, Default)]
pub(crate) struct Blocks {
    bits: Vec<u64>,
    count: usize,
}

impl Blocks {
    pub(crate) fn mark(&mut self, blocks: std::ops::Range<usize>) {
        if blocks.end > self.bits.len() * 64 {
            self.bits.resize(blocks.end.div_ceil(64), 0);
        }
        for i in blocks {
            let (word, bit) = (&mut self.bits[i / 64], 1 << (i % 64));
            if *word & bit == 0 {
                *word |= bit;
                self.count += 1;
            }
        }
    }

    /// How many blocks are marked.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// The blocks marked, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.bits.iter().enumerate().flat_map(|(word, &bits)| {
            let mut left = bits;
            std::iter::from_fn(move || {
                (left != 0).then(|| {
                    let bit = left.trailing_zeros();
                    left &= left - 1;
                    (word * 64) as u32 + bit
                })
            })
        })
    }

    /// The blocks marked, in order; none are marked after.
    #[cfg(feature = "serve")]
    fn take(&mut self) -> Vec<u32> {
        let out = self.iter().collect();
        self.bits.fill(0);
        self.count = 0;
        out
    }
}

impl HeapImage {
    /// The heap of a fresh instance whose memory is `base`: mapped from `map_base` (the same
    /// bytes in a sealed memfd) where it can be, else copied.
    pub(crate) fn pristine(base: &[u8], stack_top: u32, map_base: Option<&MapBase>) -> HeapImage {
        let above = &base[stack_top as usize..];
        let mapped = map_base
            .filter(|_| (stack_top as usize).is_multiple_of(BLOCK))
            .and_then(|map_base| map_base.heap(above.len()));
        HeapImage {
            memory_size: base.len() as u64,
            stack_top,
            heap: Arc::new(mapped.unwrap_or_else(|| HeapBytes::owned(above))),
            changed: Blocks::default(),
        }
    }

    /// Bring the copy up to `memory` (the instance's whole memory, which never shrinks):
    /// compare it block by block and copy the blocks that changed.
    pub(crate) fn update(&mut self, memory: &[u8]) {
        let from = (self.stack_top as usize).min(memory.len());
        let now = &memory[from..];
        let heap = Arc::make_mut(&mut self.heap);
        let kept = heap.len().min(now.len());
        for (i, new) in now[..kept].chunks(BLOCK).enumerate() {
            let at = i * BLOCK;
            if heap[at..at + new.len()] != *new {
                // A block at a time, so that a heap mapped from a file stays so.
                heap.patch(i as u32, new);
                self.changed.mark(i..i + 1);
            }
        }
        heap.extend_from_slice(&now[kept..]);
        self.changed.mark(kept / BLOCK..heap.len().div_ceil(BLOCK));
        self.memory_size = memory.len() as u64;
    }

    /// Bring the copy up to `memory` when the pages at `written` (offsets in the memory, as
    /// [`super::written::WriteTracker`] reports them, of 4 KiB pages) are all that may have
    /// changed since the copy was last brought up to it: each is compared and copied if it
    /// changed, and the memory grown since is copied whole. The pages of `written` that had
    /// not changed are pushed to `unchanged`.
    pub(crate) fn update_written(
        &mut self,
        memory: &[u8],
        written: &[std::ops::Range<usize>],
        unchanged: &mut Vec<usize>,
    ) {
        let top = self.stack_top as usize;
        let heap = Arc::make_mut(&mut self.heap);
        let kept = top + heap.len().min(memory.len().saturating_sub(top));
        for page in written.iter().flat_map(|r| r.clone().step_by(BLOCK)) {
            let (from, to) = (page.max(top), (page + BLOCK).min(kept));
            if from >= to {
                continue;
            }
            if heap[from - top..to - top] == memory[from..to] {
                unchanged.push(page);
                continue;
            }
            // A block at a time (the stack top is a multiple of a block where tracked), so
            // that a heap mapped from a file stays so.
            for at in ((from - top) / BLOCK * BLOCK..to - top).step_by(BLOCK) {
                let end = (at + BLOCK).min(to - top);
                heap.patch((at / BLOCK) as u32, &memory[top + at..top + end]);
            }
            self.changed
                .mark((from - top) / BLOCK..(to - top).div_ceil(BLOCK));
        }
        let grown = heap.len();
        heap.extend_from_slice(&memory[kept.max(top).min(memory.len())..]);
        self.changed.mark(grown / BLOCK..heap.len().div_ceil(BLOCK));
        self.memory_size = memory.len() as u64;
    }

    /// The blocks brought up to the memory since this last ran (or since the image was made),
    /// by index from the stack top, in order.
    #[cfg(feature = "serve")]
    pub(crate) fn take_changed(&mut self) -> Vec<u32> {
        self.changed.take()
    }

    /// Block `i` (from the stack top).
    #[cfg(feature = "serve")]
    pub(crate) fn block(&self, i: u32) -> &[u8] {
        let at = i as usize * BLOCK;
        &self.heap[at..(at + BLOCK).min(self.heap.len())]
    }

    /// Grow the heap to `memory_size` bytes of memory (zeros) and write `blocks` (index from
    /// the stack top, and its bytes) into it; checked by the caller against the memory's size.
    #[cfg(feature = "serve")]
    pub(crate) fn apply<'a>(
        &mut self,
        memory_size: u64,
        blocks: impl Iterator<Item = (u32, &'a [u8])>,
    ) {
        let heap = Arc::make_mut(&mut self.heap);
        // The memory only grows (the journal checks it); growth fills with zeros.
        let len = (memory_size - u64::from(self.stack_top)) as usize;
        heap.extend_from_slice(&vec![0; len.saturating_sub(heap.len())]);
        for (i, bytes) in blocks {
            heap.patch(i, bytes);
        }
        self.memory_size = memory_size;
    }

    /// The blocks of the heap that differ from `base` (a fresh instance's memory), by index
    /// from the stack top.
    fn changed<'a>(&'a self, base: &'a [u8]) -> impl Iterator<Item = (u32, &'a [u8])> + 'a {
        let zero: &'static [u8] = &[0u8; BLOCK];
        let base = base.get(self.stack_top as usize..).unwrap_or(&[]);
        self.heap
            .chunks(BLOCK)
            .enumerate()
            .filter(move |(i, block)| {
                let was = base.get(i * BLOCK..(i + 1) * BLOCK).unwrap_or(zero);
                *block != was
            })
            .map(|(i, block)| (i as u32, block))
    }

    /// Bytes of linear memory the heap spans.
    pub fn memory_size(&self) -> u64 {
        self.memory_size
    }

    /// Blocks of [`BLOCK`] bytes that differ from a fresh instance's memory `base`.
    pub(crate) fn changed_blocks(&self, base: &[u8]) -> usize {
        self.changed(base).count()
    }

    /// The runs of blocks a file of the image holds: those that differ from `base`, two runs
    /// joined when at most [`GAP`] blocks lie between them, and across the smallest gaps
    /// beyond that when the runs would be more than [`MAX_MAPPINGS`]: a file Palisade writes
    /// is always mapped at a wake, at the cost of storing unchanged blocks.
    fn runs(&self, base: &[u8]) -> Vec<(u32, u32)> {
        let changed: Vec<u32> = self.changed(base).map(|(i, _)| i).collect();
        let mut gaps: Vec<u32> = changed
            .windows(2)
            .map(|w| w[1] - w[0] - 1)
            .filter(|&gap| gap > 0)
            .collect();
        let join = if gaps.len() + 1 > MAX_MAPPINGS {
            gaps.sort_unstable();
            gaps[gaps.len() - MAX_MAPPINGS].max(GAP)
        } else {
            GAP
        };
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for i in changed {
            match runs.last_mut() {
                Some((first, count)) if i - (*first + *count) <= join => *count = i + 1 - *first,
                _ => runs.push((i, 1)),
            }
        }
        runs
    }

    /// The image as a file, for `guest` (the SHA-256 of the guest build it belongs to): the
    /// blocks that differ from `base`.
    pub(crate) fn encode(&self, guest: &[u8; 32], base: &[u8]) -> Vec<u8> {
        let runs = self.runs(base);
        let data = (HEADER + RUN * runs.len()).next_multiple_of(BLOCK);
        let blocks: usize = runs.iter().map(|&(_, count)| count as usize).sum();
        let mut out = Vec::with_capacity(data + blocks * BLOCK + DIGEST);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(guest);
        out.extend_from_slice(&self.memory_size.to_le_bytes());
        out.extend_from_slice(&(runs.len() as u32).to_le_bytes());
        for (first, count) in &runs {
            out.extend_from_slice(&first.to_le_bytes());
            out.extend_from_slice(&count.to_le_bytes());
        }
        out.resize(data, 0);
        for &(first, count) in &runs {
            let span = first as usize * BLOCK..(first + count) as usize * BLOCK;
            let end = span.end.min(self.heap.len());
            out.extend_from_slice(&self.heap[span.start..end]);
            // A last block cut short by the memory's end is stored whole.
            out.resize(out.len() + (span.end - end), 0);
        }
        let digest = digest(&out, VERSION);
        out.extend_from_slice(&digest);
        out
    }

    /// Read a file [`HeapImage::encode`] wrote for `guest` against `base` (whose shadow stack
    /// ends at `stack_top`); its memory may be at most `max_memory` bytes. The heap is a copy.
    pub(crate) fn decode(
        bytes: &[u8],
        guest: &[u8; 32],
        max_memory: u64,
        base: (&[u8], u32),
    ) -> Result<HeapImage, Error> {
        let unpacked;
        let bytes = if packed::is_compressed(bytes) {
            unpacked = packed::unpack(bytes, longest(max_memory))?;
            &unpacked[..]
        } else {
            bytes
        };
        let body = checked(bytes, max_memory)?;
        let header = Header::parse(body, guest, max_memory, base).map_err(refused)?;
        Ok(header.copied(body, base))
    }

    /// [`HeapImage::decode`] for the file `file`, whose runs are mapped rather than copied
    /// where they are few enough ([`super::heap::MAX_MAPPINGS`]): the file is mapped, its
    /// digest checked on all cores, and its blocks left in the page cache, to be mapped again
    /// into the instance that restores the image.
    #[allow(unsafe_code)]
    pub(crate) fn open(
        file: &std::fs::File,
        guest: &[u8; 32],
        max_memory: u64,
        base: (&[u8], u32, &MapBase),
    ) -> Result<HeapImage, Error> {
        let (base, stack_top, map_base) = base;
        let unreadable = |e: std::io::Error| Error::Internal {
            detail: format!("reading a heap file: {e}"),
        };
        let len = file.metadata().map_err(unreadable)?.len();
        // A compressed file may be a little longer than the heap file it holds.
        if len > packed::longest_packed(longest(max_memory)) as u64 {
            return Err(refused(
                "it is larger than the policy's memory limit allows",
            ));
        }
        if len < (HEADER + DIGEST) as u64 {
            return Err(refused("it is truncated"));
        }
        // SAFETY: a heap file is written whole to a temporary file and renamed into place
        // (`serve::live`), never changed in place, so its bytes do not change while mapped.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .len(len as usize)
                .populate()
                .map(file)
        }
        .map_err(unreadable)?;
        if packed::is_compressed(&map) {
            // Decompressed into memory: nothing of it is mapped.
            return Self::decode(&map, guest, max_memory, (base, stack_top));
        }
        let body = checked(&map, max_memory)?;
        let header = Header::parse(body, guest, max_memory, (base, stack_top)).map_err(refused)?;
        let size = header.memory_size as usize - stack_top as usize;
        if (stack_top as usize).is_multiple_of(BLOCK) {
            let runs = header.runs.clone();
            let file = file.try_clone().map_err(unreadable)?;
            let file = Arc::new(HeapFile {
                file,
                runs,
                slot: None,
            });
            if let Some(heap) = HeapBytes::mapped(size, file, Some(map_base)) {
                return Ok(HeapImage {
                    memory_size: header.memory_size,
                    stack_top,
                    heap: Arc::new(heap),
                    changed: Blocks::default(),
                });
            }
        }
        Ok(header.copied(body, (base, stack_top)))
    }
}

/// Whether `bytes` can be a heap file: as long as its header and digest, and its magic first.
pub(super) fn is_heap_file(bytes: &[u8]) -> bool {
    bytes.len() >= HEADER + DIGEST && bytes.starts_with(MAGIC)
}

pub(super) fn refused(why: &str) -> Error {
    Error::InvalidComponent {
        detail: format!("the heap image is refused: {why}"),
    }
}

/// The longest file an image of at most `max_memory` bytes of memory may be: a run per block.
pub(super) fn longest(max_memory: u64) -> usize {
    let blocks = usize::try_from(max_memory).unwrap_or(usize::MAX) / BLOCK + 1;
    (HEADER + RUN * blocks)
        .next_multiple_of(BLOCK)
        .saturating_add(blocks.saturating_mul(BLOCK))
        .saturating_add(DIGEST)
}

/// The digest of a file's `body` (everything before the digest) in format `version`: for 4,
/// the BLAKE3 of its XXH3-128 checksum (one pass at memory speed: 0.5 ms for 16 MiB on one
/// core of the reference machine); for 3, its BLAKE3 (on all cores: 1.8 ms on one).
fn digest(body: &[u8], version: u32) -> [u8; 32] {
    if version == 3 {
        return *blake3::Hasher::new()
            .update_rayon(body)
            .finalize()
            .as_bytes();
    }
    let sum = xxhash_rust::xxh3::xxh3_128(body);
    *blake3::hash(&sum.to_le_bytes()).as_bytes()
}

/// `bytes` without their digest, once it matches them (computed as their version says: a
/// version changed by damage changes the digest too).
fn checked(bytes: &[u8], max_memory: u64) -> Result<&[u8], Error> {
    if bytes.len() > longest(max_memory) {
        return Err(refused(
            "it is larger than the policy's memory limit allows",
        ));
    }
    if bytes.len() < HEADER + DIGEST {
        return Err(refused("it is truncated"));
    }
    let (body, stored) = bytes.split_at(bytes.len() - DIGEST);
    let version = u32_at(body, 8);
    if !(OLDEST..=VERSION).contains(&version) {
        return Err(refused("it is not a heap image of a version read here"));
    }
    if digest(body, version) != stored {
        return Err(refused("its digest does not match its content"));
    }
    Ok(body)
}

/// What a file's header says, checked against its length, its guest and the limits.
struct Header {
    memory_size: u64,
    runs: Vec<Run>,
}

impl Header {
    fn parse(
        body: &[u8],
        guest: &[u8; 32],
        max_memory: u64,
        (base, stack_top): (&[u8], u32),
    ) -> Result<Header, &'static str> {
        if &body[..8] != MAGIC || !(OLDEST..=VERSION).contains(&u32_at(body, 8)) {
            return Err("it is not a heap image of a version read here");
        }
        if &body[12..44] != guest {
            return Err("it belongs to another build of the guest");
        }
        let memory_size = u64::from_le_bytes(body[44..52].try_into().expect("8 bytes"));
        if memory_size > max_memory
            || !memory_size.is_multiple_of(WASM_PAGE)
            || memory_size < base.len() as u64
        {
            return Err("its memory size is over the policy's limit or not whole pages");
        }
        let blocks_max = (memory_size as usize - stack_top as usize).div_ceil(BLOCK);
        let count = u32_at(body, 52) as usize;
        if count > blocks_max || body.len() < HEADER + RUN * count {
            return Err("it has more runs than its memory holds");
        }
        let data = (HEADER + RUN * count).next_multiple_of(BLOCK);
        let mut runs = Vec::with_capacity(count);
        let (mut offset, mut end) = (data as u64, 0usize);
        for i in 0..count {
            let (block, blocks) = (
                u32_at(body, HEADER + RUN * i),
                u32_at(body, HEADER + RUN * i + 4),
            );
            let after = block as usize + blocks as usize;
            if blocks == 0 || (block as usize) < end || after > blocks_max {
                return Err("its runs are empty, out of order or outside its memory");
            }
            runs.push(Run {
                block,
                count: blocks,
                offset,
            });
            offset += u64::from(blocks) * BLOCK as u64;
            end = after;
        }
        if offset != body.len() as u64 {
            return Err("its length is not what its runs make");
        }
        Ok(Header { memory_size, runs })
    }

    /// The heap the runs of `body` make over `base` (then zeros), copied: each byte of the
    /// heap written once, in order. A vector, not a memfd: filling fresh shared memory costs
    /// this machine three times as much (a wake from bytes 4.6 against 17.9 ms for 16 MiB), so
    /// a fork of a heap woken from bytes copies it at its restore.
    fn copied(&self, body: &[u8], (base, stack_top): (&[u8], u32)) -> HeapImage {
        let size = self.memory_size as usize - stack_top as usize;
        let base = base.get(stack_top as usize..).unwrap_or(&[]);
        let mut heap = Vec::with_capacity(size);
        let fill = |heap: &mut Vec<u8>, to: usize| {
            let from = heap.len();
            heap.extend_from_slice(base.get(from..to.min(base.len())).unwrap_or(&[]));
            heap.resize(to, 0);
        };
        for run in &self.runs {
            let span = run.span();
            fill(&mut heap, span.start);
            let stored = run.offset as usize..run.offset as usize + span.len();
            let end = span.end.min(size);
            heap.extend_from_slice(&body[stored][..end - span.start]);
        }
        fill(&mut heap, size);
        HeapImage {
            memory_size: self.memory_size,
            stack_top,
            heap: Arc::new(HeapBytes::Owned(Owned::Vec(heap))),
            changed: Blocks::default(),
        }
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOP: u32 = WASM_PAGE as u32;

    /// A base of four pages, and a memory grown to five with changes in three blocks above the
    /// stack top and one below it.
    fn sample() -> (Vec<u8>, Vec<u8>) {
        let base = vec![0u8; 4 * WASM_PAGE as usize];
        let mut memory = base.clone();
        memory.resize(5 * WASM_PAGE as usize, 0);
        memory[WASM_PAGE as usize + 5] = 7;
        memory[WASM_PAGE as usize + BLOCK + 1] = 8;
        memory[4 * WASM_PAGE as usize + 9] = 9;
        memory[3] = 1; // below the stack top: not part of the image
        (memory, base)
    }

    #[test]
    fn an_update_copies_the_heap_above_the_stack() {
        let (memory, base) = sample();
        let mut image = HeapImage::pristine(&base, TOP, None);
        image.update(&memory);
        assert_eq!(image.memory_size(), 5 * WASM_PAGE);
        assert_eq!(image.changed_blocks(&base), 3);
        assert_eq!(image.heap[..], memory[TOP as usize..]);
        // The two blocks changed, and the sixteen the memory grew by.
        #[cfg(feature = "serve")]
        {
            let grown = (4 * WASM_PAGE - u64::from(TOP)) as u32 / BLOCK as u32;
            let expected: Vec<u32> = [0, 1].into_iter().chain(grown..grown + 16).collect();
            assert_eq!(image.take_changed(), expected);
            assert!(image.take_changed().is_empty());
        }
    }

    /// A file with its digest computed afresh over `body`: a forgery the digest alone cannot
    /// tell.
    fn sealed(mut body: Vec<u8>) -> Vec<u8> {
        let digest = digest(&body, u32_at(&body, 8));
        body.extend_from_slice(&digest);
        body
    }

    /// `file` with its run table replaced by `runs` and its blocks by `blocks` of them, sealed.
    fn forged(file: &[u8], runs: &[(u32, u32)], blocks: usize) -> Vec<u8> {
        let mut body = file[..HEADER - 4].to_vec();
        body.extend_from_slice(&(runs.len() as u32).to_le_bytes());
        for (first, count) in runs {
            body.extend_from_slice(&first.to_le_bytes());
            body.extend_from_slice(&count.to_le_bytes());
        }
        body.resize(body.len().next_multiple_of(BLOCK), 0);
        body.resize(body.len() + blocks * BLOCK, 7);
        sealed(body)
    }

    fn base_map(base: &[u8]) -> MapBase {
        MapBase::new(&base[TOP as usize..]).unwrap()
    }

    /// The file's blocks sit at multiples of 4 KiB, the three changed blocks in two runs (the
    /// two of the first page are one), and it decodes to the image.
    #[test]
    fn an_encoded_image_holds_its_blocks_aligned_and_decodes() {
        let (memory, base) = sample();
        let mut image = HeapImage::pristine(&base, TOP, None);
        image.update(&memory);
        let guest = [3u8; 32];
        let file = image.encode(&guest, &base);
        assert_eq!(u32_at(&file, 52), 2, "runs");
        assert_eq!((file.len() - DIGEST) % BLOCK, 0);
        assert_eq!(file.len(), BLOCK + 3 * BLOCK + DIGEST);
        assert_eq!(file[BLOCK + 5], 7);
        let back = HeapImage::decode(&file, &guest, 1 << 30, (&base, TOP)).unwrap();
        assert_eq!(back.heap, image.heap);
        assert_eq!(back.memory_size, image.memory_size);
    }

    /// A heap changed in 200 scattered blocks is written as at most [`MAX_MAPPINGS`] runs
    /// (across its smallest gaps), so a wake maps it; it decodes to the image.
    #[test]
    fn a_fragmented_heap_is_written_in_few_enough_runs_to_be_mapped() {
        let base = vec![0u8; 4 * WASM_PAGE as usize];
        let mut memory = vec![0u8; 160 * WASM_PAGE as usize];
        for i in 0..200 {
            // Gaps of 1 to 6 blocks beyond `GAP`, so that joining within `GAP` is not enough.
            let block = 1 + i * (GAP as usize + 2) + i % 5;
            memory[TOP as usize + block * BLOCK] = 1 + (i % 250) as u8;
        }
        let mut image = HeapImage::pristine(&base, TOP, None);
        image.update(&memory);
        assert_eq!(image.changed_blocks(&base), 200);
        let guest = [3u8; 32];
        let file = image.encode(&guest, &base);
        let runs = u32_at(&file, 52) as usize;
        assert!((1..=MAX_MAPPINGS).contains(&runs), "{runs} runs");
        let path = std::env::temp_dir().join(format!("palisade-runs-{}", std::process::id()));
        std::fs::write(&path, &file).unwrap();
        let opened = std::fs::File::open(&path).unwrap();
        let map_base = base_map(&base);
        let back = HeapImage::open(&opened, &guest, 1 << 30, (&base, TOP, &map_base)).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(back.heap.file().is_some(), "mapped");
        assert_eq!(back.heap, image.heap);
    }

    /// Truncated, altered, another guest's, over the limit, of an older version, or forged
    /// with a fresh digest (runs out of order, overlapping, outside the memory, a block too
    /// many or too few): each refused as `invalid_component`, in memory and from a file alike.
    #[test]
    fn a_damaged_or_forged_image_is_refused() {
        let (memory, base) = sample();
        let mut image = HeapImage::pristine(&base, TOP, None);
        image.update(&memory);
        let guest = [3u8; 32];
        let file = image.encode(&guest, &base);
        let map_base = base_map(&base);
        let codes = |bytes: &[u8], guest: &[u8; 32], limit: u64| {
            let decoded = HeapImage::decode(bytes, guest, limit, (&base, TOP)).unwrap_err();
            let path = std::env::temp_dir().join(format!("palisade-image-{}", std::process::id()));
            std::fs::write(&path, bytes).unwrap();
            let opened = std::fs::File::open(&path).unwrap();
            let mapped = HeapImage::open(&opened, guest, limit, (&base, TOP, &map_base));
            std::fs::remove_file(&path).unwrap();
            [decoded.code(), mapped.unwrap_err().code()]
        };
        let refused = ["invalid_component"; 2];
        assert_eq!(codes(&file[..file.len() - 1], &guest, 1 << 30), refused);
        assert_eq!(codes(&file[..10], &guest, 1 << 30), refused);
        let mut flipped = file.clone();
        flipped[BLOCK + 2] ^= 1;
        assert_eq!(codes(&flipped, &guest, 1 << 30), refused);
        assert_eq!(codes(&file, &[4u8; 32], 1 << 30), refused);
        assert_eq!(codes(&file, &guest, WASM_PAGE), refused);
        let mut older = file[..file.len() - DIGEST].to_vec();
        older[8..12].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(codes(&sealed(older), &guest, 1 << 30), refused);
        // Version 3 (its digest the BLAKE3 of the whole) is still read; a version 4 digest on
        // it, or the reverse, is not.
        let mut third = file[..file.len() - DIGEST].to_vec();
        third[8..12].copy_from_slice(&3u32.to_le_bytes());
        let back = HeapImage::decode(&sealed(third.clone()), &guest, 1 << 30, (&base, TOP));
        assert_eq!(back.unwrap().heap, image.heap);
        let mut mixed = third;
        mixed.extend_from_slice(&file[file.len() - DIGEST..]);
        assert_eq!(codes(&mixed, &guest, 1 << 30), refused);
        let blocks_max = (5 * WASM_PAGE as u32 - TOP) / BLOCK as u32;
        for (runs, blocks) in [
            (&[(4, 1), (0, 1)][..], 2),
            (&[(0, 2), (1, 1)][..], 3),
            (&[(blocks_max - 1, 2)][..], 2),
            (&[(0, 0)][..], 0),
            (&[(0, 2)][..], 3),
            (&[(0, 2)][..], 1),
        ] {
            let forgery = forged(&file, runs, blocks);
            assert_eq!(codes(&forgery, &guest, 1 << 30), refused, "{runs:?}");
        }
        // The same forging with the blocks it names is taken: the checks above refused only
        // what was wrong.
        let exact = forged(&file, &[(0, 1), (2, 2)], 3);
        let back = HeapImage::decode(&exact, &guest, 1 << 30, (&base, TOP)).unwrap();
        assert_eq!(back.heap[..BLOCK], [7; BLOCK]);
        assert_eq!(back.heap[BLOCK..2 * BLOCK], [0; BLOCK]);
        assert_eq!(back.heap[2 * BLOCK..4 * BLOCK], [7; 2 * BLOCK]);
    }

    /// From a file, the heap is mapped (the file's blocks over a fresh memory's) and equals
    /// the decoded copy; writing it leaves the file as it was, and from then on a restore
    /// copies it; growing it makes it a copy.
    #[test]
    fn an_image_opened_from_a_file_is_mapped_and_private() {
        let (mut memory, mut base) = sample();
        // A fresh memory's byte above the stack, which the heap keeps.
        base[TOP as usize + 3 * BLOCK + 1] = 5;
        memory[TOP as usize + 3 * BLOCK + 1] = 5;
        let mut image = HeapImage::pristine(&base, TOP, None);
        image.update(&memory);
        let guest = [3u8; 32];
        let bytes = image.encode(&guest, &base);
        let path = std::env::temp_dir().join(format!("palisade-mapped-{}", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let map_base = base_map(&base);
        let mut opened = HeapImage::open(&file, &guest, 1 << 30, (&base, TOP, &map_base)).unwrap();
        let copied = HeapImage::decode(&bytes, &guest, 1 << 30, (&base, TOP)).unwrap();
        assert!(
            matches!(*opened.heap, HeapBytes::Mapped(_)),
            "{:?}",
            opened.heap
        );
        assert_eq!(opened.heap, copied.heap);
        assert_eq!(opened.heap[3 * BLOCK + 1], 5);
        let runs = &opened.heap.file().expect("mapped from its file").runs;
        assert_eq!(runs.len(), 2);
        let mut written = memory.clone();
        written[TOP as usize + 7] = 9;
        opened.update(&written);
        assert_eq!(opened.heap[7], 9);
        assert!(opened.heap.file().is_some(), "written: still mapped");
        assert_eq!(
            opened.heap.patched(),
            vec![(0, 1)],
            "block 0 written over the file's"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "the file is unchanged"
        );
        written.resize(6 * WASM_PAGE as usize, 1);
        opened.update(&written);
        assert!(matches!(*opened.heap, HeapBytes::Owned(_)));
        assert_eq!(opened.heap[..], written[TOP as usize..]);
        std::fs::remove_file(&path).unwrap();
    }
}
