//! Per-call options ([`RunOptions`]): which export to call and how, limits tighter than the
//! policy's, and metadata for the host's capability handlers.

use crate::policy::{ByteSize, HumanDuration, Limits};
use crate::{Error, Fix};
use std::sync::Arc;
use std::time::Duration;

/// Options of one call ([`Palisade::run_with`](crate::Palisade::run_with)). Limits may only be
/// lower than the policy's: a value above the policy's is refused as `invalid_input`, with the
/// policy change that would allow it as the fix.
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

    /// Attach `metadata` for the capability handlers.
    pub fn metadata(mut self, metadata: serde_json::Value) -> Self {
        self.metadata = Some(Arc::new(metadata));
        self
    }

    /// The limits of a call under `policy` with these options, or the option that asks for
    /// more than the policy allows.
    pub(crate) fn limits(&self, policy: &Limits) -> Result<Limits, Error> {
        let over = |key: &str, asked: String, allowed: String, fix: String| Error::InvalidInput {
            detail: format!(
                "the call asks for {key} = {asked}, over the policy's {allowed}; a call's \
                 options may only lower the policy's limits"
            ),
            fix: Some(Fix {
                key: key.to_owned(),
                value: fix,
            }),
        };
        let mut limits = *policy;
        if let Some(timeout) = self.timeout {
            if timeout > policy.timeout.0 {
                let asked = HumanDuration(timeout);
                return Err(over(
                    "limits.timeout",
                    asked.to_string(),
                    policy.timeout.to_string(),
                    format!("\"{asked}\""),
                ));
            }
            limits.timeout = HumanDuration(timeout);
        }
        if let Some(fuel) = self.fuel {
            if fuel > policy.fuel {
                return Err(over(
                    "limits.fuel",
                    fuel.to_string(),
                    policy.fuel.to_string(),
                    fuel.to_string(),
                ));
            }
            limits.fuel = fuel;
        }
        if let Some(memory) = self.memory {
            if memory > policy.memory {
                return Err(over(
                    "limits.memory",
                    memory.to_string(),
                    policy.memory.to_string(),
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
        let policy = *crate::Policy::builtin_default().limits();
        let lower = RunOptions::default()
            .timeout(Duration::from_millis(200))
            .fuel(1000)
            .memory(ByteSize(16 << 20));
        let limits = lower.limits(&policy).unwrap();
        assert_eq!(limits.timeout, HumanDuration(Duration::from_millis(200)));
        assert_eq!((limits.fuel, limits.memory), (1000, ByteSize(16 << 20)));
        assert_eq!(limits.stack, policy.stack);
        let higher = RunOptions::default().timeout(Duration::from_secs(5));
        let error = higher.limits(&policy).unwrap_err();
        assert_eq!(error.code(), "invalid_input");
        assert_eq!(error.fix().unwrap().key, "limits.timeout");
        assert_eq!(error.fix().unwrap().value, "\"5s\"");
        let error = RunOptions::default()
            .fuel(u64::MAX)
            .limits(&policy)
            .unwrap_err();
        assert_eq!(error.fix().unwrap().key, "limits.fuel");
    }
}
