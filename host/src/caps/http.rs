//! The network gate: `wasi:http/outgoing-handler` requests pass here, and only here, on their
//! way out. Every decision is made on the host from the policy's `[http]` table:
//!
//! 1. before any I/O: the target parses cleanly (no user info, a canonical host, no dot or
//!    encoded-separator path segments), a rule allows scheme, host, port, path prefix and
//!    method, and the call's request budget and the policy's rate limit have room;
//! 2. the host name is resolved once, every address is checked against the non-public ranges
//!    (unless `allow_private` opens one), and the connection goes to a checked address, so a
//!    second lookup (DNS rebinding) never happens;
//! 3. the rule's headers are injected (secrets included) after the script handed the request
//!    over, and secret values are redacted from the response headers it gets back;
//! 4. bodies are counted against the call's byte budgets (responses after decompression) and
//!    the request's timeout.
//!
//! Redirects are never followed here: the guest's `fetch` follows them hop by hop, and every
//! hop comes back through this gate.
//!
//! This file holds the gate, its `wasi:http` hook and every refusal and audit record; the pure
//! parts live beside it: `rules` (the allow rules, step 1), `address` (the address classes,
//! step 2), `transport` (TCP, TLS, hyper), `body` (byte budgets and decompression) and
//! `replay` (the transcript's side of each request).

use crate::Fix;
use crate::audit::{AuditLog, Decision, Entry};
use crate::bindings::palisade::sandbox::capability::NetworkFailure;
use crate::caps::gate::{Capability, Refusal};
use crate::hex::{push_hex, unhex};
use crate::policy::{
    DEFAULT_MAX_REQUESTS, DEFAULT_MAX_RESPONSE_BODY, DEFAULT_TIMEOUT as DEFAULT_HTTP_TIMEOUT,
    HostError, Http, HttpRule, canonical_host, split_host_port,
};
use crate::record::{HttpEvent, HttpOutcome, Tape, event_bytes};
use crate::secrets::{REDACTED, Secrets};
use bytes::{Bytes, BytesMut};
use governor::{DefaultDirectRateLimiter, Quota};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use ipnet::IpNet;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Instant;
use tokio::io::AsyncRead;
use tokio::net::TcpStream;
use wasmtime_wasi_http::{Error, FieldMap, FieldMapError, RequestOptions, WasiBody, WasiHttpHooks};

mod address;
mod body;
mod replay;
mod rules;
mod transport;

use body::*;
pub(crate) use replay::failure_of;
use replay::*;
use rules::*;
use transport::*;

/// The address a canonical host written as an IP literal (`[v6]`, dotted IPv4) stands for;
/// `None` for a name, which is resolved.
fn literal_address(host: &str) -> Result<Option<IpAddr>, Error> {
    match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => v6
            .parse::<IpAddr>()
            .map(Some)
            .map_err(|_| Error::HttpRequestUriInvalid),
        None => Ok(host.parse::<IpAddr>().ok()),
    }
}

/// The gate's decision on one request without I/O, `resolved` standing in for the DNS answer
/// of a host name: URL hygiene and the allow rules, then every address against the non-public
/// ranges, as a request meets them (the budgets and the rate left out). `Ok((rule key, host,
/// port))`, or `Err(rule)` of the refusal (`dns` for an empty answer). For the differential
/// fuzz target in `fuzz/`; not part of the API.
#[doc(hidden)]
pub fn decide_offline(
    policy: &crate::Policy,
    method: &str,
    uri: &http::Uri,
    resolved: &[IpAddr],
) -> Result<(String, String, u16), String> {
    let (http, _, target) =
        decide(policy.http().map(|h| &**h), method, uri).map_err(|r| r.rule.to_string())?;
    let addresses = match literal_address(&target.host) {
        Ok(Some(ip)) => vec![ip],
        Ok(None) => resolved.to_vec(),
        Err(_) => return Err("http.host".into()),
    };
    if addresses.is_empty() {
        return Err("dns".into());
    }
    if addresses
        .iter()
        .any(|ip| !address::admits(http, &target.host, *ip))
    {
        return Err("http.private".into());
    }
    Ok((target.rule_key, target.host, target.port))
}

/// A policy's request rate, shared by every call under that policy: in this process, or, with
/// a data directory, by every process on it (`kv::SharedRates`).
pub(crate) enum RateLimiter {
    Local(DefaultDirectRateLimiter),
    Shared {
        store: Arc<crate::kv::SharedRates>,
        policy: String,
        rate: crate::policy::Rate,
    },
}

impl RateLimiter {
    /// Take one request from the rate; `Err` when it is used up. A shared store that fails
    /// refuses the request too (a rate is a bound), and the operator's log says why.
    fn check(&self) -> Result<(), ()> {
        match self {
            RateLimiter::Local(limiter) => limiter.check().map_err(drop),
            RateLimiter::Shared {
                store,
                policy,
                rate,
            } => match store.take(policy, rate.count, rate.per) {
                Ok(true) => Ok(()),
                Ok(false) => Err(()),
                Err(e) => {
                    tracing::error!("the shared http.rate store failed: {e}");
                    Err(())
                }
            },
        }
    }
}

/// The rate limiter of `http` for the policy with SHA-256 `policy`: shared through `store`
/// when there is one.
pub(crate) fn rate_limiter(
    http: &Http,
    policy: &str,
    store: Option<Arc<crate::kv::SharedRates>>,
) -> Option<Arc<RateLimiter>> {
    let rate = http.rate?;
    let count = NonZeroU32::new(rate.count)?;
    if let Some(store) = store {
        let policy = policy.to_owned();
        return Some(Arc::new(RateLimiter::Shared {
            store,
            policy,
            rate,
        }));
    }
    let quota = Quota::with_period(rate.per / rate.count)?.allow_burst(count);
    Some(Arc::new(RateLimiter::Local(
        DefaultDirectRateLimiter::direct(quota),
    )))
}

/// How long a name lookup may take before the request fails as a DNS error.
const DNS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The call's usage of its network budgets.
#[derive(Default)]
struct Usage {
    requests: AtomicU32,
    request_bytes: AtomicU64,
    response_bytes: AtomicU64,
}

/// One call's network gate; the `WasiHttpHooks` of its store.
pub(crate) struct HttpGate {
    policy: Option<Arc<Http>>,
    rate: Option<Arc<RateLimiter>>,
    usage: Arc<Usage>,
    audit: AuditLog,
    secrets: Arc<Secrets>,
    tape: Tape,
}

impl HttpGate {
    pub fn new(
        policy: Option<Arc<Http>>,
        rate: Option<Arc<RateLimiter>>,
        audit: AuditLog,
        tape: Tape,
    ) -> Self {
        let secrets = Arc::new(Secrets::new(
            &policy.as_ref().map_or_else(Vec::new, |p| p.secret_values()),
        ));
        Self {
            policy,
            rate,
            usage: Arc::default(),
            audit,
            secrets,
            tape,
        }
    }

    /// Secret values this call's policy injects, for redaction.
    pub fn secrets(&self) -> &Arc<Secrets> {
        &self.secrets
    }

    /// Decide a request before any I/O: the rule that allows it, or why not.
    fn check(&self, request: &http::Request<WasiBody>) -> Result<(HttpRule, Target), Refusal> {
        let (policy, rule, target) = decide(
            self.policy.as_deref(),
            request.method().as_str(),
            request.uri(),
        )?;
        let used = self.usage.requests.fetch_add(1, Ordering::SeqCst) + 1;
        if used > policy.max_requests {
            return Err(Refusal::http(
                request.uri(),
                "http.max_requests",
                format!(
                    "more than {} requests in one script call",
                    policy.max_requests
                ),
                Some(Fix {
                    key: "http.max_requests".into(),
                    value: policy
                        .max_requests
                        .saturating_mul(2)
                        .min(crate::policy::MAX_REQUESTS_LIMIT)
                        .to_string(),
                }),
            ));
        }
        if let Some(rate) = &self.rate
            && rate.check().is_err()
        {
            let limit = policy.rate.map(|r| r.to_string()).unwrap_or_default();
            return Err(Refusal::http(
                request.uri(),
                "http.rate",
                format!("the policy's rate limit of {limit} is used up; try again later"),
                None,
            ));
        }
        Ok((rule.clone(), target))
    }

    fn refuse(&self, started: Instant, refusal: Refusal, slot: Slot) -> Error {
        slot.deny(refusal, &self.audit, started);
        Error::HttpRequestDenied
    }

    /// The recorded answer to a request, with no network access, within the policy's budgets
    /// (those of an `[http]` table with default values when the policy has none): the
    /// answers that passed the gate are counted against `max_requests`, and their bodies
    /// against `max_response_body`, as they were when recorded; a transcript cannot hand the
    /// script more than the policy would have let through.
    fn replayed(&self, event: Option<HttpEvent>, target: &str, started: Instant) -> Answer {
        let (max_requests, max_response_body, timeout) = match &self.policy {
            Some(p) => (p.max_requests, p.max_response_body.0, p.timeout.0),
            None => (
                DEFAULT_MAX_REQUESTS,
                DEFAULT_MAX_RESPONSE_BODY.0,
                DEFAULT_HTTP_TIMEOUT,
            ),
        };
        let passed = event
            .as_ref()
            .is_some_and(|e| matches!(e.outcome, HttpOutcome::Response | HttpOutcome::Failed));
        if passed && self.usage.requests.fetch_add(1, Ordering::SeqCst) + 1 > max_requests {
            let refusal = Refusal::http(
                target,
                "http.max_requests",
                format!("more than {max_requests} requests in one script call"),
                None,
            );
            return Err(self.refuse(started, refusal, Slot(None)));
        }
        let (response, index) = replayed(event, target, &self.audit, started)?;
        let (parts, body) = response.into_parts();
        let io: IoFuture = Box::new(async { Ok(()) });
        let body = CountedResponse {
            inner: body,
            usage: self.usage.clone(),
            limit: max_response_body,
            deadline: Box::pin(tokio::time::sleep(timeout)),
            audit: self.audit.clone(),
            index,
            seen: 0,
            slot: Slot(None),
            done: false,
        };
        Ok((http::Response::from_parts(parts, body.boxed_unsync()), io))
    }

    /// Decide a request that the plain guest could not send (it imports no `wasi:http`, and
    /// runs only under policies without `[http]`): first the checks `wasi:http` makes before a
    /// request reaches the gate, failing as the full guest reports them (`header`, `invalid`;
    /// headers past wasmtime's size limit trap, as there), then the same gate, refusal and
    /// records as a request sent through `wasi:http`. Nothing is ever sent from here: under a
    /// policy with `[http]` (which the plain guest never runs under) the request is refused
    /// and audited as `http.unsent`.
    pub async fn decide_unsent(
        &mut self,
        method: &str,
        scheme: &str,
        authority: &str,
        path_with_query: &str,
        headers: Vec<(String, Vec<u8>)>,
    ) -> wasmtime::Result<Option<(NetworkFailure, String)>> {
        let mut fields = FieldMap::new_mutable(FIELD_SIZE_LIMIT);
        for (name, value) in headers {
            match fields.append(self, name, value) {
                Ok(_) => {}
                Err(FieldMapError::Forbidden) => return Ok(header_error("Forbidden")),
                Err(FieldMapError::InvalidHeaderName | FieldMapError::InvalidHeaderValue) => {
                    return Ok(header_error("InvalidSyntax"));
                }
                // wasi:http traps here; the guest checks the size first, so only a forged
                // component gets this far, and it gets the error the guest would have made.
                Err(FieldMapError::TooManyFields | FieldMapError::TotalSizeTooBig) => {
                    return Ok(header_error("SizeExceeded"));
                }
                Err(FieldMapError::Immutable) => return Ok(header_error("Immutable")),
            }
        }
        let invalid = || {
            Some((
                NetworkFailure::Invalid,
                "the request's method or URL is not valid".to_owned(),
            ))
        };
        let method = match http::Method::from_bytes(method.as_bytes()) {
            Ok(method) => method,
            Err(_) => return Ok(invalid()),
        };
        let uri = match (
            http::uri::Scheme::try_from(scheme),
            http::uri::Authority::try_from(authority),
            http::uri::PathAndQuery::try_from(path_with_query),
        ) {
            (Ok(scheme), Ok(authority), Ok(path)) => http::Uri::builder()
                .scheme(scheme)
                .authority(authority)
                .path_and_query(path)
                .build(),
            _ => return Ok(invalid()),
        };
        let Ok(uri) = uri else {
            return Ok(invalid());
        };
        if self.policy.is_some() {
            let target = uri.to_string();
            let refusal = Refusal::http(
                &target,
                "http.unsent",
                "this guest cannot send requests; a policy with [http] runs calls in the full guest",
                None,
            );
            let slot = Slot::reserve(&self.tape, method.as_str(), &target);
            self.refuse(Instant::now(), refusal, slot);
            return Ok(None);
        }
        let body: WasiBody = http_body_util::Empty::<Bytes>::new()
            .map_err(|never| match never {})
            .boxed_unsync();
        let Ok(request) = http::Request::builder().method(method).uri(uri).body(body) else {
            return Ok(invalid());
        };
        let refused = self.send_request(request, None, Box::new(async { Ok(()) }));
        let _ = Pin::from(refused).await;
        Ok(None)
    }
}

/// wasmtime-wasi-http's limit on a request's header bytes (`WasiHttpCtx`'s default).
const FIELD_SIZE_LIMIT: usize = 128 * 1024;

/// A header refused as the full guest reports it: `wasi:http`'s `header-error`, as its `Debug`.
fn header_error(case: &str) -> Option<(NetworkFailure, String)> {
    Some((NetworkFailure::Header, format!("HeaderError::{case}")))
}

impl WasiHttpHooks for HttpGate {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<
        dyn Future<
                Output = Result<
                    (
                        http::Response<WasiBody>,
                        Box<dyn Future<Output = Result<(), Error>> + Send>,
                    ),
                    Error,
                >,
            > + Send,
    > {
        let started = Instant::now();
        let target_text = request.uri().to_string();
        let method = request.method().to_string();
        if let Some(replay) = self.tape.replaying() {
            let event = replay
                .http()
                .filter(|e| e.target == target_text && e.method == method);
            let answer = self.replayed(event, &target_text, started);
            return Box::new(async move { answer });
        }
        let slot = Slot::reserve(&self.tape, &method, &target_text);
        let (rule, target) = match self.check(&request) {
            Ok(decided) => decided,
            Err(refusal) => {
                let error = self.refuse(started, refusal, slot);
                return Box::new(async move { Err(error) });
            }
        };
        let policy = self.policy.clone().expect("checked above");
        let send = Outgoing {
            policy,
            rule,
            target,
            target_text,
            usage: self.usage.clone(),
            audit: self.audit.clone(),
            secrets: self.secrets.clone(),
            started,
            slot,
            sent: Arc::default(),
            head: request.method() == http::Method::HEAD,
        };
        Box::new(send.run(request))
    }
}

/// An allowed request on its way: resolve, check addresses, connect, send.
struct Outgoing {
    policy: Arc<Http>,
    rule: HttpRule,
    target: Target,
    target_text: String,
    usage: Arc<Usage>,
    audit: AuditLog,
    secrets: Arc<Secrets>,
    started: Instant,
    slot: Slot,
    /// Request body bytes of this request.
    sent: Arc<AtomicU64>,
    /// A HEAD request: its response's `content-length` describes no body.
    head: bool,
}

type IoFuture = Box<dyn Future<Output = Result<(), Error>> + Send>;

impl Outgoing {
    /// The audit record of this request, let through by the policy; its index, when kept.
    fn record(&self, error: Option<String>) -> Option<usize> {
        self.audit.record(Entry {
            capability: Capability::Http,
            target: &self.target_text,
            decision: Decision::Allow,
            rule: &self.target.rule_key,
            started: self.started,
            bytes: (self.sent.load(Ordering::SeqCst), 0),
            error,
        })
    }

    async fn run(
        self,
        request: http::Request<WasiBody>,
    ) -> Result<(http::Response<WasiBody>, IoFuture), Error> {
        let deadline = tokio::time::Instant::from_std(self.started + self.policy.timeout.0);
        let result = tokio::time::timeout_at(deadline, self.exchange(request, deadline)).await;
        let result = match result {
            Ok(result) => result,
            Err(_) => Err(Error::ConnectionTimeout),
        };
        if let Err(error) = &result
            && !matches!(error, Error::DestinationIpProhibited)
        {
            self.slot.fail(error);
            self.record(Some(error.to_string()));
        }
        result
    }

    /// Resolve once and check every address; a name with any non-public address is refused.
    async fn resolve(&self) -> Result<Vec<SocketAddr>, Error> {
        match tokio::time::timeout(DNS_TIMEOUT, self.resolve_and_check()).await {
            Ok(result) => result,
            Err(_) => Err(Error::DnsTimeout),
        }
    }

    async fn resolve_and_check(&self) -> Result<Vec<SocketAddr>, Error> {
        let host = &self.target.host;
        let port = self.target.port;
        let addresses: Vec<SocketAddr> = match literal_address(host)? {
            Some(ip) => vec![SocketAddr::new(ip, port)],
            None => tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| Error::DnsError {
                    rcode: Some(e.to_string()),
                    info_code: None,
                })?
                .collect(),
        };
        self.audit.resolved(&self.target_text, &addresses);
        if addresses.is_empty() {
            return Err(Error::DnsError {
                rcode: Some(format!("{host} has no address")),
                info_code: None,
            });
        }
        for address in &addresses {
            let ip = address.ip();
            if !address::admits(&self.policy, host, ip) {
                // The script, its error and the caller's outcome learn the host name only: the
                // address it resolved to would hand a script the internal address map one name
                // at a time. The operator's log has the address.
                tracing::info!(host = %host, address = %ip, "refused a non-public address");
                let reason = format!(
                    "{host} resolves to a private, loopback, link-local or otherwise non-public \
                     address"
                );
                let literal = host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<IpAddr>()
                    .is_ok();
                let fix = if literal {
                    // The script wrote the address itself: naming it reveals nothing.
                    let prefix = if ip.is_ipv4() { 32 } else { 128 };
                    Fix {
                        key: "http.allow_private".into(),
                        value: format!("[\"{ip}/{prefix}\"]"),
                    }
                } else {
                    Fix {
                        key: "http.allow_private_hosts".into(),
                        value: format!("[\"{}\"]", host.trim_end_matches('.').to_ascii_lowercase()),
                    }
                };
                let refusal = Refusal::http(&self.target_text, "http.private", reason, Some(fix));
                self.slot.deny(refusal, &self.audit, self.started);
                return Err(Error::DestinationIpProhibited);
            }
        }
        Ok(addresses)
    }

    fn count_request_body(&self, body: WasiBody) -> WasiBody {
        CountedRequest {
            inner: body,
            usage: self.usage.clone(),
            sent: self.sent.clone(),
            limit: self.policy.max_request_body.0,
        }
        .boxed_unsync()
    }

    fn accept_response(
        &self,
        response: http::Response<hyper::body::Incoming>,
        deadline: tokio::time::Instant,
    ) -> Result<http::Response<WasiBody>, Error> {
        let (mut parts, incoming) = response.into_parts();
        let encoding = parts
            .headers
            .get(http::header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_ascii_lowercase());
        let raw = incoming.map_err(hyper_error).boxed_unsync();
        let decoded = |reader: Pin<Box<dyn AsyncRead + Send>>| Decoded { reader }.boxed_unsync();
        if matches!(encoding.as_deref(), Some("gzip" | "x-gzip" | "deflate")) {
            parts.headers.remove(http::header::CONTENT_ENCODING);
            parts.headers.remove(http::header::CONTENT_LENGTH);
        }
        let body: WasiBody = match encoding.as_deref() {
            Some("gzip") | Some("x-gzip") => decoded(Box::pin(
                async_compression::tokio::bufread::GzipDecoder::new(body_reader(raw)),
            )),
            Some("deflate") => decoded(Box::pin(
                async_compression::tokio::bufread::ZlibDecoder::new(body_reader(raw)),
            )),
            Some(other) if !other.is_empty() && other != "identity" => {
                return Err(Error::HttpResponseContentCoding(Some(other.to_owned())));
            }
            _ => {
                let remaining = self
                    .policy
                    .max_response_body
                    .0
                    .saturating_sub(self.usage.response_bytes.load(Ordering::SeqCst));
                let length = parts
                    .headers
                    .get(http::header::CONTENT_LENGTH)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok());
                let bodiless = self.head
                    || matches!(parts.status.as_u16(), 204 | 304)
                    || parts.status.is_informational();
                if !bodiless && length.is_some_and(|n| n > remaining) {
                    return Err(Error::HttpResponseBodySize(Some(
                        self.policy.max_response_body.0,
                    )));
                }
                raw
            }
        };
        for value in parts.headers.values_mut() {
            if self.secrets.contains(value.as_bytes()) {
                *value = http::HeaderValue::from_static(REDACTED);
            }
        }
        let headers: Vec<(String, String)> = parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        self.slot.respond(parts.status.as_u16(), headers);
        let index = self.record(None);
        let body = CountedResponse {
            inner: body,
            usage: self.usage.clone(),
            limit: self.policy.max_response_body.0,
            deadline: Box::pin(tokio::time::sleep_until(deadline)),
            audit: self.audit.clone(),
            index,
            seen: 0,
            slot: self.slot.clone(),
            done: false,
        };
        Ok(http::Response::from_parts(parts, body.boxed_unsync()))
    }
}
