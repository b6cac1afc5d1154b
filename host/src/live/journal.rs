//! A live session's step journal: what each successful step changed in the heap, appended
//! after the heap's image file, so that a server keeps a step durably by writing the blocks
//! it changed rather than the whole heap ([`HeapImage`]'s file).
//!
//! The file: a header, `PALIJRNL`, the format version (u32) and the digest an image file ends
//! with (32 bytes: the journal goes with that image and no other); then records, each the
//! memory size after the step (u64), the number of blocks (u32), their indices from the stack
//! top (u32 each, ascending), the blocks (4 KiB each), and a BLAKE3 digest of the previous
//! record's digest (the image's for the first) followed by the record. All integers are
//! little-endian.
//!
//! [`replay`] applies the records in order. A record cut short is the tail of a write that
//! never finished, so of a step never acknowledged: it ends the journal. A whole record whose
//! digest does not match, or whose content does not fit the heap, is damage, refused as
//! `invalid_component`. As with the image, the digest detects damage, not a forger who
//! recomputes it.

use super::image::{BLOCK, HeapImage, WASM_PAGE};
use crate::Error;

const MAGIC: &[u8; 8] = b"PALIJRNL";
const VERSION: u32 = 1;
/// Magic, version and the image's digest.
pub(crate) const HEADER: usize = 8 + 4 + 32;
/// Memory size and block count.
const RECORD_HEAD: usize = 8 + 4;
const DIGEST: usize = 32;

/// The journal's header, for the image file that ends with `image_digest`.
pub(crate) fn header(image_digest: &[u8; 32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(image_digest);
    out
}

/// A record of `blocks` (from [`HeapImage::take_changed`]) as they are in `image`, after the
/// record whose digest is `previous`; and its digest. Blocks the memory grew by since
/// `grown_from` (the memory size of the previous record) that hold only zeros are left out:
/// growth fills with zeros.
pub(crate) fn record(
    image: &HeapImage,
    blocks: &[u32],
    grown_from: u64,
    previous: &[u8; 32],
) -> (Vec<u8>, [u8; 32]) {
    let old_blocks = grown_from.saturating_sub(u64::from(image.stack_top)) / BLOCK as u64;
    let kept: Vec<u32> = blocks
        .iter()
        .copied()
        .filter(|&i| u64::from(i) < old_blocks || image.block(i).iter().any(|&b| b != 0))
        .collect();
    let mut out = Vec::with_capacity(RECORD_HEAD + kept.len() * (4 + BLOCK) + DIGEST);
    out.extend_from_slice(&image.memory_size.to_le_bytes());
    out.extend_from_slice(&(kept.len() as u32).to_le_bytes());
    for i in &kept {
        out.extend_from_slice(&i.to_le_bytes());
    }
    for &i in &kept {
        out.extend_from_slice(image.block(i));
    }
    let digest = chained(previous, &out);
    out.extend_from_slice(&digest);
    (out, digest)
}

fn chained(previous: &[u8; 32], record: &[u8]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(previous);
    hasher.update(record);
    *hasher.finalize().as_bytes()
}

/// What [`replay`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Replayed {
    /// The digest of the last record applied (the image's if none was).
    pub head: [u8; 32],
    /// Bytes of the journal that hold its header and the records applied: the rest, if any,
    /// is an unfinished write, to be cut off before the next record is appended.
    pub valid: usize,
    /// The journal belongs to another image (a crash between writing a new image and removing
    /// the old journal): nothing was applied.
    pub stale: bool,
}

/// Apply `journal`'s records to `image` (read from the file that ends with `image_digest`),
/// whose memory may grow to at most `max_memory` bytes.
pub(crate) fn replay(
    journal: &[u8],
    image_digest: &[u8; 32],
    image: &mut HeapImage,
    max_memory: u64,
) -> Result<Replayed, Error> {
    let refused = |why: &str| Error::InvalidComponent {
        detail: format!("the heap's journal is refused: {why}"),
    };
    let mut replayed = Replayed {
        head: *image_digest,
        valid: 0,
        stale: false,
    };
    if journal.len() < HEADER {
        // Cut short while it was first written, before any step was acknowledged.
        return Ok(replayed);
    }
    if &journal[..8] != MAGIC || u32_at(journal, 8) != VERSION {
        return Err(refused("it is not a journal of this version"));
    }
    if &journal[12..HEADER] != image_digest {
        replayed.stale = true;
        return Ok(replayed);
    }
    replayed.valid = HEADER;
    let mut rest = &journal[HEADER..];
    while rest.len() >= RECORD_HEAD {
        let memory_size = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
        let count = u32_at(rest, 8) as usize;
        let Some(len) = count
            .checked_mul(4 + BLOCK)
            .and_then(|n| n.checked_add(RECORD_HEAD + DIGEST))
        else {
            return Err(refused("a record's block count is impossible"));
        };
        if rest.len() < len {
            break; // an unfinished write
        }
        let (record, digest) = rest[..len].split_at(len - DIGEST);
        if chained(&replayed.head, record) != digest {
            return Err(refused("a record's digest does not match its content"));
        }
        apply(record, (memory_size, count), image, max_memory).map_err(refused)?;
        replayed.head = digest.try_into().expect("32 bytes");
        replayed.valid += len;
        rest = &rest[len..];
    }
    Ok(replayed)
}

/// Apply one record (its digest checked) of `count` blocks and memory size `memory_size`.
fn apply(
    record: &[u8],
    (memory_size, count): (u64, usize),
    image: &mut HeapImage,
    max_memory: u64,
) -> Result<(), &'static str> {
    if memory_size > max_memory
        || !memory_size.is_multiple_of(WASM_PAGE)
        || memory_size < image.memory_size
    {
        return Err("a record's memory size is over the limit, not whole pages, or shrinks");
    }
    let blocks_max = (memory_size - u64::from(image.stack_top)) / BLOCK as u64;
    let indices: Vec<u32> = record[RECORD_HEAD..RECORD_HEAD + 4 * count]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    let in_order = indices.windows(2).all(|w| w[0] < w[1]);
    if !in_order || indices.last().is_some_and(|&i| u64::from(i) >= blocks_max) {
        return Err("a record's blocks are out of order or outside its memory");
    }
    let blocks = record[RECORD_HEAD + 4 * count..].chunks_exact(BLOCK);
    image.apply(memory_size, indices.into_iter().zip(blocks));
    Ok(())
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOP: u32 = WASM_PAGE as u32;

    /// An image of four pages, and a journal of two steps: one changes two blocks, the next
    /// grows the memory by a page and writes one block in it.
    fn sample() -> (HeapImage, HeapImage, Vec<u8>, [u8; 32]) {
        let base = vec![0u8; 4 * WASM_PAGE as usize];
        let start = HeapImage::pristine(&base, TOP, None);
        let mut image = start.clone();
        let digest = [9u8; 32];
        let mut journal = header(&digest);
        let mut memory = base.clone();
        memory[TOP as usize + 3] = 1;
        memory[TOP as usize + 5 * BLOCK] = 2;
        image.update(&memory);
        let changed = image.take_changed();
        let (first, head) = record(&image, &changed, 0, &digest);
        journal.extend_from_slice(&first);
        memory.resize(5 * WASM_PAGE as usize, 0);
        memory[4 * WASM_PAGE as usize + 7] = 3;
        image.update(&memory);
        let changed = image.take_changed();
        assert_eq!(changed.len(), 16, "the grown page's blocks");
        let (second, _) = record(&image, &changed, 4 * WASM_PAGE, &head);
        assert_eq!(
            second.len(),
            RECORD_HEAD + 4 + BLOCK + DIGEST,
            "zero blocks left out"
        );
        journal.extend_from_slice(&second);
        (start, image, journal, digest)
    }

    #[test]
    fn a_journal_replays_to_the_heap_it_recorded() {
        let (start, end, journal, digest) = sample();
        let mut image = start.clone();
        let replayed = replay(&journal, &digest, &mut image, 1 << 30).unwrap();
        assert_eq!(replayed.valid, journal.len());
        assert!(!replayed.stale);
        assert_eq!(image.heap, end.heap);
        assert_eq!(image.memory_size, end.memory_size);
    }

    #[test]
    fn a_cut_tail_ends_the_journal_and_damage_is_refused() {
        let (start, _, journal, digest) = sample();
        // Cut inside the second record: the first alone is applied.
        let cut = &journal[..journal.len() - 10];
        let mut image = start.clone();
        let replayed = replay(cut, &digest, &mut image, 1 << 30).unwrap();
        assert_eq!(image.memory_size, 4 * WASM_PAGE);
        assert_eq!(image.heap[3], 1);
        assert!(replayed.valid < cut.len());
        // Another image's journal: stale, nothing applied.
        let mut image = start.clone();
        let stale = replay(&journal, &[8u8; 32], &mut image, 1 << 30).unwrap();
        assert!(stale.stale);
        assert_eq!(image.heap, start.heap);
        // A byte changed in a whole record, or a memory over the limit: refused.
        let code = |journal: &[u8], max: u64| {
            replay(journal, &digest, &mut start.clone(), max)
                .unwrap_err()
                .code()
        };
        let mut flipped = journal.clone();
        flipped[HEADER + RECORD_HEAD + 2] ^= 1;
        assert_eq!(code(&flipped, 1 << 30), "invalid_component");
        assert_eq!(code(&journal, 4 * WASM_PAGE), "invalid_component");
        let mut foreign = journal.clone();
        foreign[0] = b'X';
        assert_eq!(code(&foreign, 1 << 30), "invalid_component");
    }
}
