//! The key-value gate's decisions, as plain functions of the policy's `[kv]` table: the bucket
//! is granted, writes go to `rw` buckets, keys and values fit, the namespace has room. Each
//! refusal is kept under the target `kv:BUCKET`, where the guest's `PolicyDeniedError` finds it.

use crate::Fix;
use crate::caps::gate::{Capability, Refusal};
use crate::policy::{BucketMode, ByteSize, Kv};

/// Fixes for keys and values go up to the largest sizes a policy takes.
const MAX_KEY_FIX: usize = crate::policy::KV_KEY_MAX as usize;
const MAX_VALUE_FIX: usize = crate::policy::KV_VALUE_MAX as usize;

/// Why a key cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum KeyCheck {
    /// The empty key: no refusal of the policy, an error of the store's.
    Empty,
    /// Past the policy's `kv.max_key`.
    Refused(Refusal),
}

/// The mode `policy` grants the bucket `identifier`, or the refusal.
pub(crate) fn open_bucket(policy: Option<&Kv>, identifier: &str) -> Result<BucketMode, Refusal> {
    let Some(policy) = policy else {
        let reason = "the policy has no [kv] table, so the script has no key-value store";
        let fix = fix(&format!("kv.buckets.{identifier}"), "\"rw\"");
        return Err(refusal(identifier, "kv", reason.into(), Some(fix)));
    };
    match policy.buckets.get(identifier) {
        Some(mode) => Ok(*mode),
        None => {
            let shown: String = identifier.chars().take(64).collect();
            let reason = format!("the bucket `{shown}` is not in kv.buckets");
            let fix = fix(&format!("kv.buckets.{shown}"), "\"ro\"");
            Err(refusal(&shown, "kv.buckets", reason, Some(fix)))
        }
    }
}

/// Whether `key` may name an entry of `bucket`.
pub(crate) fn check_key(policy: &Kv, bucket: &str, key: &str) -> Result<(), KeyCheck> {
    if key.is_empty() {
        return Err(KeyCheck::Empty);
    }
    if key.len() as u64 <= policy.max_key.0 {
        return Ok(());
    }
    let fix = (key.len() <= MAX_KEY_FIX).then(|| {
        let size = ByteSize((key.len() as u64).next_power_of_two());
        fix("kv.max_key", &format!("\"{size}\""))
    });
    let reason = format!(
        "the key is {} bytes, over the {} limit",
        key.len(),
        policy.max_key
    );
    Err(KeyCheck::Refused(refusal(
        bucket,
        "kv.max_key",
        reason,
        fix,
    )))
}

/// Whether the script may write to `bucket`, opened in `mode`.
pub(crate) fn check_write(bucket: &str, mode: BucketMode) -> Result<(), Refusal> {
    if mode != BucketMode::Ro {
        return Ok(());
    }
    let table = format!("kv.buckets.{bucket}");
    let reason = format!("the bucket `{bucket}` is read-only");
    let fix = fix(&table, "\"rw\"");
    Err(refusal(bucket, &table, reason, Some(fix)))
}

/// Whether a value of `len` bytes fits the policy's `kv.max_value`.
pub(crate) fn check_value(policy: &Kv, bucket: &str, len: usize) -> Result<(), Refusal> {
    if len as u64 <= policy.max_value.0 {
        return Ok(());
    }
    let fix = (len <= MAX_VALUE_FIX).then(|| {
        let size = ByteSize((len as u64).next_power_of_two());
        fix("kv.max_value", &format!("\"{size}\""))
    });
    let reason = format!(
        "the value is {len} bytes, over the {} limit",
        policy.max_value
    );
    Err(refusal(bucket, "kv.max_value", reason, fix))
}

/// The refusal of a new key in a namespace that already holds `limit` keys.
pub(crate) fn too_many_keys(bucket: &str, limit: u64) -> Refusal {
    let reason = format!("the namespace already holds {limit} keys");
    let fix = fix("kv.max_keys", &limit.saturating_mul(2).to_string());
    refusal(bucket, "kv.max_keys", reason, Some(fix))
}

fn refusal(bucket: &str, rule: &str, reason: String, fix: Option<Fix>) -> Refusal {
    Refusal::new(Capability::Kv, format!("kv:{bucket}"), rule, reason, fix)
}

fn fix(key: &str, value: &str) -> Fix {
    Fix {
        key: key.to_owned(),
        value: value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policy;

    fn kv() -> std::sync::Arc<Kv> {
        let policy = Policy::from_toml(
            r#"
            [kv]
            namespace = "test"
            max_key = "8B"
            max_value = "16B"
            [kv.buckets]
            app = "rw"
            ref = "ro"
            "#,
            None,
        )
        .unwrap();
        policy.kv().unwrap().clone()
    }

    /// A refusal as `target rule fix`.
    fn shown(r: Refusal) -> String {
        assert_eq!(r.capability, Capability::Kv);
        let fix = r
            .fix
            .map_or("-".into(), |f| format!("{} = {}", f.key, f.value));
        format!("{} {} {fix}", r.target, r.rule)
    }

    #[test]
    fn buckets_open_only_when_granted() {
        let kv = kv();
        let cases = [
            (Some(&*kv), "app", Ok(BucketMode::Rw)),
            (Some(&*kv), "ref", Ok(BucketMode::Ro)),
            (
                Some(&*kv),
                "other",
                Err("kv:other kv.buckets kv.buckets.other = \"ro\""),
            ),
            (None, "app", Err("kv:app kv kv.buckets.app = \"rw\"")),
        ];
        for (policy, name, expected) in cases {
            let got = open_bucket(policy, name).map_err(shown);
            assert_eq!(got, expected.map_err(str::to_owned), "{name}");
        }
        let long = "b".repeat(100);
        let refused = shown(open_bucket(Some(&kv), &long).unwrap_err());
        assert!(
            refused.starts_with(&format!("kv:{} ", "b".repeat(64))),
            "{refused}"
        );
    }

    #[test]
    fn keys_values_and_writes_are_checked_against_the_table() {
        let kv = kv();
        assert_eq!(check_key(&kv, "app", ""), Err(KeyCheck::Empty));
        assert_eq!(check_key(&kv, "app", "8 bytes!"), Ok(()));
        let Err(KeyCheck::Refused(r)) = check_key(&kv, "app", "nine bytes") else {
            panic!("a 10-byte key passed an 8-byte limit");
        };
        assert_eq!(shown(r), "kv:app kv.max_key kv.max_key = \"16B\"");
        let Err(KeyCheck::Refused(r)) = check_key(&kv, "app", &"k".repeat(MAX_KEY_FIX + 1)) else {
            panic!("a huge key passed");
        };
        assert_eq!(shown(r), "kv:app kv.max_key -", "no policy takes it");

        let cases = [
            (16, None),
            (17, Some("kv:app kv.max_value kv.max_value = \"32B\"")),
            (MAX_VALUE_FIX + 1, Some("kv:app kv.max_value -")),
        ];
        for (len, expected) in cases {
            let got = check_value(&kv, "app", len).err().map(shown);
            assert_eq!(got.as_deref(), expected, "{len}");
        }

        assert_eq!(check_write("app", BucketMode::Rw), Ok(()));
        let refused = shown(check_write("ref", BucketMode::Ro).unwrap_err());
        assert_eq!(refused, "kv:ref kv.buckets.ref kv.buckets.ref = \"rw\"");
        assert_eq!(
            shown(too_many_keys("app", 1000)),
            "kv:app kv.max_keys kv.max_keys = 2000"
        );
    }
}
