//! A live session's heap image: the guest's memory above the shadow stack, kept as the blocks
//! that differ from a fresh instance's, and its one file format (hibernation, fork, backups).
//!
//! The file: `PALIHEAP`, the format version (u32), the SHA-256 of the guest build the image
//! belongs to (32 bytes), the memory size in bytes (u64), the number of blocks (u32), the
//! zstd-compressed block indices (u32 each) and blocks, and the SHA-256 of everything before
//! it. All integers are little-endian. [`HeapImage::decode`] checks the digest before it reads
//! anything else: a truncated or altered file is refused as `invalid_component`, never restored.

use crate::Error;
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// Bytes per block: what an image keeps, compares and writes back at a time.
pub(crate) const BLOCK: usize = 4096;

/// Bytes per WebAssembly page.
pub(crate) const WASM_PAGE: u64 = 65536;

const MAGIC: &[u8; 8] = b"PALIHEAP";
const VERSION: u32 = 1;
/// Magic, version, guest digest, memory size and block count.
const HEADER: usize = 8 + 4 + 32 + 8 + 4;
const DIGEST: usize = 32;
/// zstd's level for hibernation: fast, and a QuickJS heap compresses well at it.
const ZSTD_LEVEL: i32 = 1;

/// A heap: the memory size and the blocks above the shadow stack that differ from a fresh
/// instance of the guest. Cheap to clone (the blocks are shared).
#[derive(Clone, Debug)]
pub struct HeapImage {
    pub(crate) memory_size: u64,
    /// Block indices (address / [`BLOCK`]), ascending.
    pub(crate) indices: Arc<[u32]>,
    /// The blocks, [`BLOCK`] bytes each, in the order of `indices`.
    pub(crate) blocks: Arc<[u8]>,
}

impl HeapImage {
    /// The image of `memory` (a whole linear memory) against `base` (a fresh instance's),
    /// from `stack_top` up.
    pub(crate) fn capture(memory: &[u8], base: &[u8], stack_top: u32) -> HeapImage {
        let mut indices = Vec::new();
        let mut blocks = Vec::new();
        let zero = [0u8; BLOCK];
        let first = stack_top as usize / BLOCK;
        for (i, block) in memory.chunks_exact(BLOCK).enumerate().skip(first) {
            let start = i * BLOCK;
            let was = base.get(start..start + BLOCK).unwrap_or(&zero);
            if block != was {
                indices.push(i as u32);
                blocks.extend_from_slice(block);
            }
        }
        HeapImage {
            memory_size: memory.len() as u64,
            indices: indices.into(),
            blocks: blocks.into(),
        }
    }

    /// The image of a fresh instance: nothing differs.
    pub(crate) fn pristine(memory_size: u64) -> HeapImage {
        HeapImage {
            memory_size,
            indices: Arc::new([]),
            blocks: Arc::new([]),
        }
    }

    /// Runs of consecutive blocks: (address, bytes).
    pub(crate) fn runs(&self) -> impl Iterator<Item = (u32, &[u8])> {
        let mut at = 0;
        std::iter::from_fn(move || {
            let first = *self.indices.get(at)?;
            let mut end = at + 1;
            while self.indices.get(end) == Some(&(first + (end - at) as u32)) {
                end += 1;
            }
            let bytes = &self.blocks[at * BLOCK..end * BLOCK];
            at = end;
            Some((first * BLOCK as u32, bytes))
        })
    }

    /// Bytes of linear memory the heap spans.
    pub fn memory_size(&self) -> u64 {
        self.memory_size
    }

    /// Blocks of [`BLOCK`] bytes that differ from a fresh instance.
    pub fn changed_blocks(&self) -> usize {
        self.indices.len()
    }

    /// The image as a file, for `guest` (the SHA-256 of the guest build it belongs to).
    pub(crate) fn encode(&self, guest: &[u8; 32]) -> Vec<u8> {
        let mut payload = Vec::with_capacity(self.indices.len() * 4 + self.blocks.len());
        for index in self.indices.iter() {
            payload.extend_from_slice(&index.to_le_bytes());
        }
        payload.extend_from_slice(&self.blocks);
        let compressed =
            zstd::bulk::compress(&payload, ZSTD_LEVEL).expect("zstd compresses a buffer in memory");
        let mut out = Vec::with_capacity(HEADER + compressed.len() + DIGEST);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(guest);
        out.extend_from_slice(&self.memory_size.to_le_bytes());
        out.extend_from_slice(&(self.indices.len() as u32).to_le_bytes());
        out.extend_from_slice(&compressed);
        let digest = Sha256::digest(&out);
        out.extend_from_slice(&digest);
        out
    }

    /// Read a file [`HeapImage::encode`] wrote for `guest`, whose memory may be at most
    /// `max_memory` bytes and whose blocks lie at or above `stack_top`.
    pub(crate) fn decode(
        bytes: &[u8],
        guest: &[u8; 32],
        max_memory: u64,
        stack_top: u32,
    ) -> Result<HeapImage, Error> {
        let refused = |why: &str| Error::InvalidComponent {
            detail: format!("the heap image is refused: {why}"),
        };
        if bytes.len() < HEADER + DIGEST {
            return Err(refused("it is truncated"));
        }
        let (body, digest) = bytes.split_at(bytes.len() - DIGEST);
        if Sha256::digest(body).as_slice() != digest {
            return Err(refused("its SHA-256 digest does not match its content"));
        }
        if &body[..8] != MAGIC || u32_at(body, 8) != VERSION {
            return Err(refused("it is not a heap image of this version"));
        }
        if &body[12..44] != guest {
            return Err(refused("it belongs to another build of the guest"));
        }
        let memory_size = u64::from_le_bytes(body[44..52].try_into().expect("8 bytes"));
        let count = u32_at(body, 52) as usize;
        if memory_size > max_memory || memory_size % WASM_PAGE != 0 {
            return Err(refused(
                "its memory size is over the policy's limit or not whole pages",
            ));
        }
        let blocks_max = (memory_size as usize / BLOCK).saturating_sub(stack_top as usize / BLOCK);
        if count > blocks_max {
            return Err(refused("it has more blocks than its memory holds"));
        }
        let expected = count * (4 + BLOCK);
        let payload = zstd::bulk::decompress(&body[HEADER..], expected)
            .map_err(|_| refused("its blocks do not decompress"))?;
        if payload.len() != expected {
            return Err(refused("its blocks are not the size its header says"));
        }
        let (index_bytes, blocks) = payload.split_at(count * 4);
        let indices: Vec<u32> = index_bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        let in_order = indices.windows(2).all(|w| w[0] < w[1]);
        let in_range = indices.iter().all(|&i| {
            i as usize >= stack_top as usize / BLOCK && (i as u64 + 1) * BLOCK as u64 <= memory_size
        });
        if !in_order || !in_range {
            return Err(refused("its blocks are out of order or outside its memory"));
        }
        Ok(HeapImage {
            memory_size,
            indices: indices.into(),
            blocks: blocks.into(),
        })
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn capture_keeps_changed_blocks_above_the_stack_in_runs() {
        let (memory, base) = sample();
        let image = HeapImage::capture(&memory, &base, WASM_PAGE as u32);
        assert_eq!(image.changed_blocks(), 3);
        let runs: Vec<_> = image.runs().map(|(at, b)| (at, b.len())).collect();
        assert_eq!(
            runs,
            [(WASM_PAGE as u32, 2 * BLOCK), (4 * WASM_PAGE as u32, BLOCK)]
        );
    }

    #[test]
    fn an_encoded_image_decodes_and_a_damaged_one_is_refused() {
        let (memory, base) = sample();
        let image = HeapImage::capture(&memory, &base, WASM_PAGE as u32);
        let guest = [3u8; 32];
        let file = image.encode(&guest);
        let back = HeapImage::decode(&file, &guest, 1 << 30, WASM_PAGE as u32).unwrap();
        assert_eq!(back.indices, image.indices);
        assert_eq!(back.blocks, image.blocks);
        let code = |bytes: &[u8], guest: &[u8; 32]| {
            HeapImage::decode(bytes, guest, 1 << 30, WASM_PAGE as u32)
                .unwrap_err()
                .code()
        };
        assert_eq!(code(&file[..file.len() - 1], &guest), "invalid_component");
        let mut flipped = file.clone();
        flipped[HEADER + 2] ^= 1;
        assert_eq!(code(&flipped, &guest), "invalid_component");
        assert_eq!(code(&file, &[4u8; 32]), "invalid_component");
        // Over the policy's memory limit.
        let small = HeapImage::decode(&file, &guest, WASM_PAGE, WASM_PAGE as u32);
        assert_eq!(small.unwrap_err().code(), "invalid_component");
    }
}
