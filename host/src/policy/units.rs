//! Human units in policy files: sizes such as `"128MiB"` and durations such as `"5s"`.
//!
//! A bare number is refused with a hint: `memory = 64` could mean bytes or mebibytes, and a
//! policy must not leave that to a guess.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// A number of bytes, written with a unit: `"512B"`, `"64KiB"`, `"128MiB"`, `"1GiB"`
/// (binary) or `"1KB"`, `"1MB"`, `"1GB"` (decimal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

/// A span of time, written with a unit: `"250ms"`, `"5s"`, `"2m"`, `"1h"`, `"500us"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HumanDuration(pub Duration);

const SIZE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
];

const TIME_UNITS: &[(&str, u64)] = &[
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Split `"128MiB"` into `128` and `"MiB"`; `_` separators are allowed in the number.
fn split_number(text: &str) -> Option<(u64, &str)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(text.len());
    let digits: String = text[..end].chars().filter(|c| *c != '_').collect();
    let number = digits.parse().ok()?;
    Some((number, text[end..].trim()))
}

fn parse_with(text: &str, units: &[(&str, u64)], what: &str, example: &str) -> Result<u64, String> {
    let Some((number, unit)) = split_number(text) else {
        return Err(format!(
            "`{text}` is not a {what}; write a whole number and a unit, for example \"{example}\""
        ));
    };
    let names: Vec<&str> = units.iter().map(|(n, _)| *n).collect();
    if unit.is_empty() {
        return Err(format!(
            "`{text}` has no unit; write for example \"{example}\" (units: {})",
            names.join(", ")
        ));
    }
    let Some((_, scale)) = units.iter().find(|(name, _)| *name == unit) else {
        return Err(format!(
            "unknown unit `{unit}` in `{text}` (units: {})",
            names.join(", ")
        ));
    };
    number
        .checked_mul(*scale)
        .ok_or_else(|| format!("`{text}` is too large"))
}

impl std::str::FromStr for ByteSize {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_with(text, SIZE_UNITS, "size", "64MiB").map(ByteSize)
    }
}

impl std::str::FromStr for HumanDuration {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_with(text, TIME_UNITS, "duration", "5s")
            .map(|ns| HumanDuration(Duration::from_nanos(ns)))
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0;
        for (unit, scale) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
            if bytes >= scale && bytes.is_multiple_of(scale) {
                return write!(f, "{}{unit}", bytes / scale);
            }
        }
        write!(f, "{bytes}B")
    }
}

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0.as_nanos();
        for (unit, scale) in [
            ("h", 3_600_000_000_000u128),
            ("m", 60_000_000_000),
            ("s", 1_000_000_000),
            ("ms", 1_000_000),
        ] {
            if ns >= scale && ns.is_multiple_of(scale) {
                return write!(f, "{}{unit}", ns / scale);
            }
        }
        write!(f, "{}us", ns / 1_000)
    }
}

/// Deserialize from a string with a unit; integers get an explanatory error.
struct UnitVisitor<T>(std::marker::PhantomData<T>, &'static str);

impl<T: std::str::FromStr<Err = String>> Visitor<'_> for UnitVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a string with a unit, for example \"{}\"", self.1)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Err(E::custom(format!(
            "a bare number ({v}) has no unit; write a string such as \"{}\"",
            self.1
        )))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_i64(v as i64)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Err(E::custom(format!(
            "a bare number ({v}) has no unit; write a string such as \"{}\"",
            self.1
        )))
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor(std::marker::PhantomData, "64MiB"))
    }
}

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor(std::marker::PhantomData, "5s"))
    }
}

/// A JSON Schema pattern for a whole number (with `_` separators) and one of `units`, as
/// `parse_with` reads it.
fn unit_pattern(units: &[(&str, u64)]) -> String {
    let names: Vec<&str> = units.iter().map(|(n, _)| *n).collect();
    format!(r"^\s*[0-9][0-9_]*\s*({})\s*$", names.join("|"))
}

impl schemars::JsonSchema for ByteSize {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ByteSize".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A size with a unit: B, KiB, MiB, GiB (binary) or KB, MB, GB (decimal).",
            "pattern": unit_pattern(SIZE_UNITS),
            "examples": ["64MiB", "512KiB"],
        })
    }
}

impl schemars::JsonSchema for HumanDuration {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A span of time with a unit: us, ms, s, m or h.",
            "pattern": unit_pattern(TIME_UNITS),
            "examples": ["250ms", "5s"],
        })
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Serialize for HumanDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_and_decimal_units() {
        assert_eq!("128MiB".parse::<ByteSize>(), Ok(ByteSize(128 << 20)));
        assert_eq!("64KiB".parse::<ByteSize>(), Ok(ByteSize(64 << 10)));
        assert_eq!("1GiB".parse::<ByteSize>(), Ok(ByteSize(1 << 30)));
        assert_eq!("512B".parse::<ByteSize>(), Ok(ByteSize(512)));
        assert_eq!("2MB".parse::<ByteSize>(), Ok(ByteSize(2_000_000)));
        assert_eq!("1_024 KiB".parse::<ByteSize>(), Ok(ByteSize(1 << 20)));
    }

    #[test]
    fn sizes_without_or_with_unknown_units_are_refused() {
        assert!("64".parse::<ByteSize>().unwrap_err().contains("no unit"));
        assert!(
            "64mb"
                .parse::<ByteSize>()
                .unwrap_err()
                .contains("unknown unit `mb`")
        );
        assert!(
            "MiB"
                .parse::<ByteSize>()
                .unwrap_err()
                .contains("not a size")
        );
        assert!(
            "99999999999GiB"
                .parse::<ByteSize>()
                .unwrap_err()
                .contains("too large")
        );
    }

    #[test]
    fn durations_parse() {
        assert_eq!(
            "5s".parse::<HumanDuration>(),
            Ok(HumanDuration(Duration::from_secs(5)))
        );
        assert_eq!(
            "250ms".parse::<HumanDuration>(),
            Ok(HumanDuration(Duration::from_millis(250)))
        );
        assert_eq!(
            "2m".parse::<HumanDuration>(),
            Ok(HumanDuration(Duration::from_secs(120)))
        );
        assert_eq!(
            "500us".parse::<HumanDuration>(),
            Ok(HumanDuration(Duration::from_micros(500)))
        );
        assert!(
            "5".parse::<HumanDuration>()
                .unwrap_err()
                .contains("no unit")
        );
    }

    #[test]
    fn display_round_trips() {
        for text in ["128MiB", "64KiB", "1GiB", "513B"] {
            assert_eq!(text.parse::<ByteSize>().unwrap().to_string(), text);
        }
        for text in ["5s", "250ms", "2m", "1h", "500us"] {
            assert_eq!(text.parse::<HumanDuration>().unwrap().to_string(), text);
        }
    }

    #[test]
    fn bare_numbers_in_toml_get_a_hint() {
        #[derive(Deserialize, Debug)]
        struct T {
            #[allow(dead_code)]
            memory: ByteSize,
        }
        let err = toml::from_str::<T>("memory = 64").unwrap_err().to_string();
        assert!(err.contains("a bare number (64) has no unit"), "{err}");
    }
}
