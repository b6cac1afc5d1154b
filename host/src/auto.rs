//! Compiled scripts the library makes on its own ([`crate::Builder::auto_compile`]): a source
//! script called often enough under one policy is compiled into a component of its own in the
//! background, as `palisade compile` would, and later calls under that policy run from it.
//!
//! The compile is made for that policy: the globals its calls get (`config`, `kv`, `fs`, the
//! capability bridge's) exist while the top level runs, as they do for a call from source, but
//! the top level may not use them. That, and anything else whose result a snapshot would
//! freeze (clock, randomness, timers, console, host calls), makes the compile fail with
//! `not_compilable`; such a script keeps running from source.

use crate::{Policy, Script};
use lru::LruCache;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

/// Scripts and policies whose calls are counted; past it the least recently called is
/// forgotten.
const TRACKED: usize = 1024;

/// Compiled scripts kept (each holds its component, a few MB): as many as the engine keeps
/// loaded. One evicted here is counted again from zero.
const READY: usize = 32;

/// Background compiles at a time: each evaluates a top level (under the policy's deadline, at
/// most `palisade::compile::AUTO_COMPILE_TIMEOUT`) and compiles the result with Cranelift (about a second
/// of CPU), beside the calls. Scripts that reach the threshold meanwhile wait their turn
/// (`Compiling`), while their calls run from source.
const BACKGROUND: usize = 1;

/// The script (SHA-256 of its name and source) and the policy (its SHA-256).
pub(crate) type Key = ([u8; 32], String);

/// Where a script stands with the automatic compiler, under one policy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AutoCompileStatus {
    /// Called this many times so far; compiled once the count reaches the threshold.
    Counting {
        /// Calls counted so far under this policy.
        calls: u32,
    },
    /// Being compiled in the background; calls run from source meanwhile.
    Compiling,
    /// Compiled: calls run from the component.
    Ready,
    /// Could not be compiled (the error's code and message, such as `not_compilable`); calls
    /// keep running from source.
    Refused {
        /// The compile error's code and message.
        reason: String,
    },
}

enum Entry {
    Counting(u32),
    Compiling,
    Refused(String),
}

pub(crate) struct AutoCompiler {
    after: u32,
    tracked: Mutex<LruCache<Key, Entry>>,
    ready: Mutex<LruCache<Key, Script>>,
    /// Permits to run a background compile.
    pub background: Arc<Semaphore>,
}

/// What a call should do about a script.
pub(crate) enum Plan {
    /// Run this compiled form instead.
    Run(Script),
    /// Start compiling it, then run from source.
    Compile(Key),
    /// Run from source.
    Source,
}

impl AutoCompiler {
    pub fn new(after: u32) -> Option<Self> {
        (after > 0).then(|| Self {
            after,
            tracked: Mutex::new(LruCache::new(NonZeroUsize::new(TRACKED).expect("non-zero"))),
            ready: Mutex::new(LruCache::new(NonZeroUsize::new(READY).expect("non-zero"))),
            background: Arc::new(Semaphore::new(BACKGROUND)),
        })
    }

    /// Count a call of `script` under `policy`.
    pub fn decide(&self, policy: &Policy, script: &Script) -> Plan {
        let Some(key) = key(policy, script) else {
            return Plan::Source;
        };
        if let Some(compiled) = lock(&self.ready).get(&key) {
            return Plan::Run(compiled.clone());
        }
        let mut tracked = lock(&self.tracked);
        let entry = tracked.get_or_insert_mut(key.clone(), || Entry::Counting(0));
        match entry {
            Entry::Counting(calls) => {
                *calls += 1;
                if *calls < self.after {
                    return Plan::Source;
                }
                *entry = Entry::Compiling;
                Plan::Compile(key)
            }
            Entry::Compiling | Entry::Refused(_) => Plan::Source,
        }
    }

    /// Record how a compile started by [`Plan::Compile`] ended.
    pub fn finish(&self, key: Key, result: Result<Script, crate::Error>) {
        match result {
            Ok(compiled) => {
                lock(&self.tracked).pop(&key);
                lock(&self.ready).put(key, compiled);
            }
            // The host was busy (its compile budget spent, say): nothing is wrong with the
            // script, so it is counted again rather than refused for good.
            Err(error) if error.error_code() == crate::ErrorCode::CapacityExhausted => {
                tracing::info!("script not compiled automatically yet: {error}");
                lock(&self.tracked).put(key, Entry::Counting(0));
            }
            Err(error) => {
                tracing::info!(
                    code = error.code(),
                    "script not compiled automatically: {error}"
                );
                lock(&self.tracked).put(key, Entry::Refused(format!("{}: {error}", error.code())));
            }
        }
    }

    /// Forget a compile that ended without a result (its task was dropped).
    pub fn abandon(&self, key: Key) {
        let mut tracked = lock(&self.tracked);
        if matches!(tracked.peek(&key), Some(Entry::Compiling)) {
            tracked.put(key, Entry::Counting(0));
        }
    }

    pub fn status(&self, policy: &Policy, script: &Script) -> Option<AutoCompileStatus> {
        let key = key(policy, script)?;
        if lock(&self.ready).contains(&key) {
            return Some(AutoCompileStatus::Ready);
        }
        Some(match lock(&self.tracked).peek(&key) {
            None => AutoCompileStatus::Counting { calls: 0 },
            Some(Entry::Counting(calls)) => AutoCompileStatus::Counting { calls: *calls },
            Some(Entry::Compiling) => AutoCompileStatus::Compiling,
            Some(Entry::Refused(reason)) => AutoCompileStatus::Refused {
                reason: reason.clone(),
            },
        })
    }
}

/// The key of `script` under `policy`; scripts that are already compiled are not tracked.
fn key(policy: &Policy, script: &Script) -> Option<Key> {
    (!script.is_compiled()).then(|| (script.key(), policy.sha256().to_owned()))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    /// A compile the busy host turned down is counted again; one the script failed is refused.
    #[test]
    fn a_busy_host_does_not_refuse_the_script_for_good() {
        let auto = AutoCompiler::new(1).unwrap();
        let policy = Policy::builtin_default();
        let script = Script::new("a.js", "export default () => 1;");
        let Plan::Compile(key) = auto.decide(&policy, &script) else {
            panic!("the first call starts the compile");
        };
        let busy = Error::CompileBudget {
            budget: crate::policy::HumanDuration(std::time::Duration::from_secs(30)),
            retry_ms: 500,
        };
        auto.finish(key, Err(busy));
        assert_eq!(
            auto.status(&policy, &script),
            Some(AutoCompileStatus::Counting { calls: 0 })
        );
        let Plan::Compile(key) = auto.decide(&policy, &script) else {
            panic!("counted again, it starts another compile");
        };
        let failed = Error::NotCompilable {
            detail: "reads the clock".into(),
        };
        auto.finish(key, Err(failed));
        assert!(matches!(
            auto.status(&policy, &script),
            Some(AutoCompileStatus::Refused { .. })
        ));
    }
}
