//! The policies the server offers: every `*.toml` in the policies folder, or the built-in
//! default. The folder is read again when it changes (`notify`): a changed file applies to new
//! calls, an invalid one keeps its last good version (and is reported by `/readyz` and the
//! `palisade_policy_reload_errors_total` metric), a removed one stops new calls.

use super::auth::Tenant;
use super::errors::ApiError;
use super::inline::{Ceiling, InlinePolicies, PolicyRef};
use super::metrics::Metrics;
use crate::{Error, Policy};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// A policy file the last reload could not use.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// The file.
    pub file: String,
    /// Why it was not loaded; its last good version, if any, is still served.
    pub error: String,
}

/// The policies on offer, by name.
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    /// Each policy, by its name.
    pub policies: BTreeMap<String, Arc<Policy>>,
    /// Each policy's file, by name (to keep the last good version of an invalid file).
    files: BTreeMap<PathBuf, String>,
    /// Files that could not be loaded at the last reload.
    pub problems: Vec<Problem>,
}

/// Largest number of policy files read from the folder.
const MAX_POLICY_FILES: usize = 1000;

impl Catalog {
    /// Only the built-in default.
    pub fn builtin() -> Catalog {
        let policy = Policy::builtin_default();
        Catalog {
            policies: BTreeMap::from([(policy.name().to_owned(), Arc::new(policy))]),
            ..Catalog::default()
        }
    }

    /// Read `dir`, keeping the last good version (from `previous`) of each file that no longer
    /// loads.
    pub fn load(dir: &Path, previous: &Catalog) -> Catalog {
        let mut next = Catalog::default();
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                next.problems.push(Problem {
                    file: dir.display().to_string(),
                    error: format!("cannot read the policies folder: {e}"),
                });
                return next;
            }
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
            .take(MAX_POLICY_FILES)
            .collect();
        paths.sort();
        for path in paths {
            match Policy::from_file(&path) {
                Ok(policy) => {
                    let name = policy.name().to_owned();
                    if next.policies.contains_key(&name) {
                        next.problems.push(Problem {
                            file: path.display().to_string(),
                            error: format!("another file already defines the policy `{name}`"),
                        });
                        continue;
                    }
                    next.files.insert(path, name.clone());
                    next.policies.insert(name, Arc::new(policy));
                }
                Err(error) => {
                    let kept = previous.files.get(&path).and_then(|name| {
                        let old = previous.policies.get(name)?;
                        (!next.policies.contains_key(name)).then(|| (name.clone(), old.clone()))
                    });
                    let note = match &kept {
                        Some((name, _)) => format!(" (serving its last good version of `{name}`)"),
                        None => String::new(),
                    };
                    next.problems.push(Problem {
                        file: path.display().to_string(),
                        error: format!("{error}{note}"),
                    });
                    if let Some((name, policy)) = kept {
                        next.files.insert(path, name.clone());
                        next.policies.insert(name, policy);
                    }
                }
            }
        }
        next
    }

    /// The names, for `policy_not_found`'s note.
    pub fn names_for(&self, may_use: impl Fn(&str) -> bool) -> Vec<String> {
        self.policies
            .keys()
            .filter(|n| may_use(n))
            .cloned()
            .collect()
    }
}

/// The policies on offer now, replaced whole on each reload of the folder.
pub struct Policies {
    dir: Option<PathBuf>,
    /// The policies sent with calls, admitted within their tenants' ceilings.
    inline: InlinePolicies,
    current: RwLock<Arc<Catalog>>,
    metrics: Arc<Metrics>,
}

impl Policies {
    /// The folder `dir`'s policies, or the built-in default without one.
    pub fn open(dir: Option<PathBuf>, metrics: Arc<Metrics>) -> Policies {
        let catalog = match &dir {
            Some(dir) => Catalog::load(dir, &Catalog::default()),
            None => Catalog::builtin(),
        };
        metrics.policies_invalid.set(catalog.problems.len() as i64);
        metrics.reload_errors.inc_by(catalog.problems.len() as u64);
        Policies {
            dir,
            inline: InlinePolicies::new(None),
            current: RwLock::new(Arc::new(catalog)),
            metrics,
        }
    }

    /// The folder, when there is one.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The current catalog.
    pub fn current(&self) -> Arc<Catalog> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The policy `name`, if `tenant` may use it; else `policy_not_found` with the catalog.
    pub fn policy_for(&self, tenant: &Tenant, name: &str) -> Result<Arc<Policy>, ApiError> {
        let catalog = self.current();
        match catalog.policies.get(name) {
            Some(policy) if tenant.may_use(name) => Ok(policy.clone()),
            _ => Err(Error::PolicyNotFound {
                name: name.to_owned(),
                catalog: catalog.names_for(|n| tenant.may_use(n)),
            }
            .into()),
        }
    }

    /// Admit policies sent with calls within `ceiling` (`--inline-ceiling`) for tenants whose
    /// keys file entry names no ceiling of its own.
    pub fn with_inline_ceiling(mut self, ceiling: Option<String>) -> Policies {
        self.inline = InlinePolicies::new(ceiling);
        self
    }

    /// The policy a request gives, for `tenant`: a catalog policy it may use, or a policy sent
    /// with the call, admitted within the tenant's ceiling (`policy_denied` past it).
    pub fn resolve(&self, tenant: &Tenant, policy: PolicyRef<'_>) -> Result<Arc<Policy>, ApiError> {
        let inline = match policy {
            PolicyRef::Named(name) => return self.policy_for(tenant, name),
            PolicyRef::Inline(inline) => inline,
        };
        let name = match self.inline.ceiling(tenant)? {
            Ceiling::Builtin(builtin) => return self.inline.admit(inline, &builtin),
            Ceiling::Named(name) => name,
        };
        let ceiling = self.current().policies.get(name).cloned().ok_or_else(|| {
            ApiError::from(Error::PolicyDenied {
                capability: "inline policy".into(),
                rule: "inline_ceiling".into(),
                reason: format!("the ceiling `{name}` set for your key is not in the catalog"),
                fix: None,
            })
            .note("name a catalog policy instead, or ask the operator to restore the ceiling")
        })?;
        self.inline.admit(inline, &ceiling)
    }

    /// Read the policies folder again (after a change).
    pub fn reload(&self) {
        let Some(dir) = &self.dir else {
            return;
        };
        let previous = self.current();
        let next = Catalog::load(dir, &previous);
        for problem in &next.problems {
            tracing::warn!(file = %problem.file, "policy not reloaded: {}", problem.error);
        }
        self.metrics.reloads.inc();
        self.metrics
            .reload_errors
            .inc_by(next.problems.len() as u64);
        self.metrics
            .policies_invalid
            .set(next.problems.len() as i64);
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_file_keeps_its_last_good_version_and_a_removed_one_goes() {
        let dir = std::env::temp_dir().join(format!("palisade-catalog-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.toml"), "[limits]\nfuel = 1000000\n").unwrap();
        std::fs::write(dir.join("b.toml"), "").unwrap();
        let first = Catalog::load(&dir, &Catalog::default());
        assert_eq!(first.names_for(|_| true), ["a", "b"]);
        assert!(first.problems.is_empty());
        std::fs::write(dir.join("a.toml"), "[limits]\nfuel = \"lots\"\n").unwrap();
        std::fs::remove_file(dir.join("b.toml")).unwrap();
        let second = Catalog::load(&dir, &first);
        assert_eq!(second.names_for(|_| true), ["a"]);
        assert_eq!(second.policies["a"].limits().fuel, 1_000_000);
        assert_eq!(second.problems.len(), 1);
        assert!(second.problems[0].error.contains("last good version"));
        let third = Catalog::load(&dir, &Catalog::default());
        assert!(third.policies.is_empty(), "no good version to keep");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
