//! `[determinism]`: the clock and the seed a script sees.

use super::raw::RawDeterminism;
use super::{PolicyError, Source};
use serde::Serialize;
use std::time::Duration;

/// `[determinism]`: what the script sees of time and randomness.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Determinism {
    /// The wall clock the script reads (`Date.now()`, `new Date()`).
    pub clock: Clock,
    /// Seed for `Math.random` and WASI randomness; `None` draws a fresh seed for every call.
    pub seed: Option<u64>,
}

/// Written back as the policy file spells it: `clock`, `instant`, `seed`.
impl Serialize for Determinism {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        match self.clock {
            Clock::Real => map.serialize_entry("clock", "real")?,
            Clock::Fixed(at) => {
                map.serialize_entry("clock", "fixed")?;
                let at = humantime::format_rfc3339(std::time::UNIX_EPOCH + at).to_string();
                map.serialize_entry("instant", &at)?;
            }
        }
        if let Some(seed) = self.seed {
            map.serialize_entry("seed", &seed)?;
        }
        map.end()
    }
}

impl Determinism {
    pub(super) fn is_default(&self) -> bool {
        *self == Determinism::default()
    }
}

/// Wall clock of a call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Clock {
    /// The host's real time.
    #[default]
    Real,
    /// Always this instant (time since the Unix epoch); the monotonic clock stands still.
    Fixed(Duration),
}

pub(super) fn resolve(
    raw: &RawDeterminism,
    source: &Source<'_>,
) -> Result<Determinism, PolicyError> {
    let instant = match &raw.instant {
        Some(text) => {
            let at = humantime::parse_rfc3339(text.get_ref()).map_err(|e| {
                source.error(
                    "determinism.instant",
                    Some(text.span()),
                    format!("{e}; write an RFC 3339 UTC time such as \"2024-01-01T00:00:00Z\""),
                )
            })?;
            let since_epoch = at.duration_since(std::time::UNIX_EPOCH).map_err(|_| {
                source.error(
                    "determinism.instant",
                    Some(text.span()),
                    "must not be before 1970",
                )
            })?;
            Some((since_epoch, text.span()))
        }
        None => None,
    };
    let clock = match raw.clock.as_ref().map(|c| (c.get_ref().as_str(), c.span())) {
        None | Some(("real", _)) => {
            if let Some((_, span)) = instant {
                return Err(source.error(
                    "determinism.instant",
                    Some(span),
                    "an instant needs `clock = \"fixed\"`",
                ));
            }
            Clock::Real
        }
        Some(("fixed", _)) => Clock::Fixed(instant.map_or(Duration::ZERO, |(at, _)| at)),
        Some((other, span)) => {
            return Err(source.error(
                "determinism.clock",
                Some(span),
                format!("`{other}` is not a clock; use \"real\" or \"fixed\""),
            ));
        }
    };
    Ok(Determinism {
        clock,
        seed: raw.seed,
    })
}
