//! Uses of `kv`, `fs`, `config` or the capability bridge's `host` under a policy that does not
//! grant them, and of timers or `eval` under an action app's policy that turns them off. The guest defines these globals under every policy, so that code written for a
//! richer policy fails as `fetch` does there: with a `PolicyDeniedError` naming the rule and the
//! policy change that would let the call through. The decision is [`decide`], a plain function;
//! `capability.ungranted` (caps/capability.rs) audits it.

use crate::Fix;
use crate::caps::gate::{Capability, Refusal};
use crate::policy::toml_key;

/// Names, paths and keys longer than this get no fix (a policy key that long helps no one)
/// and are cut in the label; the same bound as capability names (caps/capability.rs).
const MAX_NAME_BYTES: usize = 128;

/// The parts of the refusal of one use.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Ungranted {
    /// The audit record's kind of capability (`kv`, `fs`, `config`, `capability`).
    pub capability: &'static str,
    /// The audit record's target: `GLOBAL:NAME` (`kv:app`, `fs:/data/in.json`), or the
    /// capability's name for the bridge.
    pub target: String,
    /// What the script's `PolicyDeniedError` names as the capability.
    pub label: String,
    pub rule: String,
    pub reason: String,
    pub fix: Option<Fix>,
}

/// The refusal of a use of `global` (as the guest names it) with `name` (a bucket, a path, a
/// key or a capability's name, or empty), under a policy whose capability bridge, if any, is
/// the global `bridge`.
pub(crate) fn decide(global: &str, name: &str, bridge: Option<&str>) -> Refusal {
    let parts = decide_parts(global, name, bridge);
    let capability = match parts.capability {
        "kv" => Capability::Kv,
        "fs" => Capability::Fs,
        "config" => Capability::Config,
        "runtime" => Capability::Runtime,
        _ => Capability::Host,
    };
    let refusal = Refusal::new(
        capability,
        parts.target,
        parts.rule,
        parts.reason,
        parts.fix,
    );
    debug_assert_eq!(refusal.label(), parts.label);
    refusal
}

fn decide_parts(global: &str, name: &str, bridge: Option<&str>) -> Ungranted {
    let short = name.len() <= MAX_NAME_BYTES;
    let fix = |key: String, value: String| short.then_some(Fix { key, value });
    let target = format!("{global}:{}", crate::audit::truncate(name, MAX_NAME_BYTES));
    match global {
        "kv" => {
            let bucket = if name.is_empty() { "default" } else { name };
            Ungranted {
                capability: "kv",
                target,
                label: "kv".into(),
                rule: "kv".into(),
                reason: "the policy has no `[kv]` table".into(),
                fix: fix(
                    "kv".into(),
                    format!(
                        "{{ namespace = \"...\", buckets = {{ {} = \"rw\" }} }}",
                        toml_key(bucket)
                    ),
                ),
            }
        }
        "fs" => Ungranted {
            capability: "fs",
            target,
            label: "fs".into(),
            rule: "fs".into(),
            reason: "the policy mounts no directory (`[fs]`)".into(),
            fix: fix(
                "fs.scratch".into(),
                format!("{{ guest = \"{}\" }}", guest_directory(name)),
            ),
        },
        "timers" | "eval" => runtime_part(global, name),
        "config" => Ungranted {
            capability: "config",
            target,
            label: "config".into(),
            rule: "config".into(),
            reason: "the policy has no `[config]` table".into(),
            fix: if name.is_empty() {
                fix("config".into(), "{}".into())
            } else {
                fix(format!("config.{}", toml_key(name)), "\"...\"".into())
            },
        },
        _ => {
            let label = crate::audit::truncate(name, MAX_NAME_BYTES);
            match bridge {
                Some(bridge) => Ungranted {
                    capability: "capability",
                    target: label.clone(),
                    label,
                    rule: "capabilities.global".into(),
                    reason: format!(
                        "the capability bridge is `{bridge}` under this policy, not `{global}`"
                    ),
                    fix: Some(Fix {
                        key: "capabilities.global".into(),
                        value: format!("\"{global}\""),
                    }),
                },
                None => Ungranted {
                    capability: "capability",
                    target: label.clone(),
                    reason: format!("`{label}` is not in capabilities.allow"),
                    label,
                    rule: "capabilities.allow".into(),
                    fix: fix(
                        format!("capabilities.allow.{}", toml_key(name)),
                        "{}".into(),
                    ),
                },
            }
        }
    }
}

/// A function of the JavaScript runtime that an action app's policy turns off: `part` is
/// `timers` or `eval` (the `[apps]` key), `name` the function the script used.
fn runtime_part(part: &str, name: &str) -> Ungranted {
    let label = crate::audit::truncate(name, MAX_NAME_BYTES);
    let (key, what) = if part == "timers" {
        ("apps.timers", "timers")
    } else {
        ("apps.eval", "`eval` and the `Function` constructors")
    };
    Ungranted {
        capability: "runtime",
        target: label.clone(),
        label,
        rule: key.into(),
        reason: format!("the app's policy turns {what} off (`{key} = false`)"),
        fix: Some(Fix {
            key: key.into(),
            value: "true".into(),
        }),
    }
}

/// The scratch directory that would hold `path`: its first component when the path is
/// absolute and that component a plain name, else `/scratch`.
fn guest_directory(path: &str) -> String {
    let first = path
        .strip_prefix('/')
        .and_then(|rest| rest.split('/').next())
        .filter(|c| {
            !c.is_empty()
                && *c != "."
                && *c != ".."
                && c.chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch))
        });
    format!("/{}", first.unwrap_or("scratch"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix_text(u: &Ungranted) -> Option<String> {
        u.fix.as_ref().map(|f| format!("{} = {}", f.key, f.value))
    }

    #[test]
    #[allow(clippy::too_many_lines)] // One table of cases, a row per global and name.
    fn each_global_is_refused_with_the_grant_it_lacks() {
        // global, name, the policy's bridge; then the label, the rule and the fix.
        type Case<'a> = (
            &'a str,
            &'a str,
            Option<&'a str>,
            &'a str,
            &'a str,
            Option<&'a str>,
        );
        let cases: &[Case] = &[
            (
                "kv",
                "",
                None,
                "kv",
                "kv",
                Some("kv = { namespace = \"...\", buckets = { default = \"rw\" } }"),
            ),
            (
                "kv",
                "ref data",
                None,
                "kv",
                "kv",
                Some("kv = { namespace = \"...\", buckets = { \"ref data\" = \"rw\" } }"),
            ),
            (
                "fs",
                "/data/in.json",
                None,
                "fs",
                "fs",
                Some("fs.scratch = { guest = \"/data\" }"),
            ),
            (
                "fs",
                "notes.txt",
                None,
                "fs",
                "fs",
                Some("fs.scratch = { guest = \"/scratch\" }"),
            ),
            (
                "fs",
                "/../etc",
                None,
                "fs",
                "fs",
                Some("fs.scratch = { guest = \"/scratch\" }"),
            ),
            (
                "config",
                "region",
                None,
                "config",
                "config",
                Some("config.region = \"...\""),
            ),
            ("config", "", None, "config", "config", Some("config = {}")),
            (
                "host",
                "do",
                None,
                "do",
                "capabilities.allow",
                Some("capabilities.allow.do = {}"),
            ),
            (
                "host",
                "a.b",
                None,
                "a.b",
                "capabilities.allow",
                Some("capabilities.allow.\"a.b\" = {}"),
            ),
            (
                "host",
                "do",
                Some("maia"),
                "do",
                "capabilities.global",
                Some("capabilities.global = \"host\""),
            ),
            (
                "timers",
                "setTimeout",
                None,
                "setTimeout",
                "apps.timers",
                Some("apps.timers = true"),
            ),
            (
                "eval",
                "AsyncFunction",
                None,
                "AsyncFunction",
                "apps.eval",
                Some("apps.eval = true"),
            ),
        ];
        for &(global, name, bridge, label, rule, fix) in cases {
            let u = decide_parts(global, name, bridge);
            assert_eq!(u.label, label, "{global} {name}");
            assert_eq!(u.rule, rule, "{global} {name}");
            assert_eq!(fix_text(&u).as_deref(), fix, "{global} {name}");
        }
    }

    #[test]
    fn a_name_too_long_for_a_policy_key_gets_no_fix() {
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        for global in ["kv", "fs", "config", "host"] {
            let u = decide_parts(global, &format!("/{long}"), None);
            assert_eq!(u.fix, None, "{global}");
        }
        assert!(decide_parts("host", &long, None).label.len() < long.len() + 4);
    }
}
