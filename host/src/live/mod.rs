//! Live sessions: a JavaScript heap that outlives its calls.
//!
//! A [`LiveSession`] keeps one guest instance between calls. Each call evaluates a script in
//! that instance's global scope (`runner.evaluate`), so what one call defines (a `let`, a
//! function, a class instance, a `Map`) is there for the next. Each call is still armed as a
//! fresh one is: its own fuel, deadline, memory limit (which the heap it starts with counts
//! against), stack, console and audit records.
//!
//! After every call that succeeds, the session brings its image of the heap up to date (a copy
//! of the guest's memory above its shadow stack, compared block by block and the changed blocks
//! copied). A call that fails (a trap, the deadline, fuel, memory, an uncaught error) drops its instance, and the
//! next call runs in a fresh instance with the last good image written back: the failed call
//! left nothing behind. The image is also what a session hibernates to ([`HeapImage`]'s file
//! format) and what a fork copies.

mod access;
mod heap;
mod image;
mod runtime;

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
    /// [`LiveSession::image`]), copied. An image that is truncated,
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
            Source::Fresh => HeapImage::pristine(base, stack_top),
        };
        Ok(LiveSession {
            palisade: self.clone(),
            policy: policy.clone(),
            runtime,
            hot: None,
            image,
            calls: 0,
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
            None => match self.runtime.restore(policy, &self.image).await {
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

    /// The policy the session was created under.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Back to a fresh instance's heap: everything the calls defined is gone.
    pub fn reset(&mut self) {
        self.hot = None;
        self.image = HeapImage::pristine(&self.runtime.base, self.runtime.layout.stack_top);
        self.calls = 0;
    }

    /// A new session with a copy of this one's heap (as of its last successful call), cold
    /// until its first call. Calls on either do not reach the other.
    pub fn fork(&self) -> LiveSession {
        LiveSession {
            palisade: self.palisade.clone(),
            policy: self.policy.clone(),
            runtime: self.runtime.clone(),
            hot: None,
            image: self.image.clone(),
            calls: self.calls,
        }
    }

    /// The heap as a file ([`HeapImage`]'s format), for [`Palisade::wake_live_session`].
    pub fn image(&self) -> Vec<u8> {
        self.image
            .encode(&self.runtime.guest_sha256, &self.runtime.base)
    }

    /// Bring the image up to the hot instance's heap now: what every successful call ends with
    /// (the cost of rollback protection), timed alone by `palisade bench --live`. Does nothing
    /// when the session is not hot.
    #[doc(hidden)]
    pub async fn checkpoint(&mut self) -> Result<(), Error> {
        match self.hot.as_mut() {
            Some(hot) => hot.capture(&mut self.image).await,
            None => Ok(()),
        }
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
            self.hot = Some(self.runtime.restore(&self.policy, &self.image).await?);
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
    let Hot { store, sandbox, .. } = hot;
    call::guarded(store, policy, deadline, async |store| {
        sandbox
            .palisade_sandbox_runner()
            .call_evaluate(store, script.name, script.source, script.input, &env)
            .await
    })
    .await
    .and_then(|json| call::accept_output(policy, json))
}
