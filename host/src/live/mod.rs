//! Live sessions: a JavaScript heap that outlives its calls.
//!
//! A [`LiveSession`] keeps one guest instance between calls. Each call evaluates a script in
//! that instance's global scope (`runner.evaluate`), so what one call defines (a `let`, a
//! function, a class instance, a `Map`) is there for the next. Each call is still armed as a
//! fresh one is: its own fuel, deadline, memory limit (which the heap it starts with counts
//! against), stack, console and audit records.
//!
//! After every call that succeeds, the session brings its image of the heap up to date (a copy
//! of the guest's memory above its shadow stack): where the kernel reports which pages the call
//! wrote (`written`), those pages are copied; elsewhere the heap is compared with the image
//! block by block and the changed blocks copied. A call that fails (a trap, the deadline, fuel,
//! memory, an uncaught error) drops its instance, and the next call runs in a fresh instance with the last good image written back: the failed call
//! left nothing behind. The image is also what a session hibernates to ([`HeapImage`]'s file
//! format) and what a fork shares ([`LiveSession::fork`]).

mod access;
mod heap;
mod image;
#[cfg(feature = "serve")]
pub(crate) mod journal;
mod packed;
mod runtime;
mod written;

pub(crate) use access::instrument;
pub use image::HeapImage;
pub(crate) use runtime::LiveRuntime;

use crate::call::{self, CallState, Outcome};
use crate::limits::MemoryLimiter;
use crate::policy::Policy;
use crate::{Error, Palisade, RunOptions};
use runtime::Hot;
use std::sync::Arc;
use std::time::Instant;

/// A session whose JavaScript heap survives between calls ([`Palisade::live_session`]).
pub struct LiveSession {
    palisade: Palisade,
    policy: Policy,
    runtime: Arc<LiveRuntime>,
    /// The instance, while hot; `None` after a failed call, a reset, or [`LiveSession::cool`].
    hot: Option<Hot>,
    /// The heap after the last call that succeeded.
    image: HeapImage,
    calls: u64,
    /// How successful calls bring the image up to their heap.
    protection: Protection,
}

/// How a live session keeps the image a failed call rolls back to ([`LiveSession::set_protection`]).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// After each successful call, the pages the kernel reports it wrote are copied where the
    /// kernel tracks writes, else the whole heap is compared (the default).
    Tracked,
    /// After each successful call, the whole heap is compared with the image.
    Compared,
    /// The image is left as it was: a failed call rolls back to the last protected one.
    Off,
}

/// What [`LiveSession::heap`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct HeapInfo {
    /// Bytes of linear memory the heap spans (the guest's whole memory, its stack included).
    pub memory_bytes: u64,
    /// Blocks of 4 KiB above the shadow stack that differ from a fresh instance's.
    pub changed_blocks: usize,
    /// Whether the instance is kept in memory (hot) rather than held as an image only.
    pub hot: bool,
    /// Calls that succeeded since the session was created or last reset.
    pub calls: u64,
}

impl Palisade {
    /// A live session under `policy`: each [`LiveSession::run`] evaluates a script in the heap
    /// the previous successful call left. The policy may not mount directories (`[fs]`): a
    /// live instance cannot keep a call's open files for the next.
    pub async fn live_session(&self, policy: &Policy) -> Result<LiveSession, Error> {
        self.live_from(policy, Source::Fresh).await
    }

    /// A live session under `policy` whose heap is `image` (a file from
    /// [`LiveSession::image`], or that file compressed by [`HeapImage::compress`]), copied. An
    /// image that is truncated,
    /// altered, made by another guest build or larger than the policy's memory limit is refused
    /// as `invalid_component` before any of it is used.
    pub async fn wake_live_session(
        &self,
        policy: &Policy,
        image: &[u8],
    ) -> Result<LiveSession, Error> {
        self.live_from(policy, Source::Bytes(image)).await
    }

    /// [`Palisade::wake_live_session`] from the heap file `file` (what [`LiveSession::image`]
    /// returned, written to a file), checked as a whole first, then mapped rather than copied:
    /// the session's image and, at its first call, its instance's memory map the file's
    /// blocks privately (writes go to pages of their own, never to the file). The file must
    /// not be changed in place while the session lives: write a new one and rename it over.
    /// A file compressed by [`HeapImage::compress`] is decompressed into memory instead (a
    /// copy, as [`Palisade::wake_live_session`] makes).
    pub async fn wake_live_session_file(
        &self,
        policy: &Policy,
        file: &std::fs::File,
    ) -> Result<LiveSession, Error> {
        self.live_from(policy, Source::File(file)).await
    }

    async fn live_from(&self, policy: &Policy, image: Source<'_>) -> Result<LiveSession, Error> {
        if policy.grants_files() {
            return Err(Error::InvalidPolicy(crate::PolicyError {
                file: None,
                key: "fs".into(),
                line: None,
                column: None,
                message: "a live session cannot mount directories: its instance outlives the \
                          call that opened them"
                    .into(),
            }));
        }
        self.check_memory(policy)?;
        let runtime = self.live_runtime(policy).await?;
        let (guest, limit) = (&runtime.guest_sha256, policy.limits().memory.0);
        let (base, stack_top) = (&runtime.base[..], runtime.layout.stack_top);
        let image = match image {
            Source::Bytes(bytes) => HeapImage::decode(bytes, guest, limit, (base, stack_top))?,
            Source::File(file) => {
                HeapImage::open(file, guest, limit, (base, stack_top, &runtime.map_base))?
            }
            Source::Fresh => HeapImage::pristine(base, stack_top, Some(&runtime.map_base)),
        };
        Ok(LiveSession {
            palisade: self.clone(),
            policy: policy.clone(),
            runtime,
            hot: None,
            image,
            calls: 0,
            protection: Protection::Tracked,
        })
    }
}

impl LiveSession {
    /// Evaluate `source` (a script, `name` in stack traces) with `input` (JSON, the global
    /// `input`) under the session's policy.
    pub async fn run(&mut self, name: &str, source: &str, input: &str) -> Outcome {
        self.run_with(name, source, input, &RunOptions::default())
            .await
    }

    /// [`LiveSession::run`] with per-call [`RunOptions`]: lower limits (or up to the policy's
    /// `[overrides]`), clock, seed, config, metadata, events, audit tags. A live call has no
    /// export to choose: `export` or `spread_args` ends it as `invalid_input`.
    pub async fn run_with(
        &mut self,
        name: &str,
        source: &str,
        input: &str,
        options: &RunOptions,
    ) -> Outcome {
        let started = Instant::now();
        let policy = match self.check(options, input) {
            Ok(policy) => policy,
            Err(error) => return Outcome::failed(error, &self.policy, started),
        };
        let permit = match self.palisade.admit().await {
            Ok(permit) => permit,
            Err(error) => return Outcome::failed(error, &policy, started),
        };
        let outcome = self
            .call(
                &policy,
                options,
                Script {
                    name,
                    source,
                    input,
                },
                started,
            )
            .await;
        drop(permit);
        outcome
    }

    /// The call's policy, once its options, its input and the heap's size pass.
    fn check(&self, options: &RunOptions, input: &str) -> Result<Policy, Error> {
        if options.export.is_some() || options.spread_args || options.kv_transaction {
            return Err(Error::InvalidInput {
                detail: "a live call evaluates a script: it has no export, argument list or \
                         key-value transaction"
                    .into(),
                fix: None,
            });
        }
        let policy = options.policy(&self.policy)?.into_owned();
        call::check_input(&policy, input)?;
        // The heap the call starts with counts against its memory limit.
        if self.image.memory_size > policy.limits().memory.0 {
            return Err(Error::MemoryLimit {
                limit: policy.limits().memory,
            });
        }
        Ok(policy)
    }

    async fn call(
        &mut self,
        policy: &Policy,
        options: &RunOptions,
        script: Script<'_>,
        started: Instant,
    ) -> Outcome {
        let deadline = Instant::now() + policy.limits().timeout.0;
        let mut hot = match self.hot.take() {
            Some(hot) => hot,
            None => match self.restore(policy).await {
                Ok(hot) => hot,
                Err(error) => return Outcome::failed(error, policy, started),
            },
        };
        let budget = policy.limits().fuel;
        let (result, fuel_used) = match self.arm(&mut hot, policy, options, deadline) {
            Ok(seed) => {
                let result = evaluate(&mut hot, policy, script, deadline, seed).await;
                let fuel_used = hot.store.get_fuel().map_or(0, |left| budget - left);
                (result, fuel_used)
            }
            Err(error) => (Err(error), 0),
        };
        let result = match result {
            Ok(json) if self.protection == Protection::Off => {
                hot.forget_listed();
                Ok(json)
            }
            Ok(json) => self.keep(&mut hot).await.map(|()| json),
            Err(error) => Err(error),
        };
        let state = match result {
            Ok(_) => {
                let idle = CallState::new(&self.policy, call::Shared::default(), None);
                let state = idle.map(|idle| std::mem::replace(hot.store.data_mut(), idle));
                self.hot = Some(hot);
                state
            }
            // Rolled back: the instance goes, the last good image stays.
            Err(_) => Ok(hot.store.into_data()),
        };
        let mut outcome = match state {
            Ok(state) => call::finish(state, result, fuel_used, policy, started),
            Err(error) => Outcome::failed(error, policy, started),
        };
        outcome.receipt.form = Some("live");
        outcome
    }

    /// After a call that succeeded: its heap is the last good image.
    async fn keep(&mut self, hot: &mut Hot) -> Result<(), Error> {
        hot.capture(&mut self.image).await?;
        self.calls += 1;
        Ok(())
    }

    /// Give the instance the call's own state and limits; returns the call's random seed.
    fn arm(
        &self,
        hot: &mut Hot,
        policy: &Policy,
        options: &RunOptions,
        deadline: Instant,
    ) -> Result<u64, Error> {
        let context = crate::palisade::call_context(policy, options.metadata.clone());
        let shared = self.palisade.live_shared(policy, options, context)?;
        let seed = crate::caps::clock::math_random_seed(policy.determinism(), &shared.tape);
        let mut state = CallState::new(policy, shared, None)?;
        state.limiter =
            MemoryLimiter::starting_at(policy.limits().memory.0, self.image.memory_size);
        *hot.store.data_mut() = state;
        call::arm(
            &mut hot.store,
            self.runtime.fuel,
            policy,
            deadline,
            policy.limits().fuel,
        )?;
        Ok(seed)
    }

    /// The heap's size and state.
    pub fn heap(&self) -> HeapInfo {
        HeapInfo {
            memory_bytes: self.image.memory_size(),
            changed_blocks: self.image.changed_blocks(&self.runtime.base),
            hot: self.hot.is_some(),
            calls: self.calls,
        }
    }

    /// Bytes of linear memory the heap spans.
    #[cfg(feature = "serve")]
    pub(crate) fn memory_size(&self) -> u64 {
        self.image.memory_size
    }

    /// The policy the session was created under.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Back to a fresh instance's heap: everything the calls defined is gone.
    pub fn reset(&mut self) {
        self.hot = None;
        let runtime = &self.runtime;
        self.image = HeapImage::pristine(
            &runtime.base,
            runtime.layout.stack_top,
            Some(&runtime.map_base),
        );
        self.calls = 0;
    }

    /// A new session with a copy of this one's heap (as of its last successful call), cold
    /// until its first call. Calls on either do not reach the other.
    ///
    /// Nothing is copied: the heap's memory is frozen and mapped privately by both sessions
    /// (each then writes pages of its own), and the fork's first call maps it into its instance.
    pub fn fork(&mut self) -> LiveSession {
        if let Some(heap) = Arc::get_mut(&mut self.image.heap) {
            heap.freeze();
        }
        LiveSession {
            palisade: self.palisade.clone(),
            policy: self.policy.clone(),
            runtime: self.runtime.clone(),
            hot: None,
            image: self.image.clone(),
            calls: self.calls,
            protection: self.protection,
        }
    }

    /// The heap as an image file, starting a new journal: what changed so far is in the file.
    #[cfg(feature = "serve")]
    pub(crate) fn image_for_journal(&mut self) -> Vec<u8> {
        drop(self.image.take_changed());
        self.image()
    }

    /// A journal record of what changed since the last record or image file (whose memory
    /// size was `grown_from`), chained after the record (or file) whose digest is `previous`;
    /// and its digest.
    #[cfg(feature = "serve")]
    pub(crate) fn journal_record(
        &mut self,
        grown_from: u64,
        previous: &[u8; 32],
    ) -> (Vec<u8>, [u8; 32]) {
        let changed = self.image.take_changed();
        journal::record(&self.image, &changed, grown_from, previous)
    }

    /// Apply a journal written after the image file the session woke from (which ends with
    /// `image_digest`). The instance, if any, is dropped: the next call restores the image.
    #[cfg(feature = "serve")]
    pub(crate) fn replay_journal(
        &mut self,
        log: &[u8],
        image_digest: &[u8; 32],
    ) -> Result<journal::Replayed, Error> {
        self.hot = None;
        journal::replay(
            log,
            image_digest,
            &mut self.image,
            self.policy.limits().memory.0,
        )
    }

    /// The heap as a file ([`HeapImage`]'s format), for [`Palisade::wake_live_session`].
    pub fn image(&self) -> Vec<u8> {
        self.image
            .encode(&self.runtime.guest_sha256, &self.runtime.base)
    }

    /// How each successful call brings the image up to its heap ([`Protection::Tracked`] by
    /// default). Set otherwise only to measure what rollback protection costs (`palisade bench
    /// --live`). The image is brought up to the heap at once.
    #[doc(hidden)]
    pub async fn set_protection(&mut self, protection: Protection) -> Result<(), Error> {
        if let Some(hot) = self.hot.as_mut() {
            // Off and Compared keep no tracker, so this compares the whole heap.
            hot.capture(&mut self.image).await?;
            match protection {
                Protection::Tracked => hot.track(self.image.stack_top).await?,
                Protection::Compared | Protection::Off => hot.untrack(),
            }
        }
        self.protection = protection;
        Ok(())
    }

    /// A fresh instance holding the image, its writes tracked if the session's protection
    /// says so.
    async fn restore(&mut self, policy: &Policy) -> Result<Hot, Error> {
        let mut hot = self.runtime.restore(policy, &self.image).await?;
        if self.protection == Protection::Tracked {
            hot.track(self.image.stack_top).await?;
        }
        Ok(hot)
    }

    /// Whether the kernel reports which pages each call writes (the image update then copies
    /// those alone), rather than the whole heap being compared. `None` when not hot.
    #[doc(hidden)]
    pub fn writes_tracked(&self) -> Option<bool> {
        self.hot.as_ref().map(Hot::tracked)
    }

    /// Drop the instance and keep only the image: the next call restores it.
    pub fn cool(&mut self) {
        self.hot = None;
    }

    /// Whether the instance is kept (the next call resumes it at once).
    pub fn is_hot(&self) -> bool {
        self.hot.is_some()
    }

    /// Restore the instance now, if it is not hot, so that the next call resumes it.
    pub async fn warm(&mut self) -> Result<(), Error> {
        if self.hot.is_none() {
            let policy = self.policy.clone();
            self.hot = Some(self.restore(&policy).await?);
        }
        Ok(())
    }
}

/// Where a live session's heap comes from.
enum Source<'a> {
    Fresh,
    Bytes(&'a [u8]),
    File(&'a std::fs::File),
}

/// A live call's script and input.
#[derive(Clone, Copy)]
struct Script<'a> {
    name: &'a str,
    source: &'a str,
    input: &'a str,
}

async fn evaluate(
    hot: &mut Hot,
    policy: &Policy,
    script: Script<'_>,
    deadline: Instant,
    seed: u64,
) -> Result<Box<serde_json::value::RawValue>, Error> {
    let env = call::environment(policy, seed);
    let tracked = hot.tracked();
    let Hot { store, sandbox, .. } = hot;
    let call = call::guarded(store, policy, deadline, async |store| {
        sandbox
            .palisade_sandbox_runner()
            .call_evaluate(store, script.name, script.source, script.input, &env)
            .await
    });
    // Faults are counted only where they can spare the image update its scan.
    let (result, faults) = if tracked {
        written::counting_faults(call).await
    } else {
        (call.await, None)
    };
    hot.ran(faults);
    result.and_then(|json| call::accept_output(policy, json))
}

#[cfg(test)]
mod tests {
    use super::*;
    use heap::{HeapBytes, Owned};

    fn policy() -> Policy {
        let toml = "name = \"t\"\n[limits]\ntimeout = \"60s\"\nmemory = \"128MiB\"\n";
        Policy::from_toml(toml, None).unwrap()
    }

    /// The image after each successful step equals the heap, byte for byte, whether the
    /// kernel reported the pages written (required from Linux 6.7 on; after a step that took
    /// no page fault, the pages left writable) or the heap was compared:
    /// through allocation, growth of the memory, changes to old objects, frees and a failed
    /// step between; each way in a session of its own, and once more in a session woken from
    /// a heap file (its heap mapped from the file).
    #[tokio::test]
    async fn the_image_follows_the_heap_through_every_kind_of_step() {
        let palisade = Palisade::builder().build().unwrap();
        let policy = policy();
        for protection in [Protection::Tracked, Protection::Compared] {
            let mut live = palisade.live_session(&policy).await.unwrap();
            live.set_protection(protection).await.unwrap();
            follow(&mut live).await;
            let hot = live.hot.as_ref().expect("hot");
            match (protection, hot.tracking_refused()) {
                (Protection::Tracked, Some(refused)) => written::required_or_skipped(refused),
                (Protection::Tracked, None) => assert_eq!(live.writes_tracked(), Some(true)),
                _ => assert_eq!(live.writes_tracked(), Some(false)),
            }
        }
        let mut live = palisade.live_session(&policy).await.unwrap();
        let built = "globalThis.kept = Array.from({ length: 50000 }, (_, i) => ({ i })); 0";
        assert!(live.run("build.js", built, "null").await.result.is_ok());
        let path = std::env::temp_dir().join(format!("palisade-follow-{}", std::process::id()));
        std::fs::write(&path, live.image()).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut woken = palisade
            .wake_live_session_file(&policy, &file)
            .await
            .unwrap();
        follow(&mut woken).await;
        drop((woken, file));
        std::fs::remove_file(&path).unwrap();
    }

    /// Steps that take no page fault are kept without a scan; a step that writes a page
    /// protected since (the pages of an array no step touched) takes a fault, and its update
    /// scans: the image holds what it wrote.
    #[tokio::test]
    async fn a_step_that_writes_a_protected_page_is_scanned() {
        let palisade = Palisade::builder().build().unwrap();
        let mut live = palisade.live_session(&policy()).await.unwrap();
        let built = "globalThis.a = new Uint8Array(1 << 20); globalThis.n = 0; a.length";
        assert!(live.run("a.js", built, "null").await.result.is_ok());
        for _ in 0..8 {
            assert!(live.run("n.js", "n += 1", "null").await.result.is_ok());
        }
        let hot = live.hot.as_mut().expect("hot");
        if let Some(refused) = hot.tracking_refused() {
            return written::required_or_skipped(refused);
        }
        let skipped = hot.unscanned;
        assert!(skipped > 0, "every update of the eight steps scanned");
        let wrote = live.run("w.js", "a[409600] = 7; a[409600]", "null").await;
        assert_eq!(wrote.result.unwrap().get(), "7");
        let hot = live.hot.as_mut().expect("hot");
        assert_eq!(
            hot.unscanned, skipped,
            "the update after a fault did not scan"
        );
        let memory = hot.memory_unentered().await.unwrap();
        let top = live.image.stack_top as usize;
        assert!(
            live.image.heap[..] == memory[top..],
            "the image missed the write"
        );
    }

    /// A hot step writes few pages of the heap, where the kernel reports them: the snapshot's
    /// free chunks are taken before it is made (`guest-js/src/run/holes.rs`), so what a step
    /// allocates comes from the heap's top; a step that sets no timer runs none of the
    /// timers' code at its end; and one without `await` runs as a plain script, with no
    /// promise. `n += 1` writes 15 pages (29 before the three), most of them written and left
    /// as they were (reference counts of objects the step uses).
    #[tokio::test]
    async fn a_hot_step_writes_few_pages() {
        let palisade = Palisade::builder().build().unwrap();
        let mut live = palisade.live_session(&policy()).await.unwrap();
        assert!(
            live.run("n.js", "globalThis.n = 0", "null")
                .await
                .result
                .is_ok()
        );
        for _ in 0..40 {
            assert!(live.run("n.js", "n += 1", "null").await.result.is_ok());
        }
        let hot = live.hot.as_ref().expect("hot");
        if let Some(refused) = hot.tracking_refused() {
            return written::required_or_skipped(refused);
        }
        let pages = hot.pages_written();
        // 17: any one of the three undone adds 3 pages or more.
        assert!((1..=17).contains(&pages), "{pages} pages");
    }

    /// A journal replayed over a heap woken from its file leaves it mapped, its blocks written
    /// over the file's; the instance restored from it (the file mapped, those blocks written)
    /// holds exactly the heap of the session that wrote the journal. From the file compressed
    /// (`HeapImage::compress`, which keeps the file's digest, so the same journal fits), the
    /// same, copied rather than mapped.
    #[cfg(feature = "serve")]
    #[tokio::test]
    async fn a_journal_over_a_woken_heap_restores_exactly() {
        let palisade = Palisade::builder().build().unwrap();
        let policy = policy();
        let mut live = palisade.live_session(&policy).await.unwrap();
        let built = "globalThis.kept = Array.from({ length: 50000 }, (_, i) => ({ i })); 0";
        assert!(live.run("build.js", built, "null").await.result.is_ok());
        let image = live.image_for_journal();
        let digest: [u8; 32] = image[image.len() - 32..].try_into().unwrap();
        let mut log = journal::header(&digest);
        let (mut head, mut grown_from) = (digest, live.memory_size());
        for step in ["kept[7].i = 'seven'", "globalThis.m = new Map([[1, 2]]); 0"] {
            assert!(live.run("step.js", step, "null").await.result.is_ok());
            let (record, next) = live.journal_record(grown_from, &head);
            log.extend_from_slice(&record);
            (head, grown_from) = (next, live.memory_size());
        }
        for compressed in [false, true] {
            let bytes = match compressed {
                true => HeapImage::compress(&image).unwrap(),
                false => image.clone(),
            };
            let name = format!("palisade-journal-{}-{compressed}", std::process::id());
            let path = std::env::temp_dir().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            let mut woken = palisade
                .wake_live_session_file(&policy, &file)
                .await
                .unwrap();
            let replayed = woken.replay_journal(&log, &digest).unwrap();
            assert_eq!(replayed.valid, log.len());
            let mapped = woken.image.heap.file().is_some();
            assert_eq!(mapped, !compressed, "mapped from the plain file alone");
            assert_eq!(!woken.image.heap.patched().is_empty(), mapped);
            assert!(woken.image.heap[..] == live.image.heap[..]);
            woken.warm().await.unwrap();
            let memory = woken.hot.as_mut().unwrap().memory().await.unwrap();
            assert!(memory[live.image.stack_top as usize..] == live.image.heap[..]);
            let seen = woken.run("check.js", "[kept[7].i, kept.length, m.get(1)]", "null");
            assert_eq!(seen.await.result.unwrap().get(), r#"["seven",50000,2]"#);
            drop((woken, file));
            std::fs::remove_file(&path).unwrap();
        }
    }

    /// A step run without protection may grow the memory: the next image update, under a
    /// limiter that never saw that growth, still reads the memory whole.
    #[tokio::test]
    async fn an_unprotected_step_that_grows_the_memory_is_seen_whole_after() {
        let palisade = Palisade::builder().build().unwrap();
        let mut live = palisade.live_session(&policy()).await.unwrap();
        assert!(
            live.run("a.js", "globalThis.n = 1", "null")
                .await
                .result
                .is_ok()
        );
        live.set_protection(Protection::Off).await.unwrap();
        let before = live.image.memory_size;
        let grow = "globalThis.rows = Array.from({ length: 200000 }, (_, i) => ({ i })); 0";
        assert!(live.run("grow.js", grow, "null").await.result.is_ok());
        live.set_protection(Protection::Tracked).await.unwrap();
        let memory = live.hot.as_mut().unwrap().memory().await.unwrap();
        assert!(memory.len() as u64 > before, "the memory grew");
        assert_eq!(live.image.memory_size, memory.len() as u64);
        assert!(live.image.heap[..] == memory[live.image.stack_top as usize..]);
    }

    /// A fork freezes the heap (its memfd sealed) and shares it: neither session copies it,
    /// the fork's first call maps it, and from then on each session's image follows its own
    /// heap byte for byte, neither seeing the other's steps.
    #[tokio::test]
    async fn a_fork_shares_the_heap_frozen_and_each_goes_its_own_way() {
        let palisade = Palisade::builder().build().unwrap();
        let mut live = palisade.live_session(&policy()).await.unwrap();
        let fresh = live
            .image
            .heap
            .file()
            .expect("a fresh heap is the base's memfd, mapped");
        assert!(Arc::ptr_eq(fresh, live.runtime.map_base.file()));
        // The memory grows: the image becomes the session's own memfd.
        let built = "globalThis.kept = Array.from({ length: 200000 }, (_, i) => ({ i })); 0";
        assert!(live.run("build.js", built, "null").await.result.is_ok());
        assert!(matches!(
            *live.image.heap,
            HeapBytes::Owned(Owned::Memfd { .. })
        ));
        let mut fork = live.fork();
        let frozen = live.image.heap.file().expect("frozen and mapped").clone();
        // Sealed once its writable mapping is gone, which a blocking thread unmaps.
        let sealed = async {
            while !rustix::fs::fcntl_get_seals(&frozen.file)
                .unwrap()
                .contains(rustix::fs::SealFlags::WRITE)
            {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
        };
        let waited = tokio::time::timeout(std::time::Duration::from_secs(60), sealed).await;
        assert!(waited.is_ok(), "never sealed");
        assert!(
            Arc::ptr_eq(&live.image.heap, &fork.image.heap),
            "shared, not copied"
        );
        follow(&mut fork).await;
        let seen = live.run("check.js", "[typeof rows, kept.length]", "null");
        assert_eq!(seen.await.result.unwrap().get(), r#"["undefined",200000]"#);
        follow(&mut live).await;
        let seen = fork.run("check.js", "[rows.length, m.get(5).s, kept.length]", "null");
        assert_eq!(
            seen.await.result.unwrap().get(),
            r#"[1000,"row 5!",200000]"#
        );
    }

    async fn follow(live: &mut LiveSession) {
        let steps = [
            "globalThis.rows = []; rows.length",
            "for (let i = 0; i < 200000; i++) rows.push({ i, s: 'row ' + i }); rows.length",
            "for (let i = 0; i < rows.length; i += 97) rows[i].s = 'changed'; rows[97].s",
            "throw new Error('rolled back')",
            "rows.length = 1000; globalThis.m = new Map(rows.map((r) => [r.i, r])); m.size",
            "m.get(5).s += '!'; m.get(5).s",
            "n = 1",
            "n += 1",
            "n += 1",
            "rows[3].s = 'again'; n += 1",
            "n += 1",
            "n += 1",
        ];
        for (k, source) in steps.iter().enumerate() {
            let ok = live.run("step.js", source, "null").await.result.is_ok();
            assert_eq!(ok, k != 3, "step {k}: {source}");
            live.warm().await.unwrap();
            let hot = live.hot.as_mut().expect("hot after a step");
            let memory = hot.memory_unentered().await.unwrap();
            let top = live.image.stack_top as usize;
            assert_eq!(live.image.memory_size, memory.len() as u64, "step {k}");
            assert!(
                live.image.heap[..] == memory[top..],
                "step {k}: the image differs from the heap (tracked: {})",
                hot.tracked()
            );
        }
    }
}
