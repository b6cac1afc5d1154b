//! One call: a fresh store with the policy's limits, instantiate, invoke, classify, and the
//! [`Outcome`] with its receipt. Nothing of a call outlives its store.

mod cancel;
mod classify;
mod outcome;
mod runtime;
mod state;
mod stderr;
mod store;

pub(crate) use cancel::Cancel;
pub use outcome::{Outcome, Receipt};
pub(crate) use runtime::{Runtime, instance_pre};
pub(crate) use state::{CallState, Extras, Shared, link};

use crate::bindings::exports::palisade::sandbox::runner::{Environment, Module};
use crate::caps::console::Console;
use crate::guest::Guest;
use crate::policy::Clock;
use crate::policy::Policy;
use crate::{Error, Script};
pub(crate) use outcome::{accept_output, finish};
use std::time::Instant;
use stderr::StderrConsole;
use store::new_store;
pub(crate) use store::{arm, guarded};

/// When a call started (for the receipt) and when its deadline falls, and the fuel it has
/// already spent before its sandbox (compiling its source to bytecode on a cache miss): one
/// budget covers both.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Times {
    pub started: Instant,
    pub deadline: Instant,
    pub fuel_spent: u64,
}

/// What a call under `policy` gets in the guest: its globals, its random seed, its clock.
pub(crate) fn environment(policy: &Policy, random_seed: u64) -> Environment {
    Environment {
        bridge_global: policy.capabilities().map(|c| c.global.clone()),
        random_seed,
        config: policy.config().is_some(),
        fs: policy.grants_files(),
        kv_bucket: policy.kv().map(|kv| kv.default_bucket.clone()),
        fixed_clock: matches!(policy.determinism().clock, Clock::Fixed(_)),
        spread_args: false,
        stack_limit: quickjs_stack_limit(policy.limits().stack.0),
        response_body_limit: policy
            .http()
            .map_or(crate::policy::DEFAULT_MAX_RESPONSE_BODY, |h| {
                h.max_response_body
            })
            .0,
        console_limit: policy.limits().console.0,
        timers: true,
        eval: true,
    }
}

/// [`environment`] for a call of `script`: an action app's gets only the timers and `eval`
/// its policy's `[apps]` table grants.
pub(crate) fn environment_for(policy: &Policy, script: &Script, random_seed: u64) -> Environment {
    let (timers, eval) = script.runtime_grants();
    Environment {
        timers,
        eval,
        ..environment(policy, random_seed)
    }
}

/// How much of the guest's shadow stack QuickJS may use under a native wasm stack of `stack`
/// bytes. A JavaScript call takes about 950 bytes of the native stack and 290 of the shadow
/// one, so a quarter of `stack` in shadow bytes runs out before the native stack does (and
/// before the 6 MiB shadow stack itself, for every `limits.stack`): QuickJS then throws a
/// `RangeError` the script can catch instead of the call ending in a trap.
fn quickjs_stack_limit(stack: u64) -> u32 {
    u32::try_from(stack / 4).unwrap_or(u32::MAX)
}

/// What a call invokes: an export (or a method of the default export) by name, with the input
/// as its one argument or, when `spread_args`, a JSON array of its arguments.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Invoke<'a> {
    pub export: &'a str,
    pub spread_args: bool,
}

impl Invoke<'static> {
    /// The default export, called with the input.
    pub const DEFAULT: Self = Invoke {
        export: "default",
        spread_args: false,
    };
}

pub(crate) async fn run(
    runtime: &Runtime,
    policy: &Policy,
    shared: Shared,
    script: &Script,
    invoke: Invoke<'_>,
    input: &str,
    times: Times,
) -> Outcome {
    // Prepare: what the guest is told, and the fuel left after any compile.
    let random_seed = crate::caps::clock::math_random_seed(policy.determinism(), &shared.tape);
    let env = Environment {
        spread_args: invoke.spread_args,
        ..environment_for(policy, script, random_seed)
    };
    let module = module_of(script);
    let budget = policy.limits().fuel.saturating_sub(times.fuel_spent);
    // A standalone component (`palisade build`) writes its console lines to stderr.
    let stderr = is_standalone(script).then(|| {
        let cap = policy.limits().console.0;
        let console = Console::new(cap).stream_to(shared.events.clone(), || {
            crate::secrets::Secrets::from_policy(policy)
        });
        StderrConsole::new(console, cap)
    });
    // Store: the call's state and limits.
    let mut store = match new_store(
        runtime,
        policy,
        shared,
        stderr.as_ref(),
        times.deadline,
        budget,
    ) {
        Ok(store) => store,
        Err(error) => return Outcome::failed(error, policy, times.started),
    };
    // Instantiate and invoke, under the deadline.
    let result = guarded(&mut store, policy, times.deadline, async |store| {
        let sandbox = runtime.pre.instantiate_async(&mut *store).await?;
        sandbox
            .palisade_sandbox_runner()
            .call_run(
                &mut *store,
                script.name(),
                &module,
                script.module_files(),
                invoke.export,
                input,
                &env,
            )
            .await
    })
    .await
    .and_then(|json| accept_output(policy, json));
    // Finish: what it used, and the outcome.
    let fuel_used = match store.get_fuel() {
        Ok(left) => times.fuel_spent + (budget - left),
        Err(_) => 0,
    };
    let mut state = store.into_data();
    if let Some(stderr) = &stderr {
        state.console = stderr.finish();
    }
    let mut outcome = finish(state, result, fuel_used, policy, times.started);
    outcome.receipt.form = script.last_expression().then_some("last_expression");
    outcome
}

/// Whether `script` is a standalone component: built by `palisade build` into the standalone
/// guest, which reaches the host only through standard WASI.
fn is_standalone(script: &Script) -> bool {
    script
        .compiled()
        .is_some_and(|compiled| compiled.guest == Guest::Standalone)
}

/// How the guest gets the script: already evaluated in a compiled component, as bytecode, or
/// as source.
fn module_of(script: &Script) -> Module {
    match script.bytecode() {
        _ if script.is_compiled() => Module::Preloaded,
        Some(bytecode) => Module::Bytecode(bytecode.to_vec()),
        None => Module::Source(script.source().to_owned()),
    }
}

/// Compile a script to QuickJS bytecode in a sandbox of its own, under `policy`'s limits;
/// also returns the fuel the compile used, which the call it serves is charged for.
pub(crate) async fn compile(
    runtime: &Runtime,
    policy: &Policy,
    script: &Script,
    deadline: Instant,
) -> (Result<Vec<u8>, Error>, u64) {
    let budget = policy.limits().fuel;
    let mut store = match new_store(runtime, policy, Shared::default(), None, deadline, budget) {
        Ok(store) => store,
        Err(error) => return (Err(error), 0),
    };
    let result = guarded(&mut store, policy, deadline, async |store| {
        let sandbox = runtime.pre.instantiate_async(&mut *store).await?;
        sandbox
            .palisade_sandbox_runner()
            .call_compile(
                &mut *store,
                script.name(),
                script.source(),
                script.module_files(),
            )
            .await
    })
    .await;
    let used = store.get_fuel().map_or(0, |left| budget - left);
    (result, used)
}

pub(crate) fn check_input(policy: &Policy, input: &str) -> Result<(), Error> {
    let limit = policy.limits().input;
    if input.len() as u64 > limit.0 {
        return Err(Error::InvalidInput {
            detail: format!(
                "the input is {} bytes, over the {limit} input limit",
                input.len()
            ),
            // The policy accepts inputs up to 256 MiB; past that no policy change helps.
            fix: (input.len() as u64 <= crate::policy::IO_MAX).then(|| crate::Fix {
                key: "limits.input".into(),
                value: format!(
                    "\"{}\"",
                    crate::policy::ByteSize(
                        (input.len() as u64)
                            .next_power_of_two()
                            .min(crate::policy::IO_MAX)
                    )
                ),
            }),
        });
    }
    // Whether it is JSON is checked where it is read, in the guest, before any of the script
    // runs: reading it twice was 4% of a call with a 40 KB input.
    Ok(())
}
