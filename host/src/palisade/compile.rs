//! Compiling ahead of calls: QuickJS bytecode ([`Palisade::precompile`], and the bytecode cache
//! a call reads), whole components ([`Palisade::compile`]) and the automatic compiler
//! ([`Builder::auto_compile`](super::Builder::auto_compile)).

use super::Palisade;
use crate::auto::{AutoCompileStatus, Plan};
use crate::bytecode::{Compile, Compiled, Lookup};
use crate::call::Runtime;
use crate::call::{self};
use crate::guest::Guest;
use crate::policy::Policy;
use crate::record::Tape;
use crate::{Error, Script};
use futures_util::FutureExt;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;

/// The longest an automatic compile ([`Builder::auto_compile`]) may spend evaluating a
/// script's top level, whatever the policy's `limits.timeout`: it runs in the background,
/// beside the calls, and a top level slower than this keeps running from source.
pub(super) const AUTO_COMPILE_TIMEOUT: Duration = Duration::from_secs(2);

impl Palisade {
    /// Compile `script` to QuickJS bytecode once, under `policy`'s limits, so that later calls
    /// skip parsing. A syntax error is reported here, as `guest_syntax`. A script with modules
    /// ([`Script::with_modules`]) is checked the same way but keeps running from source, since
    /// bytecode does not keep its imports' attributes.
    ///
    /// For a compiled script ([`Script::from_component`]) this loads its component for this
    /// machine instead (from the on-disk cache, or compiling it there), so that the first call
    /// does not wait for it.
    pub async fn precompile(&self, policy: &Policy, script: &Script) -> Result<Script, Error> {
        if let Some(compiled) = script.compiled() {
            self.compiled_runtime(policy, Guest::for_policy(policy), compiled)
                .await?;
            return Ok(script.clone());
        }
        let runtime = self
            .runtime(policy.limits().stack, Guest::for_policy(policy))
            .await?;
        let permit = tokio::time::timeout(
            self.inner.settings.queue_timeout,
            self.inner.admission.clone().acquire_owned(),
        )
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or(Error::CapacityExhausted {
            waited_ms: self.inner.settings.queue_timeout.as_millis() as u64,
        })?;
        let deadline = std::time::Instant::now() + policy.limits().timeout.0;
        let (bytecode, _fuel) = call::compile(&runtime, policy, script, deadline).await;
        drop(permit);
        let bytecode = bytecode?;
        // QuickJS's bytecode does not keep import attributes (`with { type: "json" }`): a
        // script with modules is checked here but runs from source.
        if script.modules().next().is_some() {
            return Ok(script.clone());
        }
        Ok(script.with_bytecode(bytecode.into()))
    }

    /// Compile `script` into a component of its own: the guest snapshotted again after
    /// evaluating the module, so that a call only invokes its export. Load the result with
    /// [`Script::from_component`]; `palisade compile` writes it to a file.
    ///
    /// The module's top level runs once, here, under `policy`'s fuel and memory limits, with
    /// no clock, random source, timer or host capability: whatever it computed would be frozen
    /// into every call, so such uses fail with `not_compilable`. The globals a call under
    /// `policy` gets (`config`, `kv`, `fs`, the capability bridge's) exist while it runs, as
    /// they do for a call from source, but using one at the top level fails the same way. The
    /// first compile on a machine compiles the instrumented guest with Cranelift (about a
    /// second, then cached on disk); later ones take tens of milliseconds. The top level runs
    /// under `policy`'s `limits.timeout` as well: one still running then fails with `timeout`.
    pub async fn compile(&self, policy: &Policy, script: &Script) -> Result<Vec<u8>, Error> {
        self.compile_within(policy, script, policy.limits().timeout.0)
            .await
    }

    /// [`Palisade::compile`] with the top level's wall-clock time bounded by `timeout`.
    pub(super) async fn compile_within(
        &self,
        policy: &Policy,
        script: &Script,
        timeout: Duration,
    ) -> Result<Vec<u8>, Error> {
        if let Some(compiled) = script.compiled() {
            return Ok(compiled.wasm.to_vec());
        }
        let limits = crate::policy::Limits {
            timeout: crate::policy::HumanDuration(timeout),
            ..*policy.limits()
        };
        // The call environment names the policy's globals; the seed is not used here.
        let env = call::environment_for(policy, script, 0);
        let guest = Guest::for_policy(policy);
        let (name, source) = (script.name().to_owned(), script.source().to_owned());
        let modules = script.module_files().to_vec();
        let handle = tokio::runtime::Handle::current();
        let settings = self.inner.settings.clone();
        tokio::task::spawn_blocking(move || {
            let mut wasm = handle.block_on(crate::snapshot::preload(crate::snapshot::Preload {
                guest,
                cache_dir: settings.cache_dir.as_deref(),
                on_compile: &*settings.on_compile,
                name: &name,
                source: &source,
                modules: &modules,
                env: &env,
                limits: &limits,
            }))?;
            let marker = crate::script::Marker {
                format: crate::script::MARKER_FORMAT,
                guest: guest.sha256().to_owned(),
                name,
                source,
            };
            crate::script::add_marker(&mut wasm, &marker);
            Ok(wasm)
        })
        .await
        .map_err(|e| Error::Internal {
            detail: format!("the compile task failed: {e}"),
        })?
    }

    /// The compiled form of `script` when [`Builder::auto_compile`] has made one for `policy`;
    /// counts the call, and starts the compile when this call reaches the threshold.
    pub(super) fn auto_compiled(
        &self,
        policy: &Policy,
        script: &Script,
        tape: &Tape,
    ) -> Option<Script> {
        let auto = self.inner.auto.as_ref()?;
        if !matches!(tape, Tape::Off) {
            return None;
        }
        match auto.decide(policy, script) {
            Plan::Run(compiled) => Some(compiled),
            Plan::Source => None,
            Plan::Compile(key) => {
                let (policy, script) = (policy.clone(), script.clone());
                let mut pending = PendingCompile {
                    palisade: self.clone(),
                    key: Some(key),
                };
                let background = auto.background.clone();
                tokio::spawn(async move {
                    let this = &pending.palisade;
                    // One background compile at a time; the others wait here.
                    let Ok(_permit) = background.acquire_owned().await else {
                        return;
                    };
                    let result = async {
                        // In the background, the top level gets the policy's deadline but
                        // never more than `AUTO_COMPILE_TIMEOUT`.
                        let timeout = policy.limits().timeout.0.min(AUTO_COMPILE_TIMEOUT);
                        let wasm = this.compile_within(&policy, &script, timeout).await?;
                        let compiled = Script::from_component(wasm)?;
                        // Load its machine code now, so that no call waits for it.
                        this.precompile(&policy, &compiled).await
                    }
                    .await;
                    pending.finish(result);
                });
                None
            }
        }
    }

    /// Where `script` stands with the automatic compiler under `policy`
    /// ([`Builder::auto_compile`](crate::Builder::auto_compile)); `None` when that is off or the script is already compiled.
    pub fn auto_compile_status(
        &self,
        policy: &Policy,
        script: &Script,
    ) -> Option<AutoCompileStatus> {
        self.inner.auto.as_ref()?.status(policy, script)
    }

    /// Bytecode for a source script from the cache, compiling it on a miss, and the fuel that
    /// compile used (the call is charged for it). A call that misses while another compiles the
    /// same script waits for that compile within its own deadline, and is charged nothing for
    /// it; if that compile stopped at its own call's limits, this call compiles the script
    /// under its own. A script that does not compile runs from source, so that its error comes
    /// with the call's full receipt.
    pub(super) async fn cached_bytecode(
        &self,
        runtime: &Arc<Runtime>,
        policy: &Policy,
        script: &Script,
        deadline: Instant,
    ) -> (Option<Arc<[u8]>>, u64) {
        // A script with modules runs from source (see `precompile`).
        let cached =
            !(script.is_precompiled() || script.is_compiled() || script.modules().next().is_some());
        let Some(cache) = self.inner.bytecode.as_ref().filter(|_| cached) else {
            return (None, 0);
        };
        let key = script.key();
        let make = || compile(runtime.clone(), policy.clone(), script.clone(), deadline);
        let (compiled, fuel, waited) = match cache.lookup(&key, make) {
            Lookup::Hit(bytecode) => return (Some(bytecode), 0),
            // Its compile ends by its deadline.
            Lookup::Compile(flight) => {
                let (compiled, fuel) = flight.await;
                (compiled, fuel, false)
            }
            Lookup::Wait(flight) => match tokio::time::timeout_at(deadline.into(), flight).await {
                Ok((compiled, _)) => (compiled, 0, true),
                Err(_) => return (None, 0),
            },
        };
        match compiled {
            Compiled::Bytecode(bytecode) => (Some(bytecode), fuel),
            // Another call's limits stopped the compile this call waited for: it compiles the
            // script under its own, on its own, if any time is left.
            Compiled::Stopped if waited && Instant::now() < deadline => match make().await {
                (Compiled::Bytecode(bytecode), fuel) => {
                    cache.insert(key, bytecode.clone());
                    (Some(bytecode), fuel)
                }
                (_, fuel) => (None, fuel),
            },
            Compiled::Syntax | Compiled::Stopped => (None, fuel),
        }
    }
}

/// Compile `script` to bytecode under `policy`, by `deadline`: how it ended, and its fuel.
fn compile(runtime: Arc<Runtime>, policy: Policy, script: Script, deadline: Instant) -> Compile {
    let compile = async move {
        let (result, fuel) = call::compile(&runtime, &policy, &script, deadline).await;
        let compiled = match result {
            Ok(bytecode) => Compiled::Bytecode(bytecode.into()),
            Err(Error::GuestSyntax { .. }) => Compiled::Syntax,
            Err(_) => Compiled::Stopped,
        };
        (compiled, fuel)
    };
    // The call's span, whichever call polls it.
    compile.instrument(tracing::Span::current()).boxed()
}

/// A background compile started by [`Builder::auto_compile`]. Dropped before it finished (its
/// runtime shut down), it lets the script be counted afresh instead of staying "compiling".
pub(super) struct PendingCompile {
    palisade: Palisade,
    key: Option<crate::auto::Key>,
}

impl PendingCompile {
    pub(super) fn finish(&mut self, result: Result<Script, Error>) {
        if let (Some(key), Some(auto)) = (self.key.take(), &self.palisade.inner.auto) {
            auto.finish(key, result);
        }
    }
}

impl Drop for PendingCompile {
    fn drop(&mut self) {
        if let (Some(key), Some(auto)) = (self.key.take(), &self.palisade.inner.auto) {
            auto.abandon(key);
        }
    }
}
