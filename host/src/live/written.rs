//! Which pages of a live instance's memory a call wrote, told by the kernel: the memory is
//! registered with a userfaultfd in its asynchronous write-protect mode (Linux 6.7+), so the
//! first write to each protected page is resolved in the kernel, without a handler, and marks
//! the page written; after a call, one `PAGEMAP_SCAN` lists the written pages and protects them
//! again. An image update then copies those pages alone, however large the heap.
//!
//! Where the kernel refuses any of it (older kernels, a seccomp filter, another page size),
//! [`WriteTracker::new`] returns `None` and the session compares its whole heap instead.
#![allow(unsafe_code)]

use rustix::fd::OwnedFd;
use rustix::ioctl::{Ioctl, IoctlOutput, Opcode, Updater, opcode};
use std::ffi::c_void;
use std::fs::File;
use std::ops::Range;

/// Bytes per host page: the unit the kernel tracks.
const PAGE: usize = 4096;

// From linux/userfaultfd.h and linux/fs.h (also in linux-raw-sys).
const UFFD_API: u64 = 0xAA;
const UFFD_USER_MODE_ONLY: u32 = 1;
const UFFD_FEATURE_WP_UNPOPULATED: u64 = 1 << 13;
const UFFD_FEATURE_WP_ASYNC: u64 = 1 << 15;
const UFFDIO_REGISTER_MODE_WP: u64 = 1 << 1;
const UFFDIO_WRITEPROTECT_MODE_WP: u64 = 1 << 0;
const PM_SCAN_WP_MATCHING: u64 = 1 << 0;
const PM_SCAN_CHECK_WPASYNC: u64 = 1 << 1;
const PAGE_IS_WRITTEN: u64 = 1 << 1;

#[repr(C)]
struct UffdioApi {
    api: u64,
    features: u64,
    ioctls: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct UffdioRange {
    start: u64,
    len: u64,
}

#[repr(C)]
struct UffdioRegister {
    range: UffdioRange,
    mode: u64,
    ioctls: u64,
}

#[repr(C)]
struct UffdioWriteprotect {
    range: UffdioRange,
    mode: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct PageRegion {
    start: u64,
    end: u64,
    categories: u64,
}

#[repr(C)]
struct PmScanArg {
    size: u64,
    flags: u64,
    start: u64,
    end: u64,
    walk_end: u64,
    vec: u64,
    vec_len: u64,
    max_pages: u64,
    category_inverted: u64,
    category_mask: u64,
    category_anyof_mask: u64,
    return_mask: u64,
}

const UFFDIO_API: Opcode = opcode::read_write::<UffdioApi>(0xAA, 0x3F);
const UFFDIO_REGISTER: Opcode = opcode::read_write::<UffdioRegister>(0xAA, 0x00);
const UFFDIO_WRITEPROTECT: Opcode = opcode::read_write::<UffdioWriteprotect>(0xAA, 0x06);

/// `PAGEMAP_SCAN`, whose result is the number of regions it filled.
struct Scan<'a>(&'a mut PmScanArg);

// SAFETY: the opcode is PAGEMAP_SCAN's, `_IOWR('f', 16, struct pm_scan_arg)`, and the pointer
// is to a `pm_scan_arg` whose `vec` points at `vec_len` writable regions (see `written`).
unsafe impl Ioctl for Scan<'_> {
    type Output = usize;
    const IS_MUTATING: bool = true;

    fn opcode(&self) -> Opcode {
        opcode::read_write::<PmScanArg>(b'f', 16)
    }

    fn as_ptr(&mut self) -> *mut c_void {
        (&raw mut *self.0).cast()
    }

    unsafe fn output_from_ptr(out: IoctlOutput, _: *mut c_void) -> rustix::io::Result<usize> {
        usize::try_from(out).map_err(|_| rustix::io::Errno::INVAL)
    }
}

/// Write tracking over a range of an instance's linear memory. The range is the instance's
/// (which lives as long as its store, and never moves: the live engine's memories are
/// reserved whole); dropping the tracker closes the userfaultfd, which lifts the protection.
pub(crate) struct WriteTracker {
    uffd: OwnedFd,
    pagemap: File,
    /// The memory's first byte.
    base: usize,
    /// Offsets in the memory of the tracked pages.
    tracked: Range<usize>,
    regions: Vec<PageRegion>,
}

// SAFETY: the tracker holds descriptors and the address of a memory it does not read or
// write; the store that owns the memory moves between threads with it.
unsafe impl Send for WriteTracker {}
unsafe impl Sync for WriteTracker {}

impl WriteTracker {
    /// Track writes to `memory` (an instance's whole linear memory) from offset `from` to its
    /// end, every page protected from now on. `None` where the kernel does not offer it.
    pub(crate) fn new(memory: &[u8], from: usize) -> Option<WriteTracker> {
        if rustix::param::page_size() != PAGE {
            return None;
        }
        let flags = rustix::mm::UserfaultfdFlags::CLOEXEC
            | rustix::mm::UserfaultfdFlags::from_bits_retain(UFFD_USER_MODE_ONLY);
        // SAFETY: the descriptor is used only for the asynchronous write protection of this
        // instance's memory, which changes no byte of it.
        let uffd = unsafe { rustix::mm::userfaultfd(flags) }.ok()?;
        let mut api = UffdioApi {
            api: UFFD_API,
            features: UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED,
            ioctls: 0,
        };
        // SAFETY: UFFDIO_API takes a `uffdio_api`.
        unsafe { rustix::ioctl::ioctl(&uffd, Updater::<UFFDIO_API, _>::new(&mut api)) }.ok()?;
        let pagemap = File::open("/proc/self/pagemap").ok()?;
        let start = from / PAGE * PAGE;
        let mut tracker = WriteTracker {
            uffd,
            pagemap,
            base: memory.as_ptr() as usize,
            tracked: start..start,
            regions: vec![PageRegion::default(); 256],
        };
        tracker.cover(memory).ok()?;
        Some(tracker)
    }

    /// Extend tracking to the end of `memory` (after it grew): register and protect the pages
    /// past what is tracked.
    pub(crate) fn cover(&mut self, memory: &[u8]) -> rustix::io::Result<()> {
        debug_assert_eq!(memory.as_ptr() as usize, self.base, "the memory moved");
        let end = memory.len() / PAGE * PAGE;
        if end <= self.tracked.end {
            return Ok(());
        }
        let range = UffdioRange {
            start: (self.base + self.tracked.end) as u64,
            len: (end - self.tracked.end) as u64,
        };
        let mut register = UffdioRegister {
            range,
            mode: UFFDIO_REGISTER_MODE_WP,
            ioctls: 0,
        };
        let mut protect = UffdioWriteprotect {
            range,
            mode: UFFDIO_WRITEPROTECT_MODE_WP,
        };
        // SAFETY: the range lies within the instance's memory, mapped while its store lives;
        // registering and protecting it changes no byte, and a write to it is resolved by the
        // kernel at once (asynchronous mode).
        unsafe {
            rustix::ioctl::ioctl(
                &self.uffd,
                Updater::<UFFDIO_REGISTER, _>::new(&mut register),
            )?;
            rustix::ioctl::ioctl(
                &self.uffd,
                Updater::<UFFDIO_WRITEPROTECT, _>::new(&mut protect),
            )?;
        }
        self.tracked.end = end;
        Ok(())
    }

    /// The ranges (offsets in the memory) of the pages written since the last call, in order,
    /// each protected again; appended to `out`.
    pub(crate) fn written(&mut self, out: &mut Vec<Range<usize>>) -> rustix::io::Result<()> {
        let end = (self.base + self.tracked.end) as u64;
        let mut start = (self.base + self.tracked.start) as u64;
        while start < end {
            let mut arg = PmScanArg {
                size: size_of::<PmScanArg>() as u64,
                flags: PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
                start,
                end,
                walk_end: 0,
                vec: self.regions.as_mut_ptr() as u64,
                vec_len: self.regions.len() as u64,
                max_pages: 0,
                category_inverted: 0,
                category_mask: PAGE_IS_WRITTEN,
                category_anyof_mask: 0,
                return_mask: PAGE_IS_WRITTEN,
            };
            // SAFETY: `vec` points at `vec_len` regions this tracker owns; the scanned range is
            // the tracked part of the instance's memory.
            let filled = unsafe { rustix::ioctl::ioctl(&self.pagemap, Scan(&mut arg)) }?;
            out.extend(
                self.regions[..filled.min(self.regions.len())]
                    .iter()
                    .map(|r| (r.start as usize - self.base)..(r.end as usize - self.base)),
            );
            // The walk stops early when the regions are full; go on from where it stopped.
            start = arg.walk_end.max(start + PAGE as u64);
            if arg.walk_end >= end {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_written_are_reported_once_each() {
        // SAFETY: a fresh private mapping, unmapped at the end of the test.
        let ptr = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                64 * PAGE,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::PRIVATE,
            )
        }
        .unwrap();
        // SAFETY: the mapping is 64 pages, readable and writable, and nothing else uses it.
        let memory = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u8>(), 64 * PAGE) };
        let Some(mut tracker) = WriteTracker::new(memory, PAGE + 100) else {
            eprintln!("no userfaultfd write protection here: skipped");
            return;
        };
        for page in [0, 1, 5, 6, 40] {
            memory[page * PAGE + 7] = 1;
        }
        let mut written = Vec::new();
        tracker.written(&mut written).unwrap();
        assert_eq!(
            written,
            vec![PAGE..2 * PAGE, 5 * PAGE..7 * PAGE, 40 * PAGE..41 * PAGE]
        );
        written.clear();
        tracker.written(&mut written).unwrap();
        assert!(written.is_empty(), "protected again");
        memory[63 * PAGE] = 2;
        tracker.written(&mut written).unwrap();
        assert_eq!(written, vec![63 * PAGE..64 * PAGE]);
        drop(tracker);
        // SAFETY: the mapping made above, no longer borrowed.
        unsafe { rustix::mm::munmap(ptr, 64 * PAGE) }.unwrap();
    }
}
