//! Policies derived from a named one for one tenant or one session (`palisade serve`): the
//! same grants and limits, with the scratch directory replaced by a directory that outlives
//! the call and the key-value namespace moved under a prefix. A derived policy keeps the
//! name and SHA-256 of the policy it came from, so receipts and audit records name the file
//! an operator wrote.

use super::{Determinism, Fs, Kv, Mount, MountMode, Policy};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

impl Policy {
    /// The policy's `description`, if it has one.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// This policy with the host directory `dir` mounted read-write at `guest` under `quota`
    /// and `max_files`, besides its own mounts (a session's folder under a policy with no
    /// `[fs.scratch]`: the session's files are its scripts' own).
    pub fn with_dir(
        &self,
        dir: impl Into<PathBuf>,
        guest: &str,
        quota: super::ByteSize,
        max_files: u64,
    ) -> Policy {
        let mut fs = self.fs.clone().unwrap_or(Fs {
            mount: Vec::new(),
            scratch: None,
        });
        fs.mount.push(Mount {
            host: dir.into(),
            guest: guest.to_owned(),
            mode: MountMode::Rw,
            quota: Some(quota),
            max_files: Some(max_files),
        });
        Policy {
            fs: Some(fs),
            ..self.clone()
        }
    }

    /// This policy with its per-call scratch directory replaced by the host directory `dir`,
    /// mounted read-write where the scratch would be, under the scratch's quota and file limit.
    /// A policy without `[fs.scratch]` is returned unchanged: the script gets no files.
    pub fn with_scratch_dir(&self, dir: impl Into<PathBuf>) -> Policy {
        let Some(fs) = &self.fs else {
            return self.clone();
        };
        let Some(scratch) = &fs.scratch else {
            return self.clone();
        };
        let mut mount = fs.mount.clone();
        mount.push(Mount {
            host: dir.into(),
            guest: scratch.guest.clone(),
            mode: MountMode::Rw,
            quota: Some(scratch.quota),
            max_files: Some(scratch.max_files),
        });
        Policy {
            fs: Some(Fs {
                mount,
                scratch: None,
            }),
            ..self.clone()
        }
    }

    /// This policy with its key-value namespace under `prefix` (`acme/` + `app`), so that two
    /// tenants whose policies name the same namespace never share a key. A policy without
    /// `[kv]` is returned unchanged.
    pub fn with_kv_namespace_prefix(&self, prefix: &str) -> Policy {
        let Some(kv) = &self.kv else {
            return self.clone();
        };
        Policy {
            kv: Some(Arc::new(Kv {
                namespace: format!("{prefix}{}", kv.namespace),
                ..(**kv).clone()
            })),
            ..self.clone()
        }
    }

    /// This policy with its deadline (`limits.timeout`) set to `timeout` (an action app's
    /// actions under the built-in default policy: the action runtime's 2 s).
    pub fn with_timeout(&self, timeout: std::time::Duration) -> Policy {
        let mut limits = self.limits;
        limits.timeout = super::HumanDuration(timeout);
        Policy {
            limits,
            ..self.clone()
        }
    }

    /// This policy with its `[determinism]` replaced by `determinism`: a per-call clock and
    /// seed (an app's action, whose clock and seed follow its session and sequence number).
    pub fn with_determinism(&self, determinism: Determinism) -> Policy {
        Policy {
            determinism,
            ..self.clone()
        }
    }

    /// This policy with `values` added to its `[config]` table; a key the policy sets keeps
    /// the policy's value.
    pub fn with_config_defaults(&self, values: &BTreeMap<String, String>) -> Policy {
        if values.is_empty() {
            return self.clone();
        }
        let mut config = values.clone();
        if let Some(own) = &self.config {
            config.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        Policy {
            config: Some(Arc::new(config)),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SANDBOX: &str = "name = \"box\"\n[fs.scratch]\nguest = \"/scratch\"\nquota = \"1MiB\"\n\
        max_files = 7\n[kv]\nnamespace = \"app\"\n[kv.buckets]\nstate = \"rw\"\n\
        [config]\nmode = \"policy\"\n";

    #[test]
    fn derived_policies_keep_name_and_hash() {
        let policy = Policy::from_toml(SANDBOX, None).unwrap();
        let derived = policy
            .with_scratch_dir("/tmp/session")
            .with_kv_namespace_prefix("acme/");
        assert_eq!(derived.name(), "box");
        assert_eq!(derived.sha256(), policy.sha256());
        let fs = derived.fs().unwrap();
        assert!(fs.scratch.is_none());
        assert_eq!(fs.mount.len(), 1);
        assert_eq!(fs.mount[0].guest, "/scratch");
        assert_eq!(fs.mount[0].host, PathBuf::from("/tmp/session"));
        assert_eq!(fs.mount[0].mode, MountMode::Rw);
        assert_eq!(fs.mount[0].max_files, Some(7));
        assert_eq!(fs.mount[0].quota.unwrap().0, 1 << 20);
        assert_eq!(derived.kv().unwrap().namespace, "acme/app");
        assert!(derived.grants_files());
    }

    #[test]
    fn policies_without_the_table_are_unchanged() {
        let policy = Policy::builtin_default();
        assert_eq!(policy.with_scratch_dir("/tmp/x"), policy);
        assert_eq!(policy.with_kv_namespace_prefix("acme/"), policy);
    }

    #[test]
    fn config_defaults_never_override_the_policy() {
        let policy = Policy::from_toml(SANDBOX, None).unwrap();
        let values = BTreeMap::from([
            ("mode".to_owned(), "session".to_owned()),
            ("extra".to_owned(), "1".to_owned()),
        ]);
        let derived = policy.with_config_defaults(&values);
        let config = derived.config().unwrap();
        assert_eq!(config["mode"], "policy");
        assert_eq!(config["extra"], "1");
    }
}
