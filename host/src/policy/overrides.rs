//! `[overrides]`: what one call's options ([`RunOptions`](crate::RunOptions), `palisade run
//! --timeout/--fuel/--memory/--now/--seed/--config`) may set beyond the policy's own values.
//! Without the table a call may only lower `timeout`, `fuel` and `memory`; with it, raise them
//! up to its ceilings, fix the clock (`now`) and the seed (`seed`), and set the `[config]` keys
//! it lists.

use super::raw::RawPolicy;
use super::units::{ByteSize, HumanDuration};
use super::{Clock, Limits, Policy, PolicyError, Source, bounds};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use toml::Spanned;

/// `[overrides]`, resolved: the ceilings of a call's limits and what else it may set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Overrides {
    /// The longest deadline a call may ask for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<HumanDuration>,
    /// The most fuel a call may ask for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
    /// The most memory a call may ask for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<ByteSize>,
    /// Whether a call may fix the clock.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub now: bool,
    /// Whether a call may choose the seed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub seed: bool,
    /// The `[config]` keys a call may set.
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub config: BTreeSet<String>,
}

impl Overrides {
    pub(super) fn is_default(&self) -> bool {
        *self == Overrides::default()
    }
}

pub(super) fn resolve(
    raw: &RawPolicy,
    limits: &Limits,
    source: &Source<'_>,
) -> Result<Overrides, PolicyError> {
    let Some(o) = &raw.overrides else {
        return Ok(Overrides::default());
    };
    fn ceiling<T: Copy + PartialOrd + std::fmt::Display>(
        source: &Source<'_>,
        key: &str,
        value: &Option<Spanned<T>>,
        (min, max): (T, T),
    ) -> Result<Option<T>, PolicyError> {
        let Some(value) = value else { return Ok(None) };
        let v = *value.get_ref();
        if v < min || v > max {
            return Err(source.error(
                key,
                Some(value.span()),
                format!("{v} is out of range; allowed is {min} (the policy's limit) to {max}"),
            ));
        }
        Ok(Some(v))
    }
    let timeout = ceiling(
        source,
        "overrides.timeout",
        &o.timeout,
        (limits.timeout, HumanDuration(bounds::TIMEOUT.1)),
    )?;
    let fuel = ceiling(source, "overrides.fuel", &o.fuel, (limits.fuel, u64::MAX))?;
    let memory = ceiling(
        source,
        "overrides.memory",
        &o.memory,
        (limits.memory, bounds::MEMORY.1),
    )?;
    if let Some(key) = o.config.iter().find(|k| k.is_empty() || k.len() > 256) {
        return Err(source.error(
            "overrides.config",
            None,
            format!("config key `{key}` must have 1 to 256 characters"),
        ));
    }
    Ok(Overrides {
        timeout,
        fuel,
        memory,
        now: o.now,
        seed: o.seed,
        config: o.config.iter().cloned().collect(),
    })
}

/// The most bytes of one config value a call (or a server session) may set: values are copied
/// into every call.
pub const CONFIG_VALUE_MAX: usize = 64 << 10;

/// What a call asks to set, checked against the policy by [`Policy::for_call`].
pub(crate) struct CallSettings<'a> {
    pub limits: Limits,
    pub now: Option<std::time::Duration>,
    pub seed: Option<u64>,
    pub config: &'a BTreeMap<String, String>,
}

/// Why a call's option is refused: the key it needs, the value that would allow it, and why.
pub(crate) struct Refused {
    pub detail: String,
    pub key: String,
    pub value: String,
}

impl Policy {
    /// The ceiling a call's option may reach: the `[overrides]` value, else the limit itself.
    pub(crate) fn overrides(&self) -> &Overrides {
        &self.overrides
    }

    /// This policy as one call runs it: its limits, clock, seed and config values set from
    /// the call's options, each checked against `[overrides]` first.
    pub(crate) fn for_call(&self, asked: CallSettings<'_>) -> Result<Policy, Refused> {
        let o = &self.overrides;
        let mut policy = self.clone();
        policy.limits = asked.limits;
        if let Some(at) = asked.now {
            if !o.now {
                return Err(Refused {
                    detail: "the call sets the clock, which the policy does not allow".into(),
                    key: "overrides.now".into(),
                    value: "true".into(),
                });
            }
            policy.determinism.clock = Clock::Fixed(at);
        }
        if let Some(seed) = asked.seed {
            if !o.seed {
                return Err(Refused {
                    detail: "the call sets the seed, which the policy does not allow".into(),
                    key: "overrides.seed".into(),
                    value: "true".into(),
                });
            }
            policy.determinism.seed = Some(seed);
        }
        if !asked.config.is_empty() {
            let mut config = self.config.as_deref().cloned().unwrap_or_default();
            for (key, value) in asked.config {
                if !o.config.contains(key) {
                    let mut keys: Vec<&str> = o.config.iter().map(String::as_str).collect();
                    keys.push(key);
                    return Err(Refused {
                        detail: format!(
                            "the call sets config `{key}`, which the policy's overrides.config \
                             does not list"
                        ),
                        key: "overrides.config".into(),
                        value: serde_json::to_string(&keys).unwrap_or_default(),
                    });
                }
                if value.len() > CONFIG_VALUE_MAX {
                    return Err(Refused {
                        detail: format!(
                            "the call's config `{key}` has {} bytes, over the {CONFIG_VALUE_MAX} \
                             a call may set",
                            value.len()
                        ),
                        key: format!("config.{key}"),
                        value: "a shorter value".into(),
                    });
                }
                config.insert(key.clone(), value.clone());
            }
            policy.config = Some(Arc::new(config));
        }
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use crate::Policy;

    #[test]
    fn ceilings_are_at_least_the_limits_and_within_the_bounds() {
        let ok = Policy::from_toml(
            "[limits]\ntimeout = \"1s\"\n[overrides]\ntimeout = \"5s\"\nfuel = 100_000_000_000\n\
             memory = \"256MiB\"\nnow = true\nseed = true\nconfig = [\"region\"]\n",
            None,
        )
        .unwrap();
        let o = ok.overrides();
        assert_eq!(o.timeout.unwrap().to_string(), "5s");
        assert!(o.now && o.seed && o.config.contains("region"));
        // The resolved policy is itself a valid policy with the same overrides.
        let again = Policy::from_toml(&ok.to_string(), None).unwrap();
        assert_eq!(again.overrides(), o);
        for (toml, key) in [
            ("[overrides]\ntimeout = \"10ms\"\n", "overrides.timeout"),
            ("[overrides]\nmemory = \"8GiB\"\n", "overrides.memory"),
            ("[overrides]\nfuel = 1\n", "overrides.fuel"),
            ("[overrides]\nconfig = [\"\"]\n", "overrides.config"),
            ("[overrides]\nclock = true\n", "overrides.clock"),
        ] {
            let error = Policy::from_toml(toml, None).unwrap_err();
            assert_eq!(error.key, key, "{toml}");
        }
    }
}
