//! Policies sent with a call (docs/server.md#inline-policies): a request's `policy` names a
//! catalog policy (a string) or is one (a JSON object); `policy_toml` is one as TOML text.
//! A policy sent with a call is admitted only within its tenant's ceiling (the keys file's
//! `inline_ceiling`, else `palisade serve --inline-ceiling`; neither: the built-in default
//! policy on a server without a keys file, and none admitted for a key of a keys file), by
//! [`Policy::within`]. Resolved and admitted policies are kept by the SHA-256 of their text
//! and their ceiling's, so a repeated one costs no parse; receipts and audit records name it
//! by the SHA-256 of its text.

use super::auth::Tenant;
use super::errors::ApiError;
use crate::policy::PastCeiling;
use crate::{Error, Policy};
use lru::LruCache;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

/// The largest policy a call may send: it is parsed (once) and kept in memory.
pub const MAX_INLINE_BYTES: usize = 64 << 10;

/// How many admitted policies are kept: at most this many times [`MAX_INLINE_BYTES`] of text
/// and what it resolves to stay in memory.
const CACHED: usize = 256;

/// A policy sent with a call, as it was sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InlineText {
    /// The text: a JSON object's, or TOML.
    pub text: String,
    /// Whether `text` is JSON (else TOML).
    pub json: bool,
}

/// The policy a request gives: a catalog policy's name, or a policy sent with it.
#[derive(Debug, Clone, Copy)]
pub enum PolicyRef<'a> {
    /// A catalog policy.
    Named(&'a str),
    /// A policy sent with the call.
    Inline(&'a InlineText),
}

/// The `policy` of a request, as the OpenAPI document describes it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum PolicyField {
    /// A catalog policy's name (`GET /v1/policies`).
    Name(String),
    /// A policy as a JSON object, admitted within the ceiling set for the caller's key.
    Inline(std::collections::BTreeMap<String, Value>),
}

/// The policy fields of a request: `policy` (a name or a JSON object) and `policy_toml`.
pub fn from_fields(
    policy: Option<&RawValue>,
    toml: Option<&str>,
) -> Result<Option<PolicyGiven>, ApiError> {
    let both = || {
        ApiError::invalid(
            "give a policy as `policy` (a name or a JSON object) or as `policy_toml`, not both",
        )
        .fix(json!({"policy_toml": null}))
    };
    let given = match (policy, toml) {
        (Some(_), Some(_)) => return Err(both()),
        (None, None) => return Ok(None),
        (None, Some(text)) => PolicyGiven::Inline(InlineText {
            text: text.to_owned(),
            json: false,
        }),
        (Some(raw), None) => match raw.get().trim_start().as_bytes().first() {
            Some(b'"') => PolicyGiven::Named(
                serde_json::from_str(raw.get())
                    .map_err(|e| ApiError::invalid(format!("policy: {e}")))?,
            ),
            Some(b'{') => PolicyGiven::Inline(InlineText {
                text: raw.get().to_owned(),
                json: true,
            }),
            _ => {
                return Err(ApiError::invalid(
                    "policy: a catalog policy's name (a string) or a policy (a JSON object)",
                )
                .fix(json!({"policy": "default"})));
            }
        },
    };
    if let PolicyGiven::Inline(inline) = &given
        && inline.text.len() > MAX_INLINE_BYTES
    {
        return Err(ApiError::invalid(format!(
            "the policy sent has {} bytes, over the {MAX_INLINE_BYTES} a call may send",
            inline.text.len()
        ))
        .note("put a policy this large in the policies folder and name it"));
    }
    Ok(Some(given))
}

/// A request's policy, owned.
#[derive(Debug, Clone)]
pub enum PolicyGiven {
    /// A catalog policy's name.
    Named(String),
    /// A policy sent with the call.
    Inline(InlineText),
}

impl PolicyGiven {
    /// Borrowed.
    pub fn as_ref(&self) -> PolicyRef<'_> {
        match self {
            PolicyGiven::Named(name) => PolicyRef::Named(name),
            PolicyGiven::Inline(inline) => PolicyRef::Inline(inline),
        }
    }
}

/// What a cached policy is kept by: its text's format and SHA-256, and its ceiling's SHA-256.
type Key = (bool, String, String);

/// The policies sent with calls and admitted, most recently used first.
pub struct InlinePolicies {
    /// `--inline-ceiling`: the ceiling of tenants whose keys file entry names none.
    default_ceiling: Option<String>,
    /// The built-in default policy: the ceiling of a server without a keys file and without
    /// `--inline-ceiling`.
    builtin: Arc<Policy>,
    admitted: Mutex<LruCache<Key, Arc<Policy>>>,
}

/// Where a tenant's ceiling comes from.
pub enum Ceiling<'a> {
    /// A catalog policy (the keys file's `inline_ceiling`, or `--inline-ceiling`).
    Named(&'a str),
    /// The built-in default policy (a server without a keys file, nor `--inline-ceiling`).
    Builtin(Arc<Policy>),
}

impl InlinePolicies {
    /// An empty cache; `default_ceiling` is `--inline-ceiling`.
    pub fn new(default_ceiling: Option<String>) -> InlinePolicies {
        InlinePolicies {
            default_ceiling,
            builtin: Arc::new(Policy::builtin_default()),
            admitted: Mutex::new(LruCache::new(NonZeroUsize::new(CACHED).expect("non-zero"))),
        }
    }

    /// `tenant`'s ceiling, or `policy_denied` saying how to get one: a key of a keys file
    /// whose entry names none has `--inline-ceiling` if its policies include it, else none.
    pub fn ceiling<'a>(&'a self, tenant: &'a Tenant) -> Result<Ceiling<'a>, ApiError> {
        match (&tenant.inline_ceiling, &self.default_ceiling) {
            (Some(name), _) => Ok(Ceiling::Named(name)),
            // The server's ceiling, only for a tenant that may use it: never wider than what a
            // tenant's own list of policies lets it name.
            (None, Some(name)) if tenant.may_use(name) => Ok(Ceiling::Named(name)),
            (None, None) if tenant.is_local() => Ok(Ceiling::Builtin(self.builtin.clone())),
            _ => Err(no_ceiling()),
        }
    }

    /// `inline` resolved and admitted under `ceiling`: from the cache, or parsed, checked with
    /// [`Policy::within`] and kept.
    pub fn admit(&self, inline: &InlineText, ceiling: &Policy) -> Result<Arc<Policy>, ApiError> {
        let key = (
            inline.json,
            crate::hex::sha256(inline.text.as_bytes()),
            ceiling.sha256().to_owned(),
        );
        if let Some(policy) = self.lock().get(&key) {
            return Ok(policy.clone());
        }
        let policy = Policy::from_inline(&inline.text, inline.json)
            .map_err(|past| refused(past, ceiling.name()))?
            .map_err(Error::from)?;
        policy
            .within(ceiling)
            .map_err(|past| refused(past, ceiling.name()))?;
        let policy = Arc::new(policy.metered_as(ceiling));
        self.lock().put(key, policy.clone());
        Ok(policy)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<Key, Arc<Policy>>> {
        self.admitted.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `policy_denied` for a server that admits no policy sent with a call.
fn no_ceiling() -> ApiError {
    ApiError::from(Error::PolicyDenied {
        capability: "inline policy".into(),
        rule: "inline_ceiling".into(),
        reason: "this server admits no policy sent with a call: no ceiling is set for your key"
            .into(),
        fix: None,
    })
    .fix(json!({"policy": "default", "policy_toml": null}))
    .note(
        "name a catalog policy (GET /v1/policies) instead; or the operator sets a ceiling: \
         `inline_ceiling = \"POLICY\"` for your key in the keys file, or `palisade serve \
         --inline-ceiling POLICY`",
    )
}

/// `policy_denied` naming the key past the ceiling, with the value that fits as the fix.
fn refused(past: PastCeiling, ceiling: &str) -> ApiError {
    let fits = match &past.fits {
        Value::Null => "leave it out".to_owned(),
        value => format!("set it to {value}"),
    };
    let note = format!(
        "`{}` is past the ceiling `{ceiling}` set for your key: {fits} in the policy you send, \
         or ask the operator for a wider ceiling",
        past.key
    );
    ApiError::from(Error::PolicyDenied {
        capability: past.key.clone(),
        rule: past.key.clone(),
        reason: format!("{} (ceiling `{ceiling}`)", past.reason),
        fix: None,
    })
    .fix(json!({"policy": {past.key: past.fits}}))
    .note(note)
}
