//! Which pages of a live instance's memory a call wrote, told by the kernel: the memory is
//! registered with a userfaultfd in its asynchronous write-protect mode (Linux 6.7+), so the
//! first write to each protected page is resolved in the kernel, without a handler, and marks
//! the page written; after a call, one `PAGEMAP_SCAN` lists the pages written or left
//! writable, and an image update compares and copies those pages alone, however large the heap.
//! A page that keeps coming back unchanged is protected again ([`WriteTracker::settle`]).
//!
//! A write to a protected page is a page fault, counted to the thread that made it. So when
//! the threads that ran a call took no page fault while they ran it ([`counting_faults`]), the
//! call wrote no protected page, and the pages it may have written are those left writable,
//! which the tracker knows without asking the kernel ([`WriteTracker::writable_pages`]): the scan,
//! which walks the page table of the whole heap, is skipped.
//!
//! Where the kernel refuses any of it (older kernels, a seccomp filter, another page size),
//! [`WriteTracker::new`] returns the refusal and the session compares its whole heap instead.
#![allow(unsafe_code)]

use linux_raw_sys::general::{
    PAGE_IS_WRITTEN, PM_SCAN_CHECK_WPASYNC, UFFD_API, UFFD_FEATURE_WP_ASYNC,
    UFFD_FEATURE_WP_UNPOPULATED, UFFD_USER_MODE_ONLY, UFFDIO_REGISTER_MODE_WP,
    page_region as PageRegion, pm_scan_arg as PmScanArg, uffdio_api as UffdioApi,
    uffdio_range as UffdioRange, uffdio_register as UffdioRegister,
    uffdio_writeprotect as UffdioWriteprotect,
};
use rustix::fd::OwnedFd;
use rustix::io::Errno;
use rustix::ioctl::{Ioctl, IoctlOutput, Opcode, Updater, opcode};
use std::ffi::c_void;
use std::fs::File;
use std::ops::Range;

/// Bytes per host page: the unit the kernel tracks.
const PAGE: usize = 4096;

/// From linux/userfaultfd.h (not in linux-raw-sys).
const UFFDIO_WRITEPROTECT_MODE_WP: u32 = 1 << 0;

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
        usize::try_from(out).map_err(|_| Errno::INVAL)
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
    /// Each tracked page's state: [`PROTECTED`], or left writable (a page written by a recent
    /// step) and how many scans in a row it came back unchanged.
    pages: Vec<u8>,
    /// How many times each tracked page was protected again, up to [`DOUBLINGS`]: once written
    /// again, it is left writable for [`QUIET`] unchanged scans doubled that many times.
    doublings: Vec<u8>,
    /// How many tracked pages are left writable.
    writable: usize,
    /// The pages left writable after the last [`WriteTracker::settle`], as ranges of offsets
    /// in order: with the pages written since, all a scan would report.
    writable_pages: Vec<Range<usize>>,
}

/// A page's state when it is write-protected.
const PROTECTED: u8 = u8::MAX;

/// Scans in a row a writable page may come back unchanged before it is protected again, the
/// first time. A page that steps keep writing is left writable: its write costs no fault, and
/// each scan reports it (to be compared), which costs less than a fault.
const QUIET: u8 = 4;

/// How many times a page's quiet period doubles: each time a page is written again after it
/// was protected again, it is left writable twice as long, up to `QUIET << DOUBLINGS` scans.
/// A page written once (a step that fills memory) costs [`QUIET`] comparisons; a page every
/// step writes, often with the bytes it had (the engine's own state), soon costs one
/// comparison a step and no fault, where a period that stays short makes it fault again and
/// again, and protecting it again costs more than comparing it (a `PAGEMAP_SCAN` of 29 pages a
/// step for `n += 1`: 15.5 µs of protection with 4 scans, 4.4 µs with 64, release).
const DOUBLINGS: u8 = 5;

/// The most pages left writable after a scan (4 MiB): past it, every page that came back
/// unchanged is protected at once. So a script cannot keep more of the heap writable (each
/// such page compared after every step, work no fuel counts) than this, plus what its step
/// changed, which it paid for.
const MOST_WRITABLE: usize = 1024;

impl WriteTracker {
    /// Track writes to `memory` (an instance's whole linear memory) from offset `from` to its
    /// end, every page protected from now on; the kernel's refusal where it does not offer it.
    pub(crate) fn new(memory: &[u8], from: usize) -> Result<WriteTracker, Errno> {
        if rustix::param::page_size() != PAGE {
            return Err(Errno::NOSYS);
        }
        let flags = rustix::mm::UserfaultfdFlags::CLOEXEC
            | rustix::mm::UserfaultfdFlags::from_bits_retain(UFFD_USER_MODE_ONLY);
        // SAFETY: the descriptor is used only for the asynchronous write protection of this
        // instance's memory, which changes no byte of it.
        let uffd = unsafe { rustix::mm::userfaultfd(flags) }?;
        let mut api = UffdioApi {
            api: u64::from(UFFD_API),
            features: u64::from(UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED),
            ioctls: 0,
        };
        // SAFETY: UFFDIO_API takes a `uffdio_api`.
        unsafe { rustix::ioctl::ioctl(&uffd, Updater::<UFFDIO_API, _>::new(&mut api)) }?;
        // Without procfs there is nothing to read the written pages from.
        let pagemap = File::open("/proc/self/pagemap").map_err(|_| Errno::ACCESS)?;
        let start = from / PAGE * PAGE;
        let mut tracker = WriteTracker {
            uffd,
            pagemap,
            base: memory.as_ptr() as usize,
            tracked: start..start,
            regions: vec![
                PageRegion {
                    start: 0,
                    end: 0,
                    categories: 0
                };
                256
            ],
            pages: Vec::new(),
            doublings: Vec::new(),
            writable: 0,
            writable_pages: Vec::new(),
        };
        tracker.cover(memory)?;
        Ok(tracker)
    }

    /// Extend tracking to the end of `memory` (after it grew): register and protect the pages
    /// past what is tracked.
    pub(crate) fn cover(&mut self, memory: &[u8]) -> rustix::io::Result<()> {
        debug_assert_eq!(memory.as_ptr() as usize, self.base, "the memory moved");
        let end = memory.len() / PAGE * PAGE;
        if end <= self.tracked.end {
            return Ok(());
        }
        let range = self.tracked.end..end;
        let mut register = UffdioRegister {
            range: self.uffd_range(&range),
            mode: u64::from(UFFDIO_REGISTER_MODE_WP),
            ioctls: 0,
        };
        // SAFETY: the range lies within the instance's memory, mapped while its store lives;
        // registering it changes no byte.
        unsafe {
            rustix::ioctl::ioctl(
                &self.uffd,
                Updater::<UFFDIO_REGISTER, _>::new(&mut register),
            )?;
        }
        self.protect(range)?;
        self.tracked.end = end;
        let count = (self.tracked.end - self.tracked.start) / PAGE;
        self.pages.resize(count, PROTECTED);
        self.doublings.resize(count, 0);
        Ok(())
    }

    /// The ranges (offsets in the memory) of the pages that may have been written since the
    /// last scan, in order, appended to `out`: those written while protected, and those left
    /// writable. Then [`WriteTracker::settle`] says which of them came back unchanged.
    pub(crate) fn written(&mut self, out: &mut Vec<Range<usize>>) -> rustix::io::Result<()> {
        let end = (self.base + self.tracked.end) as u64;
        let mut start = (self.base + self.tracked.start) as u64;
        while start < end {
            let mut arg = PmScanArg {
                size: size_of::<PmScanArg>() as u64,
                flags: u64::from(PM_SCAN_CHECK_WPASYNC),
                start,
                end,
                walk_end: 0,
                vec: self.regions.as_mut_ptr() as u64,
                vec_len: self.regions.len() as u64,
                max_pages: 0,
                category_inverted: 0,
                category_mask: u64::from(PAGE_IS_WRITTEN),
                category_anyof_mask: 0,
                return_mask: u64::from(PAGE_IS_WRITTEN),
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

    /// The pages left writable after the last [`WriteTracker::settle`], as ranges of offsets
    /// in order: with the pages written since, all a scan would report.
    pub(crate) fn writable_pages(&self) -> &[Range<usize>] {
        &self.writable_pages
    }

    /// The kernel's form of `range` (offsets in the memory).
    fn uffd_range(&self, range: &Range<usize>) -> UffdioRange {
        UffdioRange {
            start: (self.base + range.start) as u64,
            len: range.len() as u64,
        }
    }

    /// Write-protect the pages of `range` (offsets in the memory, registered).
    fn protect(&self, range: Range<usize>) -> rustix::io::Result<()> {
        let mut protect = UffdioWriteprotect {
            range: self.uffd_range(&range),
            mode: u64::from(UFFDIO_WRITEPROTECT_MODE_WP),
        };
        // SAFETY: the range lies within the instance's memory, mapped while its store lives;
        // protecting it changes no byte, and a write to it is resolved by the kernel at once
        // (asynchronous mode).
        unsafe {
            rustix::ioctl::ioctl(
                &self.uffd,
                Updater::<UFFDIO_WRITEPROTECT, _>::new(&mut protect),
            )
        }
    }

    /// After [`WriteTracker::written`] reported `written`: `unchanged` (ascending offsets) are
    /// the pages among them whose bytes the step left as they were. A page unchanged for its
    /// quiet period ([`QUIET`], doubled each time it was written after it was protected again)
    /// is protected again, and every unchanged one while more than [`MOST_WRITABLE`] pages are
    /// writable; a changed one starts counting again.
    pub(crate) fn settle(
        &mut self,
        written: &[Range<usize>],
        unchanged: &[usize],
    ) -> rustix::io::Result<()> {
        let mut unchanged = unchanged.iter().peekable();
        for page in written.iter().flat_map(|r| r.clone().step_by(PAGE)) {
            let state = &mut self.pages[(page - self.tracked.start) / PAGE];
            if *state == PROTECTED {
                // Its first write lifted the protection: written again, if protected again.
                *state = 0;
                self.writable += 1;
            }
            *state = match unchanged.next_if(|&&u| u == page) {
                Some(_) => *state + 1,
                None => 0,
            };
        }
        let over = self.writable > MOST_WRITABLE;
        let mut protect: Vec<Range<usize>> = Vec::new();
        self.writable_pages.clear();
        for page in written.iter().flat_map(|r| r.clone().step_by(PAGE)) {
            let at = (page - self.tracked.start) / PAGE;
            let (state, doublings) = (&mut self.pages[at], &mut self.doublings[at]);
            let quiet = *state >= QUIET << *doublings;
            let list = if *state == 0 || !(quiet || over) {
                &mut self.writable_pages
            } else {
                if quiet {
                    *doublings = (*doublings + 1).min(DOUBLINGS);
                }
                *state = PROTECTED;
                self.writable -= 1;
                &mut protect
            };
            match list.last_mut() {
                Some(last) if last.end == page => last.end += PAGE,
                _ => list.push(page..page + PAGE),
            }
        }
        for range in protect {
            self.protect(range)?;
        }
        Ok(())
    }
}

/// Run `call`, counting the page faults the threads that poll it take while they do: its
/// output, and the count (`None` where the kernel did not say).
///
/// A count of zero means the call wrote no protected page only while every write to the
/// instance's memory during the call is made by the thread polling it, inside the poll: the
/// guest and wasmtime's host code do (the store is theirs alone while the call runs). A host
/// function that wrote guest memory from another thread (`spawn_blocking`, a kernel worker, a
/// page pinned earlier for direct I/O) would break that, and must end the skipping of scans.
///
/// A poll starts from the count its thread's last counted poll ended with ([`Carried`]), where
/// it can, rather than reading it again: what the thread did between the two (another task's
/// faults) can only add to the count, never hide one of this poll's.
pub(crate) async fn counting_faults<F: std::future::Future>(call: F) -> (F::Output, Option<u64>) {
    let mut call = std::pin::pin!(call);
    let mut faults = Some(0);
    let output = std::future::poll_fn(|cx| {
        let carried = CARRIED.get();
        let (before, from_carry) = match carried.count.filter(|_| carried.anew == 0) {
            Some(count) => (Some(count), true),
            None => (thread_faults(), false),
        };
        let poll = call.as_mut().poll(cx);
        let after = thread_faults();
        CARRIED.set(carried.next(after, from_carry));
        faults = faults
            .zip(before.zip(after))
            .map(|(sum, (before, after))| sum + after.saturating_sub(before));
        poll
    })
    .await;
    (output, faults)
}

/// A thread's fault count as its last counted poll ended, from which its next counted poll
/// starts: one reading a poll instead of two (`getrusage` costs about 0.23 µs). A count carried
/// over faults the thread took between two polls (a fresh call's instance, run between two
/// steps) makes the second poll's count more than its own, and so its image update scans when
/// it need not. When that scan then finds no page written beyond those known writable
/// ([`carried_in_vain`]), the thread's next `anew` polls read the count anew, and each time it
/// happens again that period doubles, up to [`Carried::LONGEST`]: a thread that runs other work
/// between steps soon reads twice a poll again, with a needless scan (about 1.7 µs) at most once
/// in `LONGEST` polls; one that runs steps alone reads once.
#[derive(Clone, Copy)]
struct Carried {
    count: Option<u64>,
    /// Whether the thread's last counted poll started from a carried count.
    from_carry: bool,
    /// Polls left that read the count anew.
    anew: u32,
    /// The polls that read anew the next time a carried count is found to have cost a scan.
    period: u32,
}

impl Carried {
    const SHORTEST: u32 = 16;
    const LONGEST: u32 = 1024;

    /// After a poll that ended at `count`, started from a carried count (`from_carry`) or not.
    fn next(self, count: Option<u64>, from_carry: bool) -> Carried {
        Carried {
            count,
            from_carry,
            anew: self.anew.saturating_sub(u32::from(!from_carry)),
            period: self.period,
        }
    }
}

/// The scan after the calling thread's last counted poll found no page written beyond those
/// known writable: where that poll started from a carried count, the count grew by what the
/// thread did before the poll, and the thread reads its count anew for a while ([`Carried`]).
pub(crate) fn carried_in_vain() {
    let mut carried = CARRIED.get();
    if carried.from_carry {
        carried.anew = carried.period;
        carried.period = (carried.period * 2).min(Carried::LONGEST);
        carried.from_carry = false;
        CARRIED.set(carried);
    }
}

thread_local! {
    static CARRIED: std::cell::Cell<Carried> = const {
        std::cell::Cell::new(Carried {
            count: None,
            from_carry: false,
            anew: 0,
            period: Carried::SHORTEST,
        })
    };
    /// How many times this thread read its fault count (tests).
    #[cfg(test)]
    static READINGS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The page faults this thread has taken, major and minor (`getrusage(RUSAGE_THREAD)`).
fn thread_faults() -> Option<u64> {
    #[cfg(test)]
    READINGS.set(READINGS.get() + 1);
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: `getrusage` fills the `rusage` it is given, and only that.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: filled by the successful call above.
    let usage = unsafe { usage.assume_init() };
    let count = |n: libc::c_long| u64::try_from(n).ok();
    Some(count(usage.ru_minflt)? + count(usage.ru_majflt)?)
}

/// Where a test of tracking skips: the kernel refused with `refused`. From Linux 6.7 on, only
/// a refusal the system makes (permission: a seccomp filter, a sysctl; no procfs; userfaultfd
/// not built in) skips; any other is a defect here.
#[cfg(test)]
pub(crate) fn required_or_skipped(refused: Errno) {
    let release = rustix::system::uname();
    let release = release.release().to_string_lossy();
    let mut numbers = release.split(|c: char| !c.is_ascii_digit());
    let version = (
        numbers
            .next()
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(0),
        numbers
            .next()
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(0),
    );
    assert!(
        version < (6, 7) || [Errno::PERM, Errno::ACCESS, Errno::NOSYS].contains(&refused),
        "Linux {release} offers write tracking, yet it was refused: {refused}"
    );
    eprintln!("no write tracking here (Linux {release}, {refused}): skipped");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tracker over a fresh private mapping of `pages` pages, which the test unmaps.
    fn tracked(pages: usize) -> Option<(&'static mut [u8], WriteTracker)> {
        tracked_with(pages, PAGE + 100, |_| {})
    }

    /// A tracker from offset `from` over a fresh private mapping of `pages` pages, which
    /// `before` writes first, which the test unmaps.
    fn tracked_with(
        pages: usize,
        from: usize,
        before: impl FnOnce(&mut [u8]),
    ) -> Option<(&'static mut [u8], WriteTracker)> {
        // SAFETY: a fresh private mapping, unmapped by the test.
        let ptr = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                pages * PAGE,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::PRIVATE,
            )
        }
        .unwrap();
        // SAFETY: the mapping is `pages` pages, readable and writable, and nothing else uses it.
        let memory = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u8>(), pages * PAGE) };
        before(memory);
        match WriteTracker::new(memory, from) {
            Ok(tracker) => Some((memory, tracker)),
            Err(refused) => {
                required_or_skipped(refused);
                // SAFETY: the mapping made above, no longer borrowed.
                unsafe { rustix::mm::munmap(ptr, pages * PAGE) }.unwrap();
                None
            }
        }
    }

    #[test]
    fn past_the_most_writable_every_unchanged_page_is_protected_at_once() {
        let pages = MOST_WRITABLE + 200;
        let Some((memory, mut tracker)) = tracked(pages + 1) else {
            return;
        };
        for page in 1..=pages {
            memory[page * PAGE] = 1;
        }
        let mut written = Vec::new();
        tracker.written(&mut written).unwrap();
        assert_eq!(written, vec![PAGE..(pages + 1) * PAGE]);
        // Changed: all left writable, past the most.
        tracker.settle(&written, &[]).unwrap();
        assert_eq!(tracker.writable, pages);
        written.clear();
        tracker.written(&mut written).unwrap();
        let all: Vec<usize> = (1..=pages).map(|p| p * PAGE).collect();
        // Page 7 changed again; every other came back unchanged and is protected at once.
        memory[7 * PAGE] = 2;
        let unchanged: Vec<usize> = all.iter().copied().filter(|&p| p != 7 * PAGE).collect();
        tracker.settle(&written, &unchanged).unwrap();
        assert_eq!(tracker.writable, 1);
        written.clear();
        tracker.written(&mut written).unwrap();
        assert_eq!(written, vec![7 * PAGE..8 * PAGE]);
        let ptr = memory.as_mut_ptr().cast();
        drop(tracker);
        // SAFETY: the mapping `tracked` made, no longer borrowed.
        unsafe { rustix::mm::munmap(ptr, (pages + 1) * PAGE) }.unwrap();
    }

    /// After each settle, the pages the tracker knows to be writable are what a scan reports
    /// when nothing was written: the update that skips the scan sees what it would have.
    #[test]
    fn the_writable_pages_known_are_those_a_scan_reports() {
        let Some((memory, mut tracker)) = tracked(64) else {
            return;
        };
        let (mut written, mut known) = (Vec::new(), Vec::new());
        for round in 0..40usize {
            for page in [1, 2, 9, 30 + round % 7, 50 + round % 3] {
                if round % 3 != 2 && round % (page % 5 + 1) == 0 {
                    memory[page * PAGE + round] = round as u8;
                }
            }
            written.clear();
            if round % 3 == 2 {
                // Nothing written since the last settle: what an update that skips the scan
                // settles from.
                written.extend_from_slice(tracker.writable_pages());
            } else {
                tracker.written(&mut written).unwrap();
            }
            let unchanged: Vec<usize> = written
                .iter()
                .flat_map(|r| r.clone().step_by(PAGE))
                .filter(|page| (page / PAGE).is_multiple_of(2))
                .collect();
            tracker.settle(&written, &unchanged).unwrap();
            written.clear();
            tracker.written(&mut written).unwrap();
            known.clear();
            known.extend_from_slice(tracker.writable_pages());
            assert_eq!(known, written, "round {round}");
        }
        let ptr = memory.as_mut_ptr().cast();
        drop(tracker);
        // SAFETY: the mapping `tracked` made, no longer borrowed.
        unsafe { rustix::mm::munmap(ptr, 64 * PAGE) }.unwrap();
    }

    /// A write to a protected page is a fault counted to the call that made it, in every poll
    /// of the call: pages written before tracking (so present) fault again once protected.
    #[tokio::test]
    async fn a_write_to_a_protected_page_is_a_counted_fault() {
        const PAGES: usize = 16;
        let Some((memory, tracker)) = tracked_with(PAGES, 0, |memory| memory.fill(1)) else {
            return;
        };
        let ptr = memory.as_mut_ptr();
        let (_, faults) = counting_faults(async {
            for page in 0..PAGES / 2 {
                memory[page * PAGE] = 2;
            }
            tokio::task::yield_now().await;
            for page in PAGES / 2..PAGES {
                memory[page * PAGE] = 2;
            }
        })
        .await;
        assert!(faults.is_some_and(|n| n >= PAGES as u64), "{faults:?}");
        drop(tracker);
        // SAFETY: the mapping `tracked_with` made, no longer borrowed.
        unsafe { rustix::mm::munmap(ptr.cast(), PAGES * PAGE) }.unwrap();
    }

    /// A counted poll starts from the count its thread's last counted poll ended with (one
    /// reading a poll); a fault the thread took between two counted polls is counted to the
    /// second, never lost, and the thread then reads the count anew for a while.
    #[tokio::test]
    async fn a_poll_starts_from_the_count_its_threads_last_poll_ended_with() {
        let Some((memory, tracker)) = tracked_with(4, 0, |memory| memory.fill(1)) else {
            return;
        };
        let ptr = memory.as_mut_ptr();
        let readings = async || {
            let before = READINGS.get();
            let (_, faults) = counting_faults(std::future::ready(())).await;
            (READINGS.get() - before, faults)
        };
        CARRIED.set(Carried {
            count: thread_faults(),
            from_carry: false,
            anew: 0,
            period: Carried::SHORTEST,
        });
        assert_eq!(readings().await, (1, Some(0)));
        // Written between two counted polls, by this thread: counted to the second.
        memory[PAGE] = 2;
        let (read, faults) = readings().await;
        assert_eq!(read, 1);
        assert!(faults.is_some_and(|n| n >= 1), "{faults:?}");
        // A scan that finds nothing beyond the pages known writable: the next polls read
        // anew, for twice as many polls the next time.
        carried_in_vain();
        assert_eq!(CARRIED.get().anew, Carried::SHORTEST);
        for _ in 0..Carried::SHORTEST {
            assert_eq!(readings().await, (2, Some(0)));
        }
        assert_eq!(readings().await, (1, Some(0)));
        carried_in_vain();
        assert_eq!(CARRIED.get().anew, 2 * Carried::SHORTEST);
        drop(tracker);
        // SAFETY: the mapping `tracked_with` made, no longer borrowed.
        unsafe { rustix::mm::munmap(ptr.cast(), 4 * PAGE) }.unwrap();
    }

    #[test]
    fn the_pages_written_are_reported_once_each() {
        let Some((memory, mut tracker)) = tracked(64) else {
            return;
        };
        for page in [0, 1, 5, 6, 40] {
            memory[page * PAGE + 7] = 1;
        }
        let mut written = Vec::new();
        tracker.written(&mut written).unwrap();
        let expected = vec![PAGE..2 * PAGE, 5 * PAGE..7 * PAGE, 40 * PAGE..41 * PAGE];
        assert_eq!(written, expected, "page 0 is not tracked");
        // Changed: left writable, so reported at each scan, written or not, until they come
        // back unchanged QUIET scans in a row.
        tracker.settle(&written, &[]).unwrap();
        let all: Vec<usize> = [1, 5, 6, 40].map(|p| p * PAGE).to_vec();
        for _ in 0..QUIET {
            written.clear();
            tracker.written(&mut written).unwrap();
            assert_eq!(written, expected);
            tracker.settle(&written, &all).unwrap();
        }
        written.clear();
        tracker.written(&mut written).unwrap();
        assert!(written.is_empty(), "protected again: {written:?}");
        memory[63 * PAGE] = 2;
        memory[5 * PAGE] = 2;
        tracker.written(&mut written).unwrap();
        assert_eq!(written, vec![5 * PAGE..6 * PAGE, 63 * PAGE..64 * PAGE]);
        // Page 5, written again after it was protected again, stays writable twice as long;
        // page 63, written for the first time, as long as the first time.
        tracker.settle(&written, &[]).unwrap();
        for scan in 1..=2 * QUIET {
            written.clear();
            tracker.written(&mut written).unwrap();
            #[allow(clippy::single_range_in_vec_init)] // one range of pages, not its pages
            let expected = match scan {
                ..=QUIET => vec![5 * PAGE..6 * PAGE, 63 * PAGE..64 * PAGE],
                _ => vec![5 * PAGE..6 * PAGE],
            };
            assert_eq!(written, expected, "scan {scan}");
            tracker.settle(&written, &[5 * PAGE, 63 * PAGE]).unwrap();
        }
        written.clear();
        tracker.written(&mut written).unwrap();
        assert!(written.is_empty(), "protected again: {written:?}");
        let ptr = memory.as_mut_ptr().cast();
        drop(tracker);
        // SAFETY: the mapping `tracked` made, no longer borrowed.
        unsafe { rustix::mm::munmap(ptr, 64 * PAGE) }.unwrap();
    }
}
