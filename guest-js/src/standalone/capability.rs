//! What `palisade:sandbox/capability` gives the full guest, made in the guest for hosts that
//! have no Palisade bridge. Host capabilities (`host.*`) need the Palisade host, so every call
//! is refused with a `PolicyDeniedError` that says so; the globals the build's policy does not
//! grant (`kv`, `fs`, `config`, `host`) are refused as under the Palisade host, with the table
//! that would grant them; `fetch` is refused when the policy had no `[http]` table.

use super::settings;
use crate::wasi::clocks::monotonic_clock::subscribe_duration;
use crate::wasi::io::error::Error as IoError;
use crate::wasi::io::poll::Pollable;

/// The kind of a failed request, as `wit/capability.wit` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkFailure {
    Denied,
    Dns,
    Refused,
    Reset,
    Timeout,
    ResponseTooLarge,
    RequestTooLarge,
    Tls,
    ContentCoding,
    Header,
    Invalid,
    Other,
}

/// A refusal, as `PolicyDeniedError` is built from it.
#[derive(Clone, Debug)]
pub struct Denial {
    pub capability: String,
    pub rule: String,
    pub reason: String,
    pub fix: Option<String>,
}

/// A failed call, as `wit/capability.wit`'s `failure` record gives it.
#[derive(Clone, Debug)]
pub struct Failure {
    pub code: String,
    pub message: String,
    pub retryable: bool,
}

/// Why a capability call failed.
#[derive(Clone, Debug)]
pub enum CallError {
    Denied(Denial),
    Failed(Failure),
}

/// A capability call: refused at once.
pub struct PendingCall {
    name: String,
}

impl PendingCall {
    /// Ready at once.
    pub fn subscribe(&self) -> Pollable {
        subscribe_duration(0)
    }

    /// The refusal.
    pub fn get(&self) -> Option<Result<String, CallError>> {
        Some(Err(CallError::Denied(needs_host(&self.name))))
    }
}

/// What a capability call is refused with outside the Palisade host.
fn needs_host(name: &str) -> Denial {
    Denial {
        capability: "host".to_owned(),
        rule: "standalone".to_owned(),
        reason: format!(
            "host.{name} needs the Palisade host: this component runs standalone (wasmtime run), \
             where host capabilities have no implementation; run it with `palisade run`"
        ),
        fix: None,
    }
}

/// Call the host capability `name`: refused (see [`needs_host`]).
pub fn call(name: &str, _payload: &str) -> PendingCall {
    PendingCall {
        name: name.to_owned(),
    }
}

/// Call the host capability `name` with several arguments: refused.
pub fn call_args(name: &str, _args: &str) -> PendingCall {
    call(name, "")
}

/// The refusal of a request to `target`: made here when the policy the component was built
/// with has no `[http]` table (the request never left the guest); `None` for a refusal by the
/// host, which gives no reason over standard `wasi:http`.
pub fn refusal(target: &str) -> Option<Denial> {
    if settings::http_granted() {
        return None;
    }
    Some(Denial {
        capability: "http".to_owned(),
        rule: "no [http] table".to_owned(),
        reason: format!(
            "fetch {target}: the policy this component was built with grants no HTTP access"
        ),
        fix: Some("[[http.allow]]\nurl = \"https://api.example.com/*\"".to_owned()),
    })
}

/// The refusal of a use of `global` that the build's policy does not grant.
pub fn ungranted(global: &str, name: &str) -> Denial {
    if global == "host" {
        return needs_host(name);
    }
    let (rule, fix) = match global {
        "kv" => (
            "no [kv] table",
            "kv = { namespace = \"app\", buckets = { default = \"rw\" } }",
        ),
        "fs" => (
            "no [fs] table",
            "[[fs.mount]]\nhost = \"./data\"\nguest = \"/data\"",
        ),
        _ => ("no [config] table", "[config]\nkey = \"value\""),
    };
    Denial {
        capability: global.to_owned(),
        rule: rule.to_owned(),
        reason: format!(
            "{global} is not granted by the policy this component was built with; rebuild it \
             with `palisade build --policy` naming a policy that grants it"
        ),
        fix: Some(fix.to_owned()),
    }
}

/// The kind of the error that ended a response body: standard `wasi:http` tells only through
/// its error code, which the caller reads first.
pub fn body_failure(_error: &IoError) -> Option<NetworkFailure> {
    None
}
