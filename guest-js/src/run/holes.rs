//! The snapshot's free chunks, taken before it is made.
//!
//! Building the runtime frees memory as well as allocating it, and wasi-libc's allocator
//! (dlmalloc) hands those free chunks out first, best fit. Left in the snapshot, they are
//! spread over the whole heap, so the short-lived blocks of a call (the compiler's, a step's
//! input, the result's) land on dozens of pages that otherwise only hold the runtime's
//! long-lived objects. Each page a call writes costs: a copy on first write in a fresh
//! instance, a comparison with the session's image after a live session's step
//! (`host/src/live/written.rs`). [`take`] allocates every free chunk below the top of the heap
//! and keeps it, so that what calls allocate comes from the top, a few pages together. It keeps
//! the bytes of those chunks (tens of KiB, already part of the memory; the memory does not
//! grow) and never frees them.

/// dlmalloc's chunk layout in wasi-libc (`MALLOC_ALIGNMENT` 16, a 32-bit `size_t`): each chunk
/// starts with the previous chunk's size and its own head (size and flag bits); the memory it
/// hands out starts 8 bytes in, aligned to 16.
const HEAD: usize = 4;
const MEMORY_OFFSET: usize = 8;
const ALIGNMENT: usize = 16;
const FLAG_BITS: usize = 7;
/// The top chunk ends this close to the heap's end, before the segment's footer.
const TOP_FOOTER_AT_MOST: usize = 64;

/// Allocate, and keep, every free chunk below the heap's top chunk. Does nothing when the heap
/// is not laid out as expected (a check that can only fail when wasi-libc's allocator changes).
/// Run last before each snapshot: the guest's (`init`) and a compiled script's (`preload`).
pub(super) fn take() {
    let Some(top) = top_chunk() else {
        return;
    };
    // Largest first, so that a large free chunk is taken in one piece; requests of 8 bytes
    // (the smallest chunk, 16 bytes) then take whatever is left. A block at or above the top
    // chunk came from the top: it is given back and the next size tried. No request is as
    // large as the top chunk, so none grows the memory.
    for shift in (4..=16).rev() {
        let chunk = 1usize << shift;
        if chunk >= top.size {
            continue;
        }
        loop {
            let block = allocate(chunk - MEMORY_OFFSET);
            if block.is_null() {
                break;
            }
            if block as usize >= top.at {
                release(block);
                break;
            }
        }
    }
}

/// The heap's top chunk: where it starts, and its size.
struct Top {
    at: usize,
    size: usize,
}

// The linker's start of the heap, and wasi-libc's allocator.
unsafe extern "C" {
    static __heap_base: u8;
    fn sbrk(increment: isize) -> *mut u8;
    fn malloc(bytes: usize) -> *mut u8;
    fn free(block: *mut u8);
}

/// The chunks are walked from the heap's base (the linker's `__heap_base`) to the one that
/// ends at the memory's end, the top chunk.
#[allow(unsafe_code)]
fn top_chunk() -> Option<Top> {
    // SAFETY: `sbrk(0)` only reads the memory's size; the address of `__heap_base` is taken,
    // its byte never read.
    let (base, end) = unsafe { (&raw const __heap_base as usize, sbrk(0) as usize) };
    let mut chunk = base + (ALIGNMENT - (base + MEMORY_OFFSET) % ALIGNMENT) % ALIGNMENT;
    loop {
        if chunk + MEMORY_OFFSET > end {
            return None;
        }
        // SAFETY: the head is inside the memory (checked above) and aligned to 4.
        let head = unsafe { ((chunk + HEAD) as *const usize).read() };
        let size = head & !FLAG_BITS;
        if size < ALIGNMENT || size > end - chunk {
            return None;
        }
        if chunk + size + TOP_FOOTER_AT_MOST >= end {
            return Some(Top { at: chunk, size });
        }
        if !size.is_multiple_of(ALIGNMENT) {
            return None;
        }
        chunk += size;
    }
}

#[allow(unsafe_code)]
fn allocate(bytes: usize) -> *mut u8 {
    // SAFETY: a plain allocation; the block is kept or given back by `release`.
    unsafe { malloc(bytes) }
}

#[allow(unsafe_code)]
fn release(block: *mut u8) {
    // SAFETY: `block` came from `allocate` and is given back once.
    unsafe { free(block) }
}
