//! Per-call options ([`RunOptions`]): which export to call and how, limits tighter than the
//! policy's (or up to its `[overrides]`), the clock, the seed, config values, files for the
//! scratch directory, and metadata for the host's capability handlers.

use crate::policy::{ByteSize, CallSettings, HumanDuration, Limits, Policy};
use crate::{Error, Fix};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Options of one call ([`Palisade::run_with`](crate::Palisade::run_with)). Limits may only be
/// lower than the policy's, unless its `[overrides]` table sets higher ceilings; the clock,
/// the seed and config values only as `[overrides]` allows. A value above what is allowed is
/// refused as `invalid_input`, with the ceiling in its message and the policy change that
/// would allow it as the fix.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunOptions {
    /// The export to call, or a method of the default export; the default export when `None`.
    pub export: Option<String>,
    /// The input is a JSON array whose elements are the export's arguments, one each.
    pub spread_args: bool,
    /// A deadline shorter than `limits.timeout`.
    pub timeout: Option<Duration>,
    /// Less fuel than `limits.fuel`.
    pub fuel: Option<u64>,
    /// Less memory than `limits.memory`.
    pub memory: Option<ByteSize>,
    /// Handed to capability handlers ([`CallContext::metadata`](crate::CallContext)) and sent
    /// to `forward` URLs as the `palisade-metadata` header: an actor id, a tenant.
    pub metadata: Option<Arc<serde_json::Value>>,
    /// The instant the script's clock reads, fixed for the call (`overrides.now`).
    pub now: Option<SystemTime>,
    /// The seed of `Math.random` and WASI randomness (`overrides.seed`).
    pub seed: Option<u64>,
    /// `[config]` values for this call, over the policy's (keys in `overrides.config`).
    pub config: BTreeMap<String, String>,
    /// Files placed in the scratch directory (`[fs.scratch]`) before the script runs, by
    /// name; with the seed they must fit the scratch quota and `max_files`.
    pub files: Vec<(String, bytes::Bytes)>,
    /// Called with each console line and audit record as the call makes them
    /// ([`RunOptions::on_event`]).
    pub events: Option<crate::EventSink>,
    /// Fields added to each line this call writes to the operator's audit log
    /// ([`Builder::audit_log`](crate::Builder::audit_log)), such as a tenant and a session.
    pub audit_tags: Option<Arc<serde_json::Map<String, serde_json::Value>>>,
    /// Hold the call's key-value writes instead of storing them
    /// ([`RunOptions::kv_transaction`]).
    pub kv_transaction: bool,
    /// Ends the call as `cancelled` when cancelled ([`RunOptions::canceller`]).
    pub cancel: Option<crate::Canceller>,
}

impl RunOptions {
    /// Call `export` (an export, or a method of the default export).
    pub fn export(mut self, export: impl Into<String>) -> Self {
        self.export = Some(export.into());
        self
    }

    /// Pass the input's elements (a JSON array) as the arguments.
    pub fn spread_args(mut self) -> Self {
        self.spread_args = true;
        self
    }

    /// End the call after `timeout`, if that is sooner than the policy's deadline.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Give the call at most `fuel` units.
    pub fn fuel(mut self, fuel: u64) -> Self {
        self.fuel = Some(fuel);
        self
    }

    /// Cap the guest's memory at `memory`.
    pub fn memory(mut self, memory: ByteSize) -> Self {
        self.memory = Some(memory);
        self
    }

    /// Add `tags` to each line this call writes to the operator's audit log: who called, for
    /// the operator (the script and the outcome never see them). A tag named like a record's
    /// own field (`target`, `decision`, …) is written after it, and JSON readers keep the last.
    pub fn audit_tags(mut self, tags: serde_json::Map<String, serde_json::Value>) -> Self {
        self.audit_tags = Some(Arc::new(tags));
        self
    }

    /// Attach `metadata` for the capability handlers.
    pub fn metadata(mut self, metadata: serde_json::Value) -> Self {
        self.metadata = Some(Arc::new(metadata));
        self
    }

    /// Fix the script's clock at `now` (the policy must set `overrides.now = true`).
    pub fn now(mut self, now: SystemTime) -> Self {
        self.now = Some(now);
        self
    }

    /// Seed `Math.random` and WASI randomness (the policy must set `overrides.seed = true`).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Set the config value `key` for this call (`key` must be in `overrides.config`).
    pub fn config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.config.insert(key.into(), value.into());
        self
    }

    /// Place a file named `name` holding `contents` in the scratch directory.
    pub fn file(mut self, name: impl Into<String>, contents: impl Into<bytes::Bytes>) -> Self {
        self.files.push((name.into(), contents.into()));
        self
    }

    /// Let `canceller` end the call as `cancelled` ([`Canceller::cancel`](crate::Canceller)),
    /// as [`Palisade::start`](crate::Palisade::start)'s handle does, for a call awaited where
    /// it runs ([`Palisade::run_with`](crate::Palisade::run_with)): on the caller's own thread
    /// under `Runtime::block_on`, without a task of its own. A canceller cancelled before the
    /// call starts ends it before its sandbox runs.
    pub fn canceller(mut self, canceller: &crate::Canceller) -> Self {
        self.cancel = Some(canceller.clone());
        self
    }

    /// Call `sink` with each console line and audit record while the call runs.
    pub fn on_event(mut self, sink: impl Fn(crate::Event) + Send + Sync + 'static) -> Self {
        self.events = Some(crate::EventSink(Arc::new(sink)));
        self
    }

    /// Run the call in a key-value transaction: its reads see its own writes (sets, deletes,
    /// increments, swaps; `list` and the `max_keys` quota count them as made), but nothing
    /// reaches the store while it runs. Its [`Outcome::kv_writes`](crate::Outcome::kv_writes)
    /// then holds the writes, which the embedder applies in one transaction
    /// ([`Palisade::apply_kv`](crate::Palisade::apply_kv)) to commit the call, or drops to
    /// discard it (a dry run, a preview, a failed call). How the apply treats another writer's
    /// changes since the call is documented on [`KvWrites`](crate::kv::KvWrites): increments
    /// add as deltas, compare-and-swaps are checked again (a moved value fails the apply with
    /// [`KvError::Conflict`](crate::kv::KvError::Conflict), writing nothing). The pending
    /// writes may hold up to [`MAX_TRANSACTION_BYTES`](crate::kv::MAX_TRANSACTION_BYTES).
    pub fn kv_transaction(mut self) -> Self {
        self.kv_transaction = true;
        self
    }

    /// The policy one call runs under: `policy` itself when the options change nothing it
    /// holds, else a copy with the call's limits, clock, seed and config, each checked first.
    pub(crate) fn policy<'p>(&self, policy: &'p Policy) -> Result<Cow<'p, Policy>, Error> {
        let limits = self.limits(policy)?;
        self.check_files(policy)?;
        if limits == *policy.limits()
            && self.now.is_none()
            && self.seed.is_none()
            && self.config.is_empty()
        {
            return Ok(Cow::Borrowed(policy));
        }
        let now = match self.now {
            Some(at) => Some(at.duration_since(SystemTime::UNIX_EPOCH).map_err(|_| {
                Error::InvalidInput {
                    detail: "the call's clock instant is before 1970".into(),
                    fix: None,
                }
            })?),
            None => None,
        };
        let asked = CallSettings {
            limits,
            now,
            seed: self.seed,
            config: &self.config,
        };
        policy
            .for_call(asked)
            .map(Cow::Owned)
            .map_err(|refused| Error::PolicyDenied {
                capability: "call options".into(),
                rule: refused.key.clone(),
                reason: refused.detail,
                fix: Some(Fix {
                    key: refused.key,
                    value: refused.value,
                }),
            })
    }

    /// The call's files have plain names and fit the policy's scratch directory (its seed is
    /// counted when the directory is made).
    fn check_files(&self, policy: &Policy) -> Result<(), Error> {
        if self.files.is_empty() {
            return Ok(());
        }
        let refuse = |detail: String, fix: Option<Fix>| Err(Error::InvalidInput { detail, fix });
        // What the policy does not allow the call's files is the policy's refusal.
        let deny = |reason: String, key: &str, value: String| {
            Err(Error::PolicyDenied {
                capability: "call options".into(),
                rule: key.to_owned(),
                reason,
                fix: Some(Fix {
                    key: key.to_owned(),
                    value,
                }),
            })
        };
        let Some(scratch) = policy.fs().and_then(|fs| fs.scratch.as_ref()) else {
            return deny(
                "the call places files in the scratch directory, and the policy has none".into(),
                "fs.scratch.guest",
                "\"/scratch\"".into(),
            );
        };
        let mut names = std::collections::BTreeSet::new();
        for (name, _) in &self.files {
            let plain = !name.is_empty()
                && name.len() <= 255
                && name != "."
                && name != ".."
                && !name.contains(['/', '\\', '\0']);
            if !plain {
                return refuse(
                    format!("{name:?} is not a file name (one path component, no `/`)"),
                    None,
                );
            }
            if !names.insert(name.as_str()) {
                return refuse(format!("the call places {name:?} twice"), None);
            }
        }
        let bytes: u64 = self.files.iter().map(|(_, b)| b.len() as u64).sum();
        if bytes > scratch.quota.0 {
            return deny(
                format!(
                    "the call's files hold {bytes} bytes, over the scratch quota of {}",
                    scratch.quota
                ),
                "fs.scratch.quota",
                format!("\"{}\"", ByteSize(bytes)),
            );
        }
        if self.files.len() as u64 > scratch.max_files {
            return deny(
                format!(
                    "the call places {} files, over the scratch directory's max_files of {}",
                    self.files.len(),
                    scratch.max_files
                ),
                "fs.scratch.max_files",
                self.files.len().to_string(),
            );
        }
        Ok(())
    }

    /// The limits of a call under `policy` with these options, or the option that asks for
    /// more than the policy allows: above its limit without an `[overrides]` ceiling, or
    /// above that ceiling.
    pub(crate) fn limits(&self, policy: &Policy) -> Result<Limits, Error> {
        let own = *policy.limits();
        let o = policy.overrides();
        /// Refuse `asked` for `name`: over the limit (fix: raise it), or over the ceiling
        /// `[overrides]` sets (fix: raise the ceiling).
        fn over(name: &str, asked: String, allowed: String, ceiling: bool, fix: String) -> Error {
            let (key, why) = if ceiling {
                (format!("overrides.{name}"), "the policy's ceiling")
            } else {
                (
                    format!("limits.{name}"),
                    "the policy's limit, which it has no [overrides] ceiling to raise past",
                )
            };
            Error::PolicyDenied {
                capability: "call options".into(),
                rule: key.clone(),
                reason: format!("the call asks for {name} = {asked}, over {why} {key} = {allowed}"),
                fix: Some(Fix { key, value: fix }),
            }
        }
        let mut limits = own;
        if let Some(timeout) = self.timeout {
            let ceiling = o.timeout.unwrap_or(own.timeout);
            if timeout > ceiling.0 {
                let asked = HumanDuration(timeout);
                return Err(over(
                    "timeout",
                    asked.to_string(),
                    ceiling.to_string(),
                    o.timeout.is_some(),
                    format!("\"{asked}\""),
                ));
            }
            limits.timeout = HumanDuration(timeout);
        }
        if let Some(fuel) = self.fuel {
            let ceiling = o.fuel.unwrap_or(own.fuel);
            if fuel > ceiling {
                return Err(over(
                    "fuel",
                    fuel.to_string(),
                    ceiling.to_string(),
                    o.fuel.is_some(),
                    fuel.to_string(),
                ));
            }
            limits.fuel = fuel;
        }
        if let Some(memory) = self.memory {
            let ceiling = o.memory.unwrap_or(own.memory);
            if memory > ceiling {
                return Err(over(
                    "memory",
                    memory.to_string(),
                    ceiling.to_string(),
                    o.memory.is_some(),
                    format!("\"{memory}\""),
                ));
            }
            limits.memory = memory;
        }
        Ok(limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_only_lower_the_limits() {
        let policy = crate::Policy::builtin_default();
        let lower = RunOptions::default()
            .timeout(Duration::from_millis(200))
            .fuel(1000)
            .memory(ByteSize(16 << 20));
        let limits = lower.limits(&policy).unwrap();
        assert_eq!(limits.timeout, HumanDuration(Duration::from_millis(200)));
        assert_eq!((limits.fuel, limits.memory), (1000, ByteSize(16 << 20)));
        assert_eq!(limits.stack, policy.limits().stack);
        let higher = RunOptions::default().timeout(Duration::from_secs(5));
        let error = higher.limits(&policy).unwrap_err();
        assert_eq!(error.code(), "policy_denied");
        assert_eq!(error.fix().unwrap().key, "limits.timeout");
        assert_eq!(error.fix().unwrap().value, "\"5s\"");
        let error = RunOptions::default()
            .fuel(u64::MAX)
            .limits(&policy)
            .unwrap_err();
        assert_eq!(error.fix().unwrap().key, "limits.fuel");
    }

    #[test]
    fn overrides_set_the_ceilings_and_allow_the_clock_seed_and_config() {
        let policy = crate::Policy::from_toml(
            "[limits]\ntimeout = \"1s\"\n[config]\nregion = \"eu\"\n[overrides]\n\
             timeout = \"5s\"\nnow = true\nconfig = [\"region\"]\n",
            None,
        )
        .unwrap();
        let limits = RunOptions::default()
            .timeout(Duration::from_secs(3))
            .limits(&policy)
            .unwrap();
        assert_eq!(limits.timeout, HumanDuration(Duration::from_secs(3)));
        let error = RunOptions::default()
            .timeout(Duration::from_secs(6))
            .limits(&policy)
            .unwrap_err();
        assert!(
            error.to_string().contains("overrides.timeout = 5s"),
            "{error}"
        );
        assert_eq!(error.code(), "policy_denied");
        assert_eq!(error.fix().unwrap().key, "overrides.timeout");
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(86_400);
        let options = RunOptions::default().now(at).config("region", "us");
        let called = options.policy(&policy).unwrap();
        assert_eq!(
            called.determinism().clock,
            crate::policy::Clock::Fixed(Duration::from_secs(86_400))
        );
        assert_eq!(called.config().unwrap()["region"], "us");
        assert_eq!(policy.config().unwrap()["region"], "eu");
        for (options, key) in [
            (RunOptions::default().seed(7), "overrides.seed"),
            (
                RunOptions::default().config("other", "x"),
                "overrides.config",
            ),
            (RunOptions::default().file("a.txt", "x"), "fs.scratch.guest"),
        ] {
            let error = options.policy(&policy).unwrap_err();
            assert_eq!(error.code(), "policy_denied");
            assert_eq!(error.fix().unwrap().key, key);
        }
    }
}
