//! Tenants and their keys (`--keys FILE`): each tenant is found by the SHA-256 of its bearer
//! key (the file never holds a key), and may use only the policies it lists (fail-closed: an
//! empty list allows nothing). Without a keys file the server has one tenant, `local`, that may
//! use every policy, and it is only started on a loopback address.

use super::errors::ApiError;
use super::store::{Store, blocking};
use crate::Error;
use axum::http::HeaderMap;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use serde::Deserialize;
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// One tenant: who may call, with which policies, how often and with how many sessions.
#[derive(Debug)]
pub struct Tenant {
    /// The tenant's name, in audit records and key-value namespaces.
    pub name: String,
    /// Policies this tenant may use; `None` means every policy (the keyless local tenant).
    pub policies: Option<Vec<String>>,
    /// The most live sessions this tenant may hold.
    pub max_sessions: Option<usize>,
    /// The catalog policy that bounds the policies this tenant sends with its calls
    /// (`inline_ceiling`); `None`: the server's `--inline-ceiling`.
    pub inline_ceiling: Option<String>,
    rate: Option<DefaultDirectRateLimiter>,
    /// The same rate as a pace, for replicas that share it through their store.
    pace: Option<Pace>,
}

/// A rate as GCRA sees it: one request every `interval`, with up to `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// The time one request uses up (the period over the count).
    pub interval: Duration,
    /// How many requests may come at once.
    pub burst: u32,
}

impl Tenant {
    /// Whether this is the one tenant of a server without a keys file.
    pub fn is_local(&self) -> bool {
        self.policies.is_none()
    }

    /// The tenant of a server without a keys file.
    pub fn local() -> Tenant {
        Tenant {
            name: "local".to_owned(),
            policies: None,
            max_sessions: None,
            inline_ceiling: None,
            rate: None,
            pace: None,
        }
    }

    /// Whether this tenant may use the policy `name`.
    pub fn may_use(&self, name: &str) -> bool {
        self.policies
            .as_ref()
            .is_none_or(|list| list.iter().any(|p| p == name))
    }

    /// Take one request from the tenant's rate, or say how many seconds until one is free.
    pub fn admit(&self) -> Result<(), u64> {
        match &self.rate {
            None => Ok(()),
            Some(limiter) => limiter.check().map_err(|not_until| {
                let wait = not_until.wait_time_from(governor::clock::Clock::now(
                    &governor::clock::DefaultClock::default(),
                ));
                wait.as_secs().max(1)
            }),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKeys {
    #[serde(default)]
    tenant: Vec<RawTenant>,
    /// The operator's key, for `/metrics`.
    operator: Option<RawOperator>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOperator {
    key_sha256: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTenant {
    name: String,
    key_sha256: String,
    policies: Vec<String>,
    rate: Option<String>,
    max_sessions: Option<usize>,
    inline_ceiling: Option<String>,
}

/// The tenants of a keys file, by the SHA-256 of their key.
#[derive(Debug, Default)]
pub struct Keys {
    by_hash: HashMap<String, Arc<Tenant>>,
    /// The SHA-256 of the operator's key (`[operator]`), which alone reads `/metrics`.
    operator: Option<String>,
}

fn check_hash(at: &str, hash: &str) -> Result<String, String> {
    let hash = hash.to_ascii_lowercase();
    if hash.len() != 64 || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!(
            "{at}.key_sha256: the SHA-256 of the key as 64 hex digits \
             (`printf %s KEY | sha256sum`), never the key itself"
        ));
    }
    Ok(hash)
}

/// The SHA-256 (hex) of the bearer key a request carries, or `unauthorized`.
fn bearer_hash(headers: &HeaderMap) -> Result<String, ApiError> {
    let unauthorized = |detail: &str| {
        ApiError::from(Error::Unauthorized {
            detail: detail.to_owned(),
        })
    };
    let Some(value) = headers.get(axum::http::header::AUTHORIZATION) else {
        return Err(unauthorized("no Authorization header"));
    };
    let key = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or_else(|| unauthorized("the Authorization header is not `Bearer KEY`"))?;
    Ok(crate::hex::sha256(key.as_bytes()))
}

/// `"100/s"`, `"20/min"`, `"1000/h"`: the local limiter's quota and the shared pace.
fn parse_rate(text: &str) -> Option<(Quota, Pace)> {
    let (count, per) = text.split_once('/')?;
    let count = NonZeroU32::new(count.trim().parse().ok()?)?;
    let period = match per.trim() {
        "s" => Duration::from_secs(1),
        "min" => Duration::from_secs(60),
        "h" => Duration::from_secs(3600),
        _ => return None,
    };
    let interval = period / count.get();
    let pace = Pace {
        interval,
        burst: count.get(),
    };
    Some((Quota::with_period(interval)?.allow_burst(count), pace))
}

impl Keys {
    /// Read and check a keys file.
    pub fn from_file(path: &Path) -> Result<Keys, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the keys file {}: {e}", path.display()))?;
        Keys::from_toml(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Check a keys file's text.
    pub fn from_toml(text: &str) -> Result<Keys, String> {
        let raw: RawKeys = toml::from_str(text).map_err(|e| e.message().to_owned())?;
        let mut by_hash = HashMap::new();
        let mut names = std::collections::HashSet::new();
        for (i, t) in raw.tenant.into_iter().enumerate() {
            let at = format!("tenant[{i}]");
            let name_ok = !t.name.is_empty()
                && t.name.len() <= 64
                && t.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !name_ok {
                return Err(format!(
                    "{at}.name: 1 to 64 letters, digits, `-` or `_` (it becomes part of \
                     key-value namespaces)"
                ));
            }
            if !names.insert(t.name.clone()) {
                return Err(format!("{at}.name: `{}` is listed twice", t.name));
            }
            let hash = check_hash(&at, &t.key_sha256)?;
            let (rate, pace) = match &t.rate {
                None => (None, None),
                Some(text) => {
                    let (quota, pace) = parse_rate(text).ok_or_else(|| {
                        format!("{at}.rate: `{text}` is not a rate such as \"100/s\", \"20/min\"")
                    })?;
                    (Some(RateLimiter::direct(quota)), Some(pace))
                }
            };
            let tenant = Tenant {
                name: t.name,
                policies: Some(t.policies),
                max_sessions: t.max_sessions,
                inline_ceiling: t.inline_ceiling,
                rate,
                pace,
            };
            if by_hash.insert(hash, Arc::new(tenant)).is_some() {
                return Err(format!("{at}.key_sha256: two tenants share one key"));
            }
        }
        let operator = match raw.operator {
            Some(o) => {
                let hash = check_hash("operator", &o.key_sha256)?;
                if by_hash.contains_key(&hash) {
                    return Err("operator.key_sha256: the operator's key is a tenant's".into());
                }
                Some(hash)
            }
            None => None,
        };
        Ok(Keys { by_hash, operator })
    }

    /// Each tenant's `inline_ceiling`, with where it is named.
    pub fn ceilings(&self) -> impl Iterator<Item = (String, &str)> {
        self.by_hash.values().filter_map(|t| {
            let ceiling = t.inline_ceiling.as_deref()?;
            Some((format!("the keys file's tenant `{}`", t.name), ceiling))
        })
    }

    /// The tenant whose key the request carries.
    pub fn authenticate(&self, headers: &HeaderMap) -> Result<Arc<Tenant>, ApiError> {
        let hash = bearer_hash(headers)?;
        self.by_hash.get(&hash).cloned().ok_or_else(|| {
            Error::Unauthorized {
                detail: "unknown key".to_owned(),
            }
            .into()
        })
    }
}

/// Who may call: the keys file's tenants, or the one local tenant of a keyless server.
pub struct Tenants {
    keys: Option<Keys>,
    local: Arc<Tenant>,
    /// A store that replicas share: the tenants' rates are taken there, for all of them.
    shared: Option<Store>,
}

impl Tenants {
    /// The tenants of `keys`; without keys, the local tenant only. Their rates are taken in
    /// `store` when replicas share it, else in this server's memory.
    pub fn new(keys: Option<Keys>, store: &Store) -> Tenants {
        Tenants {
            keys,
            local: Arc::new(Tenant::local()),
            shared: store.shared().then(|| store.clone()),
        }
    }

    /// Whether the request may read the operator's pages (`/metrics`): every request on a
    /// keyless (loopback) server; with a keys file, only the `[operator]` key's, since metrics
    /// name every tenant's policies and outcomes.
    pub fn operator(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(keys) = &self.keys else {
            return Ok(());
        };
        let hash = bearer_hash(headers)?;
        if keys.operator.as_deref() == Some(hash.as_str()) {
            return Ok(());
        }
        Err(Error::Unauthorized {
            detail: "/metrics takes the operator's key ([operator] in the keys file)".to_owned(),
        }
        .into())
    }

    /// The caller's tenant, after its rate.
    pub async fn admit(&self, headers: &HeaderMap) -> Result<Arc<Tenant>, ApiError> {
        let tenant = match &self.keys {
            Some(keys) => keys.authenticate(headers)?,
            None => self.local.clone(),
        };
        let taken = match (&self.shared, tenant.pace) {
            (Some(store), Some(pace)) => {
                let (store, name) = (store.clone(), format!("tenant\n{}", tenant.name));
                blocking(move || store.backend().take_rate(&name, pace.interval, pace.burst))
                    .await?
                    .map_or(Ok(()), |wait| Err(wait.as_secs().max(1)))
            }
            _ => tenant.admit(),
        };
        taken.map_err(|retry| {
            ApiError::capacity(
                axum::http::StatusCode::TOO_MANY_REQUESTS,
                0,
                retry,
                "your key's rate is spent; retry after Retry-After seconds",
            )
        })?;
        Ok(tenant)
    }
}

/// The calling tenant, as a handler's argument: the key checked and the tenant's rate taken
/// from the request's head, before any of its body is read.
pub struct Authed(pub Arc<Tenant>);

impl<S> axum::extract::FromRequestParts<S> for Authed
where
    S: Send + Sync,
    Arc<Tenants>: axum::extract::FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        let tenants = <Arc<Tenants> as axum::extract::FromRef<S>>::from_ref(state);
        tenants.admit(&parts.headers).await.map(Authed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(key: &str) -> String {
        crate::hex::sha256(key.as_bytes())
    }

    #[test]
    fn keys_are_found_by_hash_and_lists_fail_closed() {
        let text = format!(
            "[[tenant]]\nname = \"acme\"\nkey_sha256 = \"{}\"\npolicies = [\"default\"]\n\
             [[tenant]]\nname = \"none\"\nkey_sha256 = \"{}\"\npolicies = []\nrate = \"2/s\"\n",
            hash("k1"),
            hash("k2")
        );
        let keys = Keys::from_toml(&text).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("authorization", "Bearer k1".parse().unwrap());
        let acme = keys.authenticate(&headers).unwrap();
        assert_eq!(acme.name, "acme");
        assert!(acme.may_use("default") && !acme.may_use("sandbox"));
        headers.insert("authorization", "Bearer k2".parse().unwrap());
        let none = keys.authenticate(&headers).unwrap();
        assert!(!none.may_use("default"));
        assert!(none.admit().is_ok() && none.admit().is_ok());
        assert!(none.admit().is_err(), "a third request within the second");
        headers.insert("authorization", "Bearer nope".parse().unwrap());
        assert_eq!(
            keys.authenticate(&headers).unwrap_err().code(),
            "unauthorized"
        );
        assert_eq!(
            keys.authenticate(&HeaderMap::new()).unwrap_err().code(),
            "unauthorized"
        );
    }

    #[test]
    fn bad_keys_files_are_refused() {
        assert!(
            Keys::from_toml("[[tenant]]\nname = \"a\"\nkey_sha256 = \"abc\"\npolicies = []\n")
                .unwrap_err()
                .contains("key_sha256")
        );
        assert!(Keys::from_toml("[[tenant]]\nname = \"a\"\n").is_err());
        let h = hash("k");
        let twice = format!(
            "[[tenant]]\nname = \"a\"\nkey_sha256 = \"{h}\"\npolicies = []\n\
             [[tenant]]\nname = \"b\"\nkey_sha256 = \"{h}\"\npolicies = []\n"
        );
        assert!(Keys::from_toml(&twice).unwrap_err().contains("share"));
    }
}
