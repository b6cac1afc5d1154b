//! A live session's heap image: the guest's memory above the shadow stack, kept as a copy that
//! each successful call brings up to date block by block, and its one file format
//! (hibernation, restarts), which holds only the blocks that differ from a fresh instance's.
//!
//! The file: `PALIHEAP`, the format version (u32), the SHA-256 of the guest build the image
//! belongs to (32 bytes), the memory size in bytes (u64), the number of blocks (u32), the
//! zstd-compressed block indices (u32 each) and blocks, and the BLAKE3 digest of everything
//! before it. All integers are little-endian. [`HeapImage::decode`] checks the digest before it reads
//! anything else: a truncated or altered file is refused as `invalid_component`, never restored.

use crate::Error;
use std::sync::Arc;

/// Bytes per block: what an image keeps, compares and writes back at a time.
pub(crate) const BLOCK: usize = 4096;

/// Bytes per WebAssembly page.
pub(crate) const WASM_PAGE: u64 = 65536;

const MAGIC: &[u8; 8] = b"PALIHEAP";
/// Version 2: the digest is BLAKE3 (version 1's was SHA-256).
const VERSION: u32 = 2;
/// Magic, version, guest digest, memory size and block count.
const HEADER: usize = 8 + 4 + 32 + 8 + 4;
const DIGEST: usize = 32;
/// zstd's level for hibernation: its fastest levels are negative. On 16 MiB of rows (`palisade
/// bench --live`) level 1 compresses 6.2 times at 0.8 GB/s and decompresses at 2.3 GB/s; -1
/// compresses 5.4 times at 1.1 GB/s and decompresses at 2.7 GB/s.
const ZSTD_LEVEL: i32 = -1;

/// A heap: the guest's memory from the top of its shadow stack to its end, copied. Cheap to
/// clone (shared until one copy changes).
#[derive(Clone, Debug)]
pub struct HeapImage {
    pub(crate) memory_size: u64,
    pub(crate) stack_top: u32,
    /// The memory from `stack_top` up.
    pub(crate) heap: Arc<Vec<u8>>,
    /// The blocks changed since [`HeapImage::take_changed`] last ran.
    changed: Changed,
}

/// Blocks of a heap, by index from the stack top, a bit each.
#[derive(Clone, Debug, Default)]
struct Changed(Vec<u64>);

impl Changed {
    fn mark(&mut self, blocks: std::ops::Range<usize>) {
        if blocks.end > self.0.len() * 64 {
            self.0.resize(blocks.end.div_ceil(64), 0);
        }
        for i in blocks {
            self.0[i / 64] |= 1 << (i % 64);
        }
    }

    /// The blocks marked, in order; none are marked after.
    #[cfg(feature = "serve")]
    fn take(&mut self) -> Vec<u32> {
        let mut out = Vec::new();
        for (word, bits) in self.0.iter_mut().enumerate() {
            while *bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                out.push((word * 64 + bit) as u32);
                *bits &= *bits - 1;
            }
        }
        out
    }
}

impl HeapImage {
    /// The heap of a fresh instance whose memory is `base`.
    pub(crate) fn pristine(base: &[u8], stack_top: u32) -> HeapImage {
        HeapImage {
            memory_size: base.len() as u64,
            stack_top,
            heap: Arc::new(base[stack_top as usize..].to_vec()),
            changed: Changed::default(),
        }
    }

    /// Bring the copy up to `memory` (the instance's whole memory, which never shrinks):
    /// compare it block by block and copy the blocks that changed.
    pub(crate) fn update(&mut self, memory: &[u8]) {
        let from = (self.stack_top as usize).min(memory.len());
        let now = &memory[from..];
        let heap = Arc::make_mut(&mut self.heap);
        let kept = heap.len().min(now.len());
        for (i, (old, new)) in heap[..kept]
            .chunks_mut(BLOCK)
            .zip(now[..kept].chunks(BLOCK))
            .enumerate()
        {
            if old != new {
                old.copy_from_slice(new);
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
            let old = &mut heap[from - top..to - top];
            if *old == memory[from..to] {
                unchanged.push(page);
            } else {
                old.copy_from_slice(&memory[from..to]);
                self.changed
                    .mark((from - top) / BLOCK..(to - top).div_ceil(BLOCK));
            }
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
        heap.resize((memory_size - u64::from(self.stack_top)) as usize, 0);
        for (i, bytes) in blocks {
            let at = i as usize * BLOCK;
            heap[at..at + bytes.len()].copy_from_slice(bytes);
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

    /// The image as a file, for `guest` (the SHA-256 of the guest build it belongs to): the
    /// blocks that differ from `base`.
    pub(crate) fn encode(&self, guest: &[u8; 32], base: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let changed: Vec<(u32, &[u8])> = self.changed(base).collect();
        let mut out = Vec::with_capacity(HEADER + changed.len() * BLOCK / 4 + DIGEST);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(guest);
        out.extend_from_slice(&self.memory_size.to_le_bytes());
        out.extend_from_slice(&(changed.len() as u32).to_le_bytes());
        // Compressed straight from the heap, after the header: no copy of the blocks first.
        let in_memory = "zstd compresses into memory";
        let mut zstd = zstd::stream::write::Encoder::new(out, ZSTD_LEVEL).expect(in_memory);
        for (i, _) in &changed {
            zstd.write_all(&i.to_le_bytes()).expect(in_memory);
        }
        for (_, block) in &changed {
            zstd.write_all(block).expect(in_memory);
        }
        let mut out = zstd.finish().expect(in_memory);
        out.extend_from_slice(blake3::hash(&out).as_bytes());
        out
    }

    /// Read a file [`HeapImage::encode`] wrote for `guest` against `base` (whose shadow stack
    /// ends at `stack_top`); its memory may be at most `max_memory` bytes.
    pub(crate) fn decode(
        bytes: &[u8],
        guest: &[u8; 32],
        max_memory: u64,
        base: (&[u8], u32),
    ) -> Result<HeapImage, Error> {
        let (base, stack_top) = base;
        let refused = |why: &str| Error::InvalidComponent {
            detail: format!("the heap image is refused: {why}"),
        };
        if bytes.len() < HEADER + DIGEST {
            return Err(refused("it is truncated"));
        }
        let (body, digest) = bytes.split_at(bytes.len() - DIGEST);
        if blake3::hash(body).as_bytes() != digest {
            return Err(refused("its digest does not match its content"));
        }
        if &body[..8] != MAGIC || u32_at(body, 8) != VERSION {
            return Err(refused("it is not a heap image of this version"));
        }
        if &body[12..44] != guest {
            return Err(refused("it belongs to another build of the guest"));
        }
        let memory_size = u64::from_le_bytes(body[44..52].try_into().expect("8 bytes"));
        let count = u32_at(body, 52) as usize;
        if memory_size > max_memory
            || !memory_size.is_multiple_of(WASM_PAGE)
            || memory_size < base.len() as u64
        {
            return Err(refused(
                "its memory size is over the policy's limit or not whole pages",
            ));
        }
        let blocks_max = (memory_size as usize - stack_top as usize) / BLOCK;
        if count > blocks_max {
            return Err(refused("it has more blocks than its memory holds"));
        }
        let size = memory_size as usize - stack_top as usize;
        let base = &base[(stack_top as usize).min(base.len())..];
        let heap = read_blocks(&body[HEADER..], count, (base, size)).map_err(refused)?;
        Ok(HeapImage {
            memory_size,
            stack_top,
            heap: Arc::new(heap),
            changed: Changed::default(),
        })
    }
}

/// The heap of `size` bytes that `compressed` (`count` block indices, then the blocks) makes
/// over `base` (then zeros): each block decompressed straight into its place, each byte of the
/// heap written once, in order.
fn read_blocks(
    compressed: &[u8],
    count: usize,
    (base, size): (&[u8], usize),
) -> Result<Vec<u8>, &'static str> {
    use std::io::Read;
    const BAD: &str = "its blocks do not decompress to what its header says";
    let mut zstd = zstd::stream::read::Decoder::with_buffer(compressed).map_err(|_| BAD)?;
    let mut index_bytes = vec![0u8; count * 4];
    zstd.read_exact(&mut index_bytes).map_err(|_| BAD)?;
    let indices: Vec<usize> = index_bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
        .collect();
    let in_order = indices.windows(2).all(|w| w[0] < w[1]);
    if !in_order || indices.last().is_some_and(|&i| (i + 1) * BLOCK > size) {
        return Err("its blocks are out of order or outside its memory");
    }
    let mut heap = Vec::with_capacity(size);
    let fill = |heap: &mut Vec<u8>, to: usize| {
        let from = heap.len();
        heap.extend_from_slice(base.get(from..to.min(base.len())).unwrap_or(&[]));
        heap.resize(to, 0);
    };
    for &i in &indices {
        fill(&mut heap, i * BLOCK);
        let at = heap.len();
        heap.resize(at + BLOCK, 0);
        zstd.read_exact(&mut heap[at..]).map_err(|_| BAD)?;
    }
    fill(&mut heap, size);
    if zstd.read(&mut [0u8; 1]).map_err(|_| BAD)? != 0 {
        return Err(BAD);
    }
    Ok(heap)
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
        let mut image = HeapImage::pristine(&base, TOP);
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

    #[test]
    fn an_encoded_image_decodes_and_a_damaged_one_is_refused() {
        let (memory, base) = sample();
        let mut image = HeapImage::pristine(&base, TOP);
        image.update(&memory);
        let guest = [3u8; 32];
        let file = image.encode(&guest, &base);
        let back = HeapImage::decode(&file, &guest, 1 << 30, (&base, TOP)).unwrap();
        assert_eq!(back.heap, image.heap);
        assert_eq!(back.memory_size, image.memory_size);
        let code = |bytes: &[u8], guest: &[u8; 32]| {
            HeapImage::decode(bytes, guest, 1 << 30, (&base, TOP))
                .unwrap_err()
                .code()
        };
        assert_eq!(code(&file[..file.len() - 1], &guest), "invalid_component");
        let mut flipped = file.clone();
        flipped[HEADER + 2] ^= 1;
        assert_eq!(code(&flipped, &guest), "invalid_component");
        assert_eq!(code(&file, &[4u8; 32]), "invalid_component");
        // Over the policy's memory limit.
        let small = HeapImage::decode(&file, &guest, WASM_PAGE, (&base, TOP));
        assert_eq!(small.unwrap_err().code(), "invalid_component");
        // A digest recomputed over a block too many, or a byte too few: refused all the same.
        let mut payload: Vec<u8> = [0u32, 1, 2].iter().flat_map(|i| i.to_le_bytes()).collect();
        payload.resize(3 * (4 + BLOCK), 7);
        for compressed in [
            zstd::bulk::compress(&[&payload[..], &[7; BLOCK]].concat(), 1).unwrap(),
            zstd::bulk::compress(&payload[..payload.len() - 1], 1).unwrap(),
        ] {
            let mut forged = file[..HEADER].to_vec();
            forged.extend_from_slice(&compressed);
            forged.extend_from_slice(blake3::hash(&forged).as_bytes());
            assert_eq!(code(&forged, &guest), "invalid_component");
        }
        let mut exact = file[..HEADER].to_vec();
        exact.extend_from_slice(&zstd::bulk::compress(&payload, 1).unwrap());
        exact.extend_from_slice(blake3::hash(&exact).as_bytes());
        let back = HeapImage::decode(&exact, &guest, 1 << 30, (&base, TOP)).unwrap();
        assert_eq!(back.heap[BLOCK..3 * BLOCK], [7; 2 * BLOCK]);
    }
}
