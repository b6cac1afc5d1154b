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

use crate::Fix;
use crate::audit::{AuditLog, Decision};
use crate::bindings::palisade::sandbox::capability::NetworkFailure;
use crate::caps::gate::Refusal;
use crate::policy::{
    DEFAULT_MAX_REQUESTS, DEFAULT_MAX_RESPONSE_BODY, DEFAULT_TIMEOUT as DEFAULT_HTTP_TIMEOUT,
    HostError, Http, HttpRule, canonical_host, split_host_port,
};
use crate::record::{HttpEvent, Tape, event_bytes, push_hex, unhex};
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

/// A policy's request rate, shared by every call under that policy.
pub(crate) type RateLimiter = DefaultDirectRateLimiter;

pub(crate) fn rate_limiter(http: &Http) -> Option<Arc<RateLimiter>> {
    let rate = http.rate?;
    let count = NonZeroU32::new(rate.count)?;
    let quota = Quota::with_period(rate.per / rate.count)?.allow_burst(count);
    Some(Arc::new(RateLimiter::direct(quota)))
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
        let uri = request.uri();
        let scheme = uri.scheme_str().unwrap_or("").to_ascii_lowercase();
        let authority = uri.authority().map_or("", |a| a.as_str());
        let Some(policy) = &self.policy else {
            let url = format!("{scheme}://{authority}/");
            return Err(Refusal::http(
                "http",
                "the policy has no [http] table, so the script has no network access",
                Some(Fix {
                    key: "[[http.allow]] url".into(),
                    value: format!("{url:?}"),
                }),
            ));
        };
        if authority.contains('@') {
            return Err(Refusal::http(
                "http.userinfo",
                "URLs with a user name or password are refused; credentials come from the \
                 policy's headers",
                None,
            ));
        }
        let (host, port) = split_host_port(authority).ok_or_else(|| {
            Refusal::http(
                "http.host",
                format!("`{authority}` has no valid port"),
                None,
            )
        })?;
        if host.is_empty() {
            return Err(Refusal::http("http.host", "the request has no host", None));
        }
        let host = canonical_host(host).map_err(|e| {
            let reason = e.to_string();
            match e {
                HostError::Invalid(_) | HostError::NonCanonicalIpv4 { .. } => {
                    Refusal::http("http.host", reason, None)
                }
            }
        })?;
        let port = port.unwrap_or(if scheme == "https" { 443 } else { 80 });
        let path = uri.path();
        if let Some(segment) = path.split('/').find(|s| unsafe_segment(s)) {
            return Err(Refusal::http(
                "http.path",
                format!(
                    "the path segment `{segment}` is a dot segment or hides a separator; \
                     paths are matched as written and must not contain them"
                ),
                None,
            ));
        }
        let method = request.method().as_str().to_ascii_uppercase();
        let found = policy.allow.iter().enumerate().find(|(_, rule)| {
            rule.scheme == scheme
                && rule.host.matches(&host)
                && rule.port == port
                && path.starts_with(rule.path.as_str())
        });
        let Some((index, rule)) = found else {
            let dir = match path.rfind('/') {
                Some(i) => &path[..=i],
                None => "/",
            };
            let default_port = if scheme == "https" { 443 } else { 80 };
            let shown_port = if port == default_port {
                String::new()
            } else {
                format!(":{port}")
            };
            return Err(Refusal::http(
                "http.allow",
                format!("no [[http.allow]] rule matches {scheme}://{host}{shown_port}{path}"),
                Some(Fix {
                    key: "[[http.allow]] url".into(),
                    value: format!("\"{scheme}://{host}{shown_port}{dir}\""),
                }),
            ));
        };
        if !rule.methods.contains(&method) {
            let mut methods = rule.methods.clone();
            methods.push(method.clone());
            return Err(Refusal::http(
                format!("http.allow[{index}].methods"),
                format!(
                    "{method} is not among the rule's methods ({})",
                    rule.methods.join(", ")
                ),
                Some(Fix {
                    key: format!("http.allow[{index}].methods"),
                    value: format!("{methods:?}"),
                }),
            ));
        }
        let used = self.usage.requests.fetch_add(1, Ordering::SeqCst) + 1;
        if used > policy.max_requests {
            return Err(Refusal::http(
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
                        .min(10_000)
                        .to_string(),
                }),
            ));
        }
        if let Some(rate) = &self.rate
            && rate.check().is_err()
        {
            let limit = policy.rate.map(|r| r.to_string()).unwrap_or_default();
            return Err(Refusal::http(
                "http.rate",
                format!("the policy's rate limit of {limit} is used up; try again later"),
                None,
            ));
        }
        Ok((
            rule.clone(),
            Target {
                host,
                port,
                https: scheme == "https",
                rule_key: format!("http.allow[{index}]"),
            },
        ))
    }

    fn refuse(&self, target: &str, started: Instant, refusal: Refusal, slot: Slot) -> Error {
        slot.deny(&refusal.rule, &refusal.reason, refusal.fix.as_ref());
        let refusal = Refusal {
            target: target.into(),
            ..refusal
        };
        self.audit.deny(refusal, started, 0);
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
            .is_some_and(|e| e.outcome == "response" || e.outcome == "failed");
        if passed && self.usage.requests.fetch_add(1, Ordering::SeqCst) + 1 > max_requests {
            let refusal = Refusal::http(
                "http.max_requests",
                format!("more than {max_requests} requests in one script call"),
                None,
            );
            return Err(self.refuse(target, started, refusal, Slot(None)));
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
                "http.unsent",
                "this guest cannot send requests; a policy with [http] runs calls in the full guest",
                None,
            );
            let slot = Slot::reserve(&self.tape, method.as_str(), &target);
            self.refuse(&target, Instant::now(), refusal, slot);
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

/// A dot segment, or one that decodes (once or twice, as some servers do) to a dot segment or
/// a separator; a `;` parameter (`..;/`, which some servers strip) is ignored when comparing.
fn unsafe_segment(segment: &str) -> bool {
    let once: Vec<u8> = percent_encoding::percent_decode(segment.as_bytes()).collect();
    let twice: Vec<u8> = percent_encoding::percent_decode(&once).collect();
    [segment.as_bytes(), &once, &twice].iter().any(|form| {
        let head = form.split(|&b| b == b';').next().unwrap_or(&[]);
        head == b"." || head == b".." || form.iter().any(|&b| b == b'/' || b == b'\\')
    })
}

/// Where an allowed request goes.
struct Target {
    host: String,
    port: u16,
    https: bool,
    rule_key: String,
}

/// Whether `ip` is outside the public internet: private, loopback, link-local (cloud metadata),
/// CGNAT, multicast, unspecified, documentation, benchmarking, reserved, or IPv6 forms that
/// embed an IPv4 address (mapped, NAT64, 6to4).
pub(crate) fn is_non_public(ip: IpAddr) -> bool {
    const BLOCKED: &[&str] = &[
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "::/128",
        "::1/128",
        "::ffff:0:0/96",
        "::/96",
        "64:ff9b::/96",
        "64:ff9b:1::/48",
        "100::/64",
        "2001::/23",
        "2001:db8::/32",
        "2002::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    ];
    static NETS: std::sync::LazyLock<Vec<IpNet>> = std::sync::LazyLock::new(|| {
        BLOCKED
            .iter()
            .map(|net| net.parse().expect("the blocked ranges parse"))
            .collect()
    });
    NETS.iter().any(|net| net.contains(&ip))
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
                let error = self.refuse(&target_text, started, refusal, slot);
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
            self.audit.record_http(
                &self.target_text,
                Decision::Allow,
                &self.target.rule_key,
                self.started,
                (self.sent.load(Ordering::SeqCst), 0),
                Some(error.to_string()),
            );
        }
        result
    }

    async fn exchange(
        &self,
        request: http::Request<WasiBody>,
        deadline: tokio::time::Instant,
    ) -> Result<(http::Response<WasiBody>, IoFuture), Error> {
        let addresses = self.resolve().await?;
        let stream = connect(&addresses).await?;
        let (parts, body) = request.into_parts();
        let mut request = http::Request::from_parts(parts, self.count_request_body(body));
        let path = request
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        *request.uri_mut() = http::Uri::builder()
            .path_and_query(path)
            .build()
            .map_err(|_| Error::HttpRequestUriInvalid)?;
        let headers = request.headers_mut();
        for (name, value) in &self.rule.headers {
            let value = http::HeaderValue::from_str(&value.value)
                .map_err(|_| Error::InternalError(Some("a policy header is not valid".into())))?;
            headers.insert(
                http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| Error::InternalError(None))?,
                value,
            );
        }
        headers.insert(
            http::header::ACCEPT_ENCODING,
            http::HeaderValue::from_static("gzip, deflate"),
        );

        let io: Box<dyn Stream> = if self.target.https {
            Box::new(tls(&self.target.host, stream, self.policy.ca_file.as_ref()).await?)
        } else {
            Box::new(stream)
        };
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(wasmtime_wasi_http::io::TokioIo::new(io))
                .await
                .map_err(hyper_error)?;
        let mut conn = Box::pin(conn);
        let mut conn_done = false;
        let send = sender.send_request(request);
        tokio::pin!(send);
        let response = loop {
            tokio::select! {
                response = &mut send => break response.map_err(hyper_error)?,
                done = &mut conn, if !conn_done => {
                    conn_done = true;
                    done.map_err(hyper_error)?;
                }
            }
        };
        let io: IoFuture = Box::new(async move {
            if !conn_done {
                conn.await.map_err(hyper_error)?;
            }
            Ok(())
        });
        let response = self.accept_response(response, deadline)?;
        Ok((response, io))
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
        let addresses: Vec<SocketAddr> =
            match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
                Some(v6) => vec![SocketAddr::new(
                    v6.parse::<IpAddr>()
                        .map_err(|_| Error::HttpRequestUriInvalid)?,
                    port,
                )],
                None => match host.parse::<IpAddr>() {
                    Ok(ip) => vec![SocketAddr::new(ip, port)],
                    Err(_) => tokio::net::lookup_host((host.as_str(), port))
                        .await
                        .map_err(|e| Error::DnsError {
                            rcode: Some(e.to_string()),
                            info_code: None,
                        })?
                        .collect(),
                },
            };
        if addresses.is_empty() {
            return Err(Error::DnsError {
                rcode: Some(format!("{host} has no address")),
                info_code: None,
            });
        }
        let trusted_host = self
            .policy
            .allow_private_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(host.trim_end_matches('.')));
        for address in &addresses {
            let ip = address.ip();
            if is_non_public(ip)
                && !trusted_host
                && !self
                    .policy
                    .allow_private
                    .iter()
                    .any(|net| net.contains(&ip))
            {
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
                self.slot.deny("http.private", &reason, Some(&fix));
                let refusal = Refusal::http("http.private", reason, Some(fix));
                let refusal = Refusal {
                    target: self.target_text.as_str().into(),
                    ..refusal
                };
                self.audit.deny(refusal, self.started, 0);
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
        let index = self.audit.record_http(
            &self.target_text,
            Decision::Allow,
            &self.target.rule_key,
            self.started,
            (self.sent.load(Ordering::SeqCst), 0),
            None,
        );
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

trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin> Stream for T {}

async fn connect(addresses: &[SocketAddr]) -> Result<TcpStream, Error> {
    let mut last = Error::ConnectionRefused;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(e) => last = io_error(&e),
        }
    }
    Err(last)
}

fn io_error(e: &std::io::Error) -> Error {
    use std::io::ErrorKind::*;
    match e.kind() {
        ConnectionRefused => Error::ConnectionRefused,
        ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof => {
            Error::ConnectionTerminated
        }
        TimedOut => Error::ConnectionTimeout,
        _ => Error::DestinationUnavailable,
    }
}

fn hyper_error(e: hyper::Error) -> Error {
    // A request body over the budget fails inside hyper; report the budget, not the symptom.
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        if let Some(Error::HttpRequestBodySize(limit)) = cause.downcast_ref::<Error>() {
            return Error::HttpRequestBodySize(*limit);
        }
        source = cause.source();
    }
    if e.is_incomplete_message() || e.is_closed() || e.is_canceled() {
        return Error::ConnectionTerminated;
    }
    if e.is_timeout() {
        return Error::ConnectionReadTimeout;
    }
    let source_io = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<std::io::Error>());
    match source_io {
        Some(io) => io_error(io),
        None => Error::HttpProtocolError,
    }
}

/// The public roots built in (webpki-roots) and the system's certificate store, read once.
fn base_roots() -> &'static rustls::RootCertStore {
    static ROOTS: std::sync::OnceLock<rustls::RootCertStore> = std::sync::OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        let system = rustls_native_certs::load_native_certs();
        for error in &system.errors {
            tracing::warn!("the system certificate store: {error}");
        }
        let (added, ignored) = roots.add_parsable_certificates(system.certs);
        tracing::debug!(added, ignored, "system certificates trusted for https");
        roots
    })
}

async fn tls(
    host: &str,
    stream: TcpStream,
    extra: Option<&crate::policy::CaFile>,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, Error> {
    use rustls::pki_types::ServerName;
    let mut roots = base_roots().clone();
    if let Some(extra) = extra {
        let certificates = extra
            .certificates
            .iter()
            .map(|der| rustls::pki_types::CertificateDer::from(der.clone()));
        roots.add_parsable_certificates(certificates);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|_| Error::TlsProtocolError)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let name = match bare.parse::<IpAddr>() {
        Ok(ip) => ServerName::from(ip),
        Err(_) => ServerName::try_from(bare.to_owned()).map_err(|_| Error::TlsProtocolError)?,
    };
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, stream)
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => Error::TlsCertificateError,
            _ => Error::TlsProtocolError,
        })
}

/// A response body as a byte reader, for the decompressors.
fn body_reader(body: WasiBody) -> impl tokio::io::AsyncBufRead + Send {
    let stream = http_body_util::BodyDataStream::new(body);
    let stream = IoErrors(stream);
    tokio_util::io::StreamReader::new(stream)
}

/// Body errors as I/O errors, for `StreamReader`.
struct IoErrors(http_body_util::BodyDataStream<WasiBody>);

impl futures_core::Stream for IoErrors {
    type Item = Result<Bytes, std::io::Error>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.0)
            .poll_next(cx)
            .map(|item| item.map(|r| r.map_err(std::io::Error::other)))
    }
}

/// A decompressed body, read in bounded chunks so that a small compressed body cannot
/// expand into one huge allocation.
struct Decoded {
    reader: Pin<Box<dyn AsyncRead + Send>>,
}

const DECODE_CHUNK: usize = 16 << 10;

impl Body for Decoded {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let mut buf = BytesMut::with_capacity(DECODE_CHUNK);
        match ready!(tokio_util::io::poll_read_buf(
            self.reader.as_mut(),
            cx,
            &mut buf
        )) {
            Ok(0) => Poll::Ready(None),
            Ok(_) => Poll::Ready(Some(Ok(Frame::data(buf.freeze())))),
            Err(e) => {
                let error = match e.get_ref().and_then(|inner| inner.downcast_ref::<Error>()) {
                    Some(_) => Error::ConnectionTerminated,
                    None => Error::HttpResponseContentCoding(Some(e.to_string())),
                };
                Poll::Ready(Some(Err(error)))
            }
        }
    }
}

/// A request body counted against the call's request byte budget.
struct CountedRequest {
    inner: WasiBody,
    usage: Arc<Usage>,
    sent: Arc<AtomicU64>,
    limit: u64,
}

impl Body for CountedRequest {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if let Some(Ok(frame)) = &frame
            && let Some(data) = frame.data_ref()
        {
            self.sent.fetch_add(data.len() as u64, Ordering::SeqCst);
            let total = self
                .usage
                .request_bytes
                .fetch_add(data.len() as u64, Ordering::SeqCst)
                + data.len() as u64;
            if total > self.limit {
                return Poll::Ready(Some(Err(Error::HttpRequestBodySize(Some(self.limit)))));
            }
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
}

/// A response body counted against the call's response byte budget and the request's
/// deadline; its audit record gets the byte count when the body ends or is dropped.
struct CountedResponse {
    inner: WasiBody,
    usage: Arc<Usage>,
    limit: u64,
    deadline: Pin<Box<tokio::time::Sleep>>,
    audit: AuditLog,
    index: Option<usize>,
    seen: u64,
    done: bool,
    slot: Slot,
}

impl Body for CountedResponse {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let frame = ready!(self.as_mut().step(cx));
        match &frame {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    self.slot.body(data);
                }
            }
            Some(Err(error)) => self.slot.body_error(error),
            None => {}
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }
}

impl CountedResponse {
    fn step(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let frame = match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(frame) => frame,
            Poll::Pending => {
                ready!(self.deadline.as_mut().poll(cx));
                self.done = true;
                return Poll::Ready(Some(Err(Error::ConnectionReadTimeout)));
            }
        };
        match &frame {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let n = data.len() as u64;
                    self.seen += n;
                    let total = self.usage.response_bytes.fetch_add(n, Ordering::SeqCst) + n;
                    if total > self.limit {
                        self.done = true;
                        return Poll::Ready(Some(Err(Error::HttpResponseBodySize(Some(
                            self.limit,
                        )))));
                    }
                }
            }
            Some(Err(_)) | None => self.done = true,
        }
        Poll::Ready(frame)
    }
}

impl Drop for CountedResponse {
    fn drop(&mut self) {
        if let Some(index) = self.index {
            self.audit.add_bytes_out(index, self.seen);
        }
    }
}

/// This request's place in the transcript being recorded, if one is.
#[derive(Clone)]
struct Slot(Option<(Tape, usize)>);

impl Slot {
    fn reserve(tape: &Tape, method: &str, target: &str) -> Slot {
        let mut slot = None;
        tape.record_sized(event_bytes([method, target]), |t| {
            slot = Some(t.http.len());
            t.http.push(HttpEvent {
                method: method.to_owned(),
                target: target.to_owned(),
                outcome: "pending".into(),
                status: 0,
                headers: Vec::new(),
                body: String::new(),
                error: None,
                rule: None,
                reason: String::new(),
                fix: None,
            });
        });
        Slot(slot.map(|i| (tape.clone(), i)))
    }

    /// Edit the event, counting `bytes` more (what the edit adds, as written).
    fn edit(&self, bytes: u64, f: impl FnOnce(&mut HttpEvent)) {
        if let Some((tape, i)) = &self.0 {
            tape.record_sized(bytes, |t| f(&mut t.http[*i]));
        }
    }

    fn deny(&self, rule: &str, reason: &str, fix: Option<&Fix>) {
        let fix_text = fix.map(|f| f.key.len() + f.value.len()).unwrap_or(0);
        let bytes = event_bytes([rule, reason]) + fix_text as u64;
        self.edit(bytes, |e| {
            e.outcome = "denied".into();
            e.rule = Some(rule.to_owned());
            e.reason = reason.to_owned();
            e.fix = fix.map(|f| format!("{} = {}", f.key, f.value));
        });
    }

    fn fail(&self, error: &Error) {
        let reason = error.to_string();
        self.edit(event_bytes([reason.as_str()]), |e| {
            e.outcome = "failed".into();
            e.error = Some(kind_of(error).into());
            e.reason = reason;
        });
    }

    fn respond(&self, status: u16, headers: Vec<(String, String)>) {
        let texts = headers.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]);
        self.edit(event_bytes(texts), |e| {
            e.outcome = "response".into();
            e.status = status;
            e.headers = headers;
        });
    }

    fn body(&self, data: &[u8]) {
        self.edit(2 * data.len() as u64, |e| push_hex(&mut e.body, data));
    }

    fn body_error(&self, error: &Error) {
        let reason = error.to_string();
        self.edit(event_bytes([reason.as_str()]), |e| {
            e.error = Some(kind_of(error).into());
            e.reason = reason;
        });
    }
}

/// The kind of a failure the host made, as `fetch` reports it: in the transcript, and for the
/// guest when it ends a response body (`capability.body-failure`), which `wasi:http` hands over
/// as text only.
pub(crate) fn failure_of(error: &Error) -> NetworkFailure {
    match error {
        Error::DnsError { .. } | Error::DnsTimeout | Error::DestinationNotFound => {
            NetworkFailure::Dns
        }
        Error::ConnectionRefused | Error::DestinationUnavailable => NetworkFailure::Refused,
        Error::ConnectionTerminated | Error::HttpResponseIncomplete => NetworkFailure::Reset,
        Error::ConnectionTimeout
        | Error::ConnectionReadTimeout
        | Error::ConnectionWriteTimeout
        | Error::HttpResponseTimeout => NetworkFailure::Timeout,
        Error::HttpResponseBodySize(_) => NetworkFailure::ResponseTooLarge,
        Error::HttpRequestBodySize(_) => NetworkFailure::RequestTooLarge,
        Error::TlsProtocolError | Error::TlsCertificateError | Error::TlsAlertReceived { .. } => {
            NetworkFailure::Tls
        }
        Error::HttpResponseContentCoding(_) => NetworkFailure::ContentCoding,
        _ => NetworkFailure::Other,
    }
}

/// The kind of a failure as the transcript stores it: the name of its case in
/// `wit/capability.wit`, stable across versions.
fn kind_of(error: &Error) -> &'static str {
    match failure_of(error) {
        NetworkFailure::Denied => "denied",
        NetworkFailure::Dns => "dns",
        NetworkFailure::Refused => "refused",
        NetworkFailure::Reset => "reset",
        NetworkFailure::Timeout => "timeout",
        NetworkFailure::ResponseTooLarge => "response-too-large",
        NetworkFailure::RequestTooLarge => "request-too-large",
        NetworkFailure::Tls => "tls",
        NetworkFailure::ContentCoding => "content-coding",
        NetworkFailure::Header => "header",
        NetworkFailure::Invalid => "invalid",
        NetworkFailure::Other => "other",
    }
}

/// The failure of a kind, for replay.
fn error_of(kind: &str, reason: &str) -> Error {
    match kind {
        "dns" => Error::DnsError {
            rcode: Some(reason.to_owned()),
            info_code: None,
        },
        "refused" => Error::ConnectionRefused,
        "reset" => Error::ConnectionTerminated,
        "timeout" => Error::ConnectionTimeout,
        "response-too-large" => Error::HttpResponseBodySize(None),
        "request-too-large" => Error::HttpRequestBodySize(None),
        "tls" => Error::TlsProtocolError,
        "content-coding" => Error::HttpResponseContentCoding(None),
        _ => Error::InternalError(Some(reason.to_owned())),
    }
}

type Answer = Result<(http::Response<WasiBody>, IoFuture), Error>;

/// The recorded answer to a request, with no network access, and the index of its audit
/// record.
fn replayed(
    event: Option<HttpEvent>,
    target: &str,
    audit: &AuditLog,
    started: Instant,
) -> Result<(http::Response<WasiBody>, Option<usize>), Error> {
    let Some(event) = event else {
        return Err(Error::InternalError(Some(format!(
            "the transcript has no further answer for {target}"
        ))));
    };
    match event.outcome.as_str() {
        "denied" => {
            let fix = event
                .fix
                .as_deref()
                .and_then(|f| f.split_once(" = "))
                .map(|(k, v)| Fix {
                    key: k.to_owned(),
                    value: v.to_owned(),
                });
            let rule = event.rule.as_deref().unwrap_or("http");
            let refusal = Refusal::http(rule, event.reason.as_str(), fix);
            let refusal = Refusal {
                target: target.into(),
                ..refusal
            };
            audit.deny_replayed(refusal, started);
            Err(if rule == "http.private" {
                Error::DestinationIpProhibited
            } else {
                Error::HttpRequestDenied
            })
        }
        "response" => {
            let mut response = http::Response::builder().status(event.status);
            for (name, value) in &event.headers {
                response = response.header(name, value);
            }
            let body = Replayed {
                data: Some(Bytes::from(unhex(&event.body))),
                error: event.error.as_deref().map(|k| error_of(k, &event.reason)),
            };
            let response = response
                .body(body.boxed_unsync())
                .map_err(|e| Error::InternalError(Some(e.to_string())))?;
            let index = audit.record_http(target, Decision::Allow, "replay", started, (0, 0), None);
            Ok((response, index))
        }
        _ => Err(error_of(
            event.error.as_deref().unwrap_or("other"),
            &event.reason,
        )),
    }
}

/// A recorded response body: its bytes, then the error it ended with, if any.
struct Replayed {
    data: Option<Bytes>,
    error: Option<Error>,
}

impl Body for Replayed {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        if let Some(data) = self.data.take().filter(|d| !d.is_empty()) {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        Poll::Ready(self.error.take().map(Err))
    }
}
