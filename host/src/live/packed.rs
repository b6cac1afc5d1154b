//! Heap files compressed for keeping while a session is idle ([`HeapImage::compress`]).
//!
//! A heap file ([`HeapImage`]'s format) stores its blocks whole, so that a wake maps them
//! rather than copying: fast to wake, but as large on disk as the heap. A session idle for
//! long (`palisade serve --hibernate-after`) has its file compressed instead: `PALIHEPZ`, this
//! format's version (u32, little-endian), one zstd frame holding the whole heap file (its
//! length recorded in the frame, and the frame's own checksum), then the heap file's own
//! digest (its last 32 bytes) again, so that a journal chained from the one fits the other.
//!
//! A wake reads either form ([`HeapImage::decode`], [`HeapImage::open`]): a compressed one is
//! decompressed into memory (a copy, never mapped), then read as the heap file it holds, its
//! digest checked as any other's. A file with more than its one frame (zstd would read on
//! into frames that no digest covers), a frame that does not say its length, says one longer
//! than the policy's memory limit allows, or does not decompress to exactly that length is
//! refused as `invalid_component` before anything is restored, as a damaged heap file is.

use super::image::{self, HeapImage};
use crate::Error;

const MAGIC: &[u8; 8] = b"PALIHEPZ";
const VERSION: u32 = 1;
/// Magic and version.
const HEADER: usize = 8 + 4;
const DIGEST: usize = 32;
/// zstd's level: the 16 MiB heap of `palisade bench --live` compresses 6.2 times in 17 ms on
/// one core of the reference machine (level 3: 6.1 times in 31 ms), and a wake from it takes
/// 12.8 ms (docs/sessions.md, "The costs").
const LEVEL: i32 = 1;

impl HeapImage {
    /// The heap file `file` (as [`crate::LiveSession::image`] returns it) compressed for
    /// keeping while its session is idle: [`crate::Palisade::wake_live_session`] and
    /// [`crate::Palisade::wake_live_session_file`] read it as they read `file`, decompressed
    /// into memory rather than mapped. It ends with the same 32-byte digest as `file`. Bytes
    /// that are not a heap file (or already compressed) are refused as `invalid_component`.
    pub fn compress(file: &[u8]) -> Result<Vec<u8>, Error> {
        if !image::is_heap_file(file) {
            return Err(image::refused("it is not a heap file"));
        }
        let mut compressor = zstd::bulk::Compressor::new(LEVEL).map_err(internal)?;
        compressor
            .set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))
            .map_err(internal)?;
        let frame = compressor.compress(file).map_err(internal)?;
        let mut out = Vec::with_capacity(HEADER + frame.len() + DIGEST);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&frame);
        out.extend_from_slice(&file[file.len() - DIGEST..]);
        Ok(out)
    }

    /// Whether `bytes` (a heap file's first 8 bytes or more) begin a file that
    /// [`HeapImage::compress`] wrote.
    pub fn is_compressed(bytes: &[u8]) -> bool {
        is_compressed(bytes)
    }
}

/// The longest a compressed heap file may be, for a heap file of at most `longest` bytes
/// (zstd's bound for bytes that do not compress).
pub(crate) fn longest_packed(longest: usize) -> usize {
    zstd::zstd_safe::compress_bound(longest).saturating_add(HEADER + DIGEST)
}

/// Whether `bytes` are a compressed heap file (by their first bytes alone).
pub(crate) fn is_compressed(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The heap file that the compressed one `bytes` holds, if it is at most `longest` bytes: the
/// frame's length checked before any of it is decompressed, its content after.
pub(crate) fn unpack(bytes: &[u8], longest: usize) -> Result<Vec<u8>, Error> {
    if bytes.len() < HEADER + DIGEST {
        return Err(image::refused("it is truncated"));
    }
    if u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) != VERSION {
        return Err(image::refused(
            "it is not a compressed heap file of a version read here",
        ));
    }
    let (frame, digest) = bytes[HEADER..].split_at(bytes.len() - HEADER - DIGEST);
    // One frame and nothing else: zstd would read on into more frames (skippable ones, or
    // empty ones) that no digest covers.
    if zstd::zstd_safe::find_frame_compressed_size(frame) != Ok(frame.len()) {
        return Err(image::refused(
            "it is not one compressed frame and its digest",
        ));
    }
    let len = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(len)) => len,
        _ => {
            return Err(image::refused(
                "its compressed frame does not say its length",
            ));
        }
    };
    if len > longest as u64 {
        return Err(image::refused(
            "it is larger than the policy's memory limit allows",
        ));
    }
    let mut file = Vec::with_capacity(len as usize);
    let mut decompressor = zstd::bulk::Decompressor::new().map_err(internal)?;
    let done = decompressor.decompress_to_buffer(frame, &mut file);
    if done.is_err() || file.len() as u64 != len {
        return Err(image::refused("its compressed frame is damaged"));
    }
    if !image::is_heap_file(&file) || file[file.len() - DIGEST..] != *digest {
        return Err(image::refused(
            "its compressed frame does not hold the heap file it names",
        ));
    }
    Ok(file)
}

fn internal(e: std::io::Error) -> Error {
    Error::Internal {
        detail: format!("a compressed heap file: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::heap::MapBase;
    use crate::live::image::{BLOCK, WASM_PAGE};

    const TOP: u32 = WASM_PAGE as u32;
    const GUEST: [u8; 32] = [3; 32];
    const LIMIT: u64 = 1 << 30;

    /// A base of four pages, a heap grown to eight with rows of text in it, and its file.
    fn sample() -> (Vec<u8>, HeapImage, Vec<u8>) {
        let base = vec![0u8; 4 * WASM_PAGE as usize];
        let mut memory = base.clone();
        let mut rows = String::new();
        for i in 0..6000 {
            rows.push_str(&format!("row {i}: the quick brown fox\n"));
        }
        memory.resize(8 * WASM_PAGE as usize, 0);
        let at = TOP as usize + BLOCK;
        memory[at..at + rows.len()].copy_from_slice(rows.as_bytes());
        let mut image = HeapImage::pristine(&base, TOP, None);
        image.update(&memory);
        let file = image.encode(&GUEST, &base);
        (base, image, file)
    }

    /// `bytes` decoded from memory and opened from a file: each result's heap, or its code.
    fn both(bytes: &[u8], base: &[u8]) -> [Result<HeapImage, &'static str>; 2] {
        let decoded = HeapImage::decode(bytes, &GUEST, LIMIT, (base, TOP));
        static FILES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("palisade-packed-{}-{n}", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, bytes).unwrap();
        let map_base = MapBase::new(&base[TOP as usize..]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let opened = HeapImage::open(&file, &GUEST, LIMIT, (base, TOP, &map_base));
        std::fs::remove_file(&path).unwrap();
        [decoded, opened].map(|r| r.map_err(|e| e.code()))
    }

    /// Compressed, the file is several times smaller, ends with the same digest, and reads
    /// (from memory and from a file) as the same heap, copied rather than mapped.
    #[test]
    fn a_compressed_heap_file_reads_as_the_file_it_holds() {
        let (base, image, file) = sample();
        let packed = HeapImage::compress(&file).unwrap();
        assert!(
            packed.len() * 4 < file.len(),
            "{} of {}",
            packed.len(),
            file.len()
        );
        assert_eq!(packed[packed.len() - DIGEST..], file[file.len() - DIGEST..]);
        for back in both(&packed, &base) {
            let back = back.unwrap();
            assert_eq!(back.heap, image.heap);
            assert_eq!(back.memory_size, image.memory_size);
            assert!(back.heap.file().is_none(), "copied, not mapped");
        }
    }

    /// Truncated, a bit flipped in its frame, its digest or version changed, its frame's
    /// length unsaid, a terabyte or over the policy's limit, holding bytes that are not a heap file, or
    /// compressed twice: each refused as `invalid_component`, from memory and from a file;
    /// then the file itself still reads.
    #[test]
    fn a_damaged_or_forged_compressed_file_is_refused() {
        let (base, image, file) = sample();
        let packed = HeapImage::compress(&file).unwrap();
        let refused = |bytes: &[u8], why: &str| {
            for result in both(bytes, &base) {
                assert_eq!(result.err(), Some("invalid_component"), "{why}");
            }
        };
        refused(&packed[..packed.len() - 1], "cut short by a byte");
        refused(&packed[..packed.len() / 2], "cut in half");
        refused(&packed[..HEADER + 3], "its header alone");
        let mut flipped = packed.clone();
        flipped[HEADER + 40] ^= 1;
        refused(&flipped, "a bit flipped in the frame");
        let mut digest = packed.clone();
        *digest.last_mut().unwrap() ^= 1;
        refused(&digest, "another digest");
        let mut version = packed.clone();
        version[8] = 2;
        refused(&version, "another version");
        // A frame that does not say its length: zstd's streaming encoder writes none.
        let mut unsaid = MAGIC.to_vec();
        unsaid.extend_from_slice(&VERSION.to_le_bytes());
        let mut encoder = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
        std::io::Write::write_all(&mut encoder, &file).unwrap();
        unsaid.extend_from_slice(&encoder.finish().unwrap());
        unsaid.extend_from_slice(&file[file.len() - DIGEST..]);
        refused(&unsaid, "no length");
        // A frame that says it holds a terabyte (refused before anything is allocated): zstd's
        // magic, a single segment with an 8-byte length, then one empty last block.
        let mut bomb = MAGIC.to_vec();
        bomb.extend_from_slice(&VERSION.to_le_bytes());
        bomb.extend_from_slice(&[0x28, 0xB5, 0x2F, 0xFD, 0xE0]);
        bomb.extend_from_slice(&(1u64 << 40).to_le_bytes());
        bomb.extend_from_slice(&[1, 0, 0]);
        bomb.extend_from_slice(&file[file.len() - DIGEST..]);
        refused(&bomb, "a terabyte");
        // A heap file longer than a 64 KiB limit allows.
        let small = HeapImage::decode(&packed, &GUEST, WASM_PAGE, (&base, TOP));
        assert_eq!(small.unwrap_err().code(), "invalid_component");
        // Bytes that are not a heap file, compressed as one would be.
        let mut other = file.clone();
        other[..8].copy_from_slice(b"NOTAHEAP");
        let frame = zstd::bulk::compress(&other, 1).unwrap();
        let mut foreign = MAGIC.to_vec();
        foreign.extend_from_slice(&VERSION.to_le_bytes());
        foreign.extend_from_slice(&frame);
        foreign.extend_from_slice(&file[file.len() - DIGEST..]);
        refused(&foreign, "not a heap file inside");
        assert_eq!(
            HeapImage::compress(&packed).unwrap_err().code(),
            "invalid_component",
            "compressed twice"
        );
        for back in both(&file, &base) {
            assert_eq!(back.unwrap().heap, image.heap);
        }
    }
    /// A zstd frame written by hand: its header (a single segment, `declared` as its 8-byte
    /// length, `dict` as its 4-byte dictionary id when given), then `content` in raw blocks.
    fn raw_frame(content: &[u8], declared: u64, dict: Option<u32>) -> Vec<u8> {
        let mut out = vec![0x28, 0xB5, 0x2F, 0xFD];
        out.push(0xE0 | if dict.is_some() { 3 } else { 0 });
        if let Some(id) = dict {
            out.extend_from_slice(&id.to_le_bytes());
        }
        out.extend_from_slice(&declared.to_le_bytes());
        let chunks: Vec<&[u8]> = content.chunks(1 << 17).collect();
        for (i, chunk) in chunks.iter().enumerate() {
            let last = u32::from(i + 1 == chunks.len());
            out.extend_from_slice(&(last | (chunk.len() as u32) << 3).to_le_bytes()[..3]);
            out.extend_from_slice(chunk);
        }
        out
    }

    /// `frames` between this format's header and the digest `file` ends with.
    fn packed_of(frames: &[&[u8]], file: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&VERSION.to_le_bytes());
        frames.iter().for_each(|frame| out.extend_from_slice(frame));
        out.extend_from_slice(&file[file.len() - DIGEST..]);
        out
    }

    /// Crafted frames: the one frame followed by an empty frame, a skippable frame or other
    /// bytes, a skippable frame first, a frame saying a shorter length than its blocks hold,
    /// one naming a dictionary, and the heap file of another guest build (its digest as the
    /// trailer): each refused as `invalid_component`, from memory and from a file; the same
    /// frame written by hand and alone reads, as does the file itself.
    #[test]
    fn crafted_compressed_frames_are_refused() {
        let (base, image, file) = sample();
        let len = file.len() as u64;
        let refused = |bytes: &[u8], why: &str| {
            for result in both(bytes, &base) {
                assert_eq!(result.err(), Some("invalid_component"), "{why}");
            }
        };
        let frame = HeapImage::compress(&file).unwrap()[HEADER..].to_vec();
        let frame = &frame[..frame.len() - DIGEST];
        let empty = zstd::bulk::compress(&[], 1).unwrap();
        let skippable = [&[0x50, 0x2A, 0x4D, 0x18][..], &4u32.to_le_bytes(), b"junk"].concat();
        refused(&packed_of(&[frame, &empty], &file), "an empty frame after");
        refused(
            &packed_of(&[frame, &skippable], &file),
            "a skippable frame after",
        );
        refused(&packed_of(&[frame, b"junk"], &file), "other bytes after");
        refused(
            &packed_of(&[&skippable, frame], &file),
            "a skippable frame first",
        );
        let short = raw_frame(&file, len - 4096, None);
        refused(&packed_of(&[&short], &file), "more than it says");
        let dict = raw_frame(&file, len, Some(7));
        refused(&packed_of(&[&dict], &file), "a dictionary named");
        let other = image.encode(&[4; 32], &base);
        let frame_of_other = zstd::bulk::compress(&other, 1).unwrap();
        refused(&packed_of(&[&frame_of_other], &other), "another guest's");
        let by_hand = packed_of(&[&raw_frame(&file, len, None)], &file);
        for back in both(&by_hand, &base).into_iter().chain(both(&file, &base)) {
            assert_eq!(back.unwrap().heap, image.heap);
        }
    }
}
