//! What live sessions run on: an engine of their own (instances allocated on demand, so that a
//! hot session holds no slot of the pool that calls share), the instrumented guest linked on
//! it, the access functions' indices, and the memory of a fresh instance, which images are
//! kept against.

use super::access::{ACCESS, Layout};
use super::heap::{HeapFile, MapBase};
use super::image::{BLOCK, HeapImage, WASM_PAGE};
use super::written::{self, WriteTracker};
use crate::Error;
use crate::bindings::{Sandbox, SandboxPre};
use crate::call::{CallState, Shared};
use crate::guest::Guest;
use crate::policy::Policy;
use std::sync::Arc;
use wasmtime::component::{ComponentExportIndex, Instance, TypedFunc, WasmList};
use wasmtime::{Engine, Store};

/// The instrumented guest on a live engine.
pub(crate) struct LiveRuntime {
    pub engine: Engine,
    pub pre: SandboxPre<CallState>,
    pub fuel: bool,
    pub layout: Layout,
    /// SHA-256 of the guest build: images name it.
    pub guest_sha256: [u8; 32],
    /// The memory of a fresh instance.
    pub base: Arc<[u8]>,
    /// The part of `base` above the stack, for heaps mapped from their files.
    pub map_base: MapBase,
    indices: [ComponentExportIndex; 4],
}

/// A live instance: its store, its runner and its access functions.
pub(crate) struct Hot {
    pub store: Store<CallState>,
    pub sandbox: Sandbox,
    view: TypedFunc<(u32,), (WasmList<u8>,)>,
    grow: TypedFunc<(u32,), (i32,)>,
    seek: TypedFunc<(u32,), ()>,
    /// Typed at each use: its parameter borrows the bytes written.
    write: wasmtime::component::Func,
    /// Which pages of the heap a call wrote, where the kernel tells; `None`: the image update
    /// compares the whole heap.
    tracker: Option<WriteTracker>,
    /// The pages the last call may have written, and those of them it left unchanged
    /// (buffers kept between calls).
    written: Vec<std::ops::Range<usize>>,
    unchanged: Vec<usize>,
    /// Why the kernel refused to track writes, when it last did.
    refused: Option<rustix::io::Errno>,
    /// Whether, since the tracker last knew which pages are writable (its making, or the last
    /// image update), the guest ran only calls whose polls took no page fault: then no
    /// protected page was written, and the next image update needs no scan (see
    /// [`super::written::counting_faults`]). Listing or writing the memory clears it; the
    /// restore's other entries (instantiation, `grow`, `seek`) come before `track`, which
    /// sets it.
    quiet: bool,
    /// Whether the next image update scans only because the last call's polls took faults
    /// (it was `quiet` until then): a scan that then finds no page written beyond those known
    /// writable tells [`written::carried_in_vain`].
    faulted: bool,
    /// Image updates that needed no scan.
    #[cfg(test)]
    pub(crate) unscanned: u32,
    /// The whole memory as `view` last listed it for an image update, while it is still the
    /// whole memory: growth passes the call's limiter, whose peak is at least the memory's
    /// size, so a list as long as that peak has not grown (see [`Hot::forget_listed`]).
    listed: Option<WasmList<u8>>,
}

/// Where `view` stores the list it returns: the bottom of the shadow stack, dead between calls.
const SCRATCH: u32 = 0;

fn internal(what: &str) -> impl Fn(wasmtime::Error) -> Error + '_ {
    move |e| Error::Internal {
        detail: format!("live session: {what}: {e:#}"),
    }
}

impl LiveRuntime {
    /// The runtime of `component` (the instrumented `guest`, compiled for `engine`), with a
    /// fresh instance's memory taken as the base.
    pub(crate) async fn build(
        engine: Engine,
        component: wasmtime::component::Component,
        layout: Layout,
        guest: Guest,
        fuel: bool,
    ) -> Result<LiveRuntime, Error> {
        let access = component
            .get_export_index(None, ACCESS)
            .ok_or_else(|| internal("linking")(wasmtime::format_err!("no {ACCESS}")))?;
        let index = |name: &str| {
            component
                .get_export_index(Some(&access), name)
                .ok_or_else(|| internal("linking")(wasmtime::format_err!("no {name}")))
        };
        let indices = [
            index("view")?,
            index("grow")?,
            index("seek")?,
            index("write")?,
        ];
        let pre = crate::call::instance_pre(&engine, &component).map_err(internal("linking"))?;
        let mut runtime = LiveRuntime {
            engine,
            pre,
            fuel,
            layout,
            guest_sha256: sha256(guest.bytes()),
            base: Arc::new([]),
            map_base: MapBase::new(&[]).map_err(memfd)?,
            indices,
        };
        let mut hot = runtime.instantiate(&Policy::builtin_default()).await?;
        runtime.base = hot.memory().await?.into();
        let above_stack = runtime.base.get(layout.stack_top as usize..).unwrap_or(&[]);
        runtime.map_base = MapBase::new(above_stack).map_err(memfd)?;
        Ok(runtime)
    }

    /// A fresh instance under `policy`'s memory limit, not yet armed for a call.
    pub(crate) async fn instantiate(&self, policy: &Policy) -> Result<Hot, Error> {
        let state = CallState::new(policy, Shared::default(), None)?;
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        if self.fuel {
            store.set_fuel(u64::MAX).map_err(internal("fuel"))?;
        } else {
            store.set_epoch_deadline(u64::MAX / 2);
        }
        let instance: Instance = self
            .pre
            .instance_pre()
            .instantiate_async(&mut store)
            .await
            .map_err(internal("instantiating"))?;
        let sandbox = Sandbox::new(&mut store, &instance).map_err(internal("linking"))?;
        let [view, grow, seek, write] = &self.indices;
        let typed = |store: &mut Store<CallState>, index| {
            instance
                .get_func(&mut *store, index)
                .ok_or_else(|| internal("linking")(wasmtime::format_err!("no access function")))
        };
        let view = typed(&mut store, view)?
            .typed(&store)
            .map_err(internal("view"))?;
        let grow = typed(&mut store, grow)?
            .typed(&store)
            .map_err(internal("grow"))?;
        let seek = typed(&mut store, seek)?
            .typed(&store)
            .map_err(internal("seek"))?;
        let write = typed(&mut store, write)?;
        Ok(Hot {
            store,
            sandbox,
            view,
            grow,
            seek,
            write,
            tracker: None,
            written: Vec::new(),
            unchanged: Vec::new(),
            refused: None,
            quiet: false,
            faulted: false,
            #[cfg(test)]
            unscanned: 0,
            listed: None,
        })
    }

    /// A fresh instance under `policy` holding `image`: its memory grown to the image's size
    /// (which the memory limiter sees), then the image's runs mapped from the file it woke
    /// from while it is that file's (and the blocks a journal wrote over them written), or
    /// else every block of the image written in place.
    pub(crate) async fn restore(&self, policy: &Policy, image: &HeapImage) -> Result<Hot, Error> {
        if let Some(file) = image.heap.file() {
            let mut hot = self.sized(policy, image).await?;
            if hot.map(image.stack_top, file).await.is_ok() {
                hot.patch(image).await?;
                return Ok(hot);
            }
            // Not mapped (the instance's memory is not where the runs can go): the instance
            // goes, and a fresh one is written instead.
        }
        let mut hot = self.sized(policy, image).await?;
        hot.huge_pages(image.stack_top).await?;
        // The whole heap in one write: a call into the instance costs more than copying
        // megabytes.
        hot.seek
            .call_async(&mut hot.store, (image.stack_top,))
            .await
            .map_err(internal("restoring"))?;
        hot.write_at(&image.heap).await?;
        Ok(hot)
    }

    /// A fresh instance under `policy` whose memory is grown to `image`'s size.
    async fn sized(&self, policy: &Policy, image: &HeapImage) -> Result<Hot, Error> {
        let mut hot = self.instantiate(policy).await?;
        let current = self.base.len() as u64;
        if image.memory_size > current {
            let pages = u32::try_from((image.memory_size - current) / WASM_PAGE).unwrap_or(0);
            let grown = hot.grow.call_async(&mut hot.store, (pages,)).await;
            if !matches!(grown, Ok((previous,)) if previous >= 0) {
                return Err(Error::MemoryLimit {
                    limit: policy.limits().memory,
                });
            }
        }
        Ok(hot)
    }
}

fn memfd(e: std::io::Error) -> Error {
    Error::Internal {
        detail: format!("live session: keeping a fresh instance's memory: {e}"),
    }
}

impl Hot {
    /// A call ran in the instance, its polls taking `faults` page faults (`None`: not known).
    pub(crate) fn ran(&mut self, faults: Option<u64>) {
        self.faulted = self.quiet && faults.is_some_and(|n| n > 0);
        self.quiet &= faults == Some(0);
    }

    /// The instance's whole linear memory, in place (read it with `as_le_slice(&self.store)`).
    async fn view(&mut self) -> Result<WasmList<u8>, Error> {
        // The guest runs: what it writes is not the last call's.
        self.quiet = false;
        self.faulted = false;
        let (list,) = self
            .view
            .call_async(&mut self.store, (SCRATCH,))
            .await
            .map_err(internal("reading memory"))?;
        Ok(list)
    }

    /// The instance's whole linear memory, copied.
    pub(crate) async fn memory(&mut self) -> Result<Vec<u8>, Error> {
        let list = self.view().await?;
        Ok(list.as_le_slice(&self.store).to_vec())
    }

    /// The whole memory, copied, read through the list the last image update kept (no call
    /// into the guest, which would oblige the next update to scan); listed anew where none is
    /// kept.
    #[cfg(test)]
    pub(crate) async fn memory_unentered(&mut self) -> Result<Vec<u8>, Error> {
        match &self.listed {
            Some(list) => Ok(list.as_le_slice(&self.store).to_vec()),
            None => self.memory().await,
        }
    }

    /// Bring `image` up to this instance's heap: the pages written since the last update
    /// where they are tracked, else the whole heap compared with the image.
    pub(crate) async fn capture(&mut self, image: &mut HeapImage) -> Result<(), Error> {
        let list = match self.listed.take() {
            Some(list) if self.store.data().limiter.peak() <= list.len() as u64 => list,
            _ => self.view().await?,
        };
        let memory = list.as_le_slice(&self.store);
        let Some(tracker) = self.tracker.as_mut() else {
            image.update(memory);
            self.listed = Some(list);
            return Ok(());
        };
        self.written.clear();
        self.unchanged.clear();
        if self.quiet {
            self.written.extend_from_slice(tracker.writable_pages());
            #[cfg(test)]
            {
                self.unscanned += 1;
            }
        } else if tracker.written(&mut self.written).is_err() {
            // The kernel stopped answering: compare from now on.
            self.tracker = None;
            image.update(memory);
            return Ok(());
        } else if self.faulted && self.written == tracker.writable_pages() {
            written::carried_in_vain();
        }
        image.update_written(memory, &self.written, &mut self.unchanged);
        let settled = tracker.settle(&self.written, &self.unchanged);
        if settled.and_then(|()| tracker.cover(memory)).is_err() {
            self.tracker = None;
        } else {
            self.quiet = true;
        }
        self.listed = Some(list);
        Ok(())
    }

    /// The guest ran a call whose image update was skipped (no rollback protection): its
    /// memory may have grown past the list kept, under a limiter gone since.
    pub(crate) fn forget_listed(&mut self) {
        self.listed = None;
    }

    /// Track the writes to the heap (from `stack_top` up) from now on, where the kernel can;
    /// the image must equal the heap now.
    pub(crate) async fn track(&mut self, stack_top: u32) -> Result<(), Error> {
        let list = self.view().await?;
        // The old tracker first: a range registered with one userfaultfd cannot be with another.
        self.tracker = None;
        match WriteTracker::new(list.as_le_slice(&self.store), stack_top as usize) {
            Ok(tracker) => {
                (self.tracker, self.refused) = (Some(tracker), None);
                // Every page protected, none written since.
                self.quiet = true;
            }
            Err(refused) => self.refused = Some(refused),
        }
        Ok(())
    }

    /// Stop tracking writes: the image update compares the whole heap.
    pub(crate) fn untrack(&mut self) {
        self.tracker = None;
    }

    /// Whether the kernel tracks the heap's writes.
    pub(crate) fn tracked(&self) -> bool {
        self.tracker.is_some()
    }

    /// Why the kernel refused to track the heap's writes, if it did.
    #[cfg(test)]
    pub(crate) fn tracking_refused(&self) -> Option<rustix::io::Errno> {
        self.refused
    }

    /// How many 4 KiB pages the last image update found the last call may have written.
    #[cfg(test)]
    pub(crate) fn pages_written(&self) -> usize {
        self.written.iter().map(|pages| pages.len()).sum::<usize>() / 4096
    }

    /// Map `file`'s runs over the instance's heap, which starts at `stack_top`.
    ///
    /// The instance's memory comes from its own engine, which allocates instances on demand:
    /// in wasmtime 48 such a memory is one reservation of its own, which growing only makes
    /// accessible further (`mprotect` above its current size, never moved: `memory_may_move`
    /// is off), which nothing resets or reuses, and which dropping the store unmaps whole
    /// (`vm/memory/mmap.rs`, `vm/memory.rs` `LocalMemory::grow`, `vm/cow.rs`
    /// `set_heap_limit`, `vm/instance/allocator/on_demand.rs`). So the mappings placed here
    /// stay the memory's until the instance goes, and go with it.
    #[allow(unsafe_code)]
    async fn map(&mut self, stack_top: u32, file: &HeapFile) -> Result<(), Error> {
        let list = self.view().await?;
        let memory = list.as_le_slice(&self.store);
        let (start, len) = (memory.as_ptr() as usize, memory.len());
        let heap = start + stack_top as usize;
        let end = file.runs.last().map_or(0, |run| run.span().end);
        if !heap.is_multiple_of(BLOCK) || stack_top as usize + end > len {
            return Err(internal("mapping")(wasmtime::format_err!("misplaced runs")));
        }
        // SAFETY: the runs lie within the instance's linear memory (checked just above), whose
        // mapping is the store's alone and stays as it is while the store lives (see above);
        // the guest does not run while `self.store` is borrowed here, and no reference into
        // the memory is held (`memory` is not used again). Read-write private pages replace
        // read-write pages, as wasmtime's own copy-on-write image does. The file is never
        // changed in place (`HeapImage::open`).
        unsafe { super::heap::overlay(heap as *mut u8, &file.file, &file.runs) }
            .map_err(|e| internal("mapping")(e.into()))
    }

    /// Ask the kernel to back the instance's memory from `from` up with huge pages where it
    /// can: a restore writes all of it at once, and a fault per 2 MiB costs less than 512
    /// faults of 4 KiB. A hint only: the memory's content and access are unchanged.
    #[allow(unsafe_code)]
    async fn huge_pages(&mut self, from: u32) -> Result<(), Error> {
        let list = self.view().await?;
        let memory = list.as_le_slice(&self.store);
        const HUGE: usize = 2 << 20;
        let start = (memory.as_ptr() as usize + from as usize).next_multiple_of(HUGE);
        let end = memory.as_ptr() as usize + memory.len();
        if end > start + HUGE {
            let len = (end - start) / HUGE * HUGE;
            // SAFETY: the range lies within the instance's linear memory, which stays mapped
            // while `self.store` lives; MADV_HUGEPAGE changes no byte of it and no mapping's
            // protection, so neither wasmtime nor the guest can observe it but in speed.
            let _ = unsafe {
                rustix::mm::madvise(start as *mut _, len, rustix::mm::Advice::LinuxHugepage)
            };
        }
        Ok(())
    }

    /// Write the blocks written over the image's file since it was mapped
    /// ([`super::heap::HeapBytes::patch`]) into the instance, a run of them at a time.
    async fn patch(&mut self, image: &HeapImage) -> Result<(), Error> {
        for (first, count) in image.heap.patched() {
            let start = first as usize * BLOCK;
            let end = ((first + count) as usize * BLOCK).min(image.heap.len());
            let offset = image.stack_top + u32::try_from(start).unwrap_or(u32::MAX);
            self.seek
                .call_async(&mut self.store, (offset,))
                .await
                .map_err(internal("restoring"))?;
            self.write_at(&image.heap[start..end]).await?;
        }
        Ok(())
    }

    /// Write `bytes` where `seek` pointed: `write`'s `realloc` returns that offset, so the
    /// canonical ABI copies them there.
    async fn write_at(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.quiet = false;
        self.faulted = false;
        let write = self
            .write
            .typed::<(&[u8],), ()>(&self.store)
            .map_err(internal("write"))?;
        write
            .call_async(&mut self.store, (bytes,))
            .await
            .map_err(internal("restoring"))
    }
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}
