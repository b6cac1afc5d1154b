//! Record and replay: each request's place in the transcript being recorded, failure kinds as
//! a transcript stores them, and recorded answers handed out with no network access.

use super::*;

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
pub(super) fn kind_of(error: &Error) -> &'static str {
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
pub(super) fn error_of(kind: &str, reason: &str) -> Error {
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

pub(super) type Answer = Result<(http::Response<WasiBody>, IoFuture), Error>;

/// The recorded answer to a request, with no network access, and the index of its audit
/// record.
pub(super) fn replayed(
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
    match event.outcome {
        HttpOutcome::Denied => {
            let fix = event
                .fix
                .as_deref()
                .and_then(|f| f.split_once(" = "))
                .map(|(k, v)| Fix {
                    key: k.to_owned(),
                    value: v.to_owned(),
                });
            let rule = event.rule.as_deref().unwrap_or("http");
            let refusal = Refusal::http(target, rule, event.reason.as_str(), fix);
            audit.deny_replayed(refusal, started);
            Err(if rule == "http.private" {
                Error::DestinationIpProhibited
            } else {
                Error::HttpRequestDenied
            })
        }
        HttpOutcome::Response => {
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
            let index = audit.record(Entry {
                capability: Capability::Http,
                target,
                decision: Decision::Allow,
                rule: "replay",
                started,
                bytes: (0, 0),
                error: None,
            });
            Ok((response, index))
        }
        HttpOutcome::Pending | HttpOutcome::Failed => Err(error_of(
            event.error.as_deref().unwrap_or("other"),
            &event.reason,
        )),
    }
}

/// A recorded response body: its bytes, then the error it ended with, if any.
pub(super) struct Replayed {
    pub(super) data: Option<Bytes>,
    pub(super) error: Option<Error>,
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

/// This request's place in the transcript being recorded, if one is.
#[derive(Clone)]
pub(super) struct Slot(pub(super) Option<(Tape, usize)>);

impl Slot {
    pub(super) fn reserve(tape: &Tape, method: &str, target: &str) -> Slot {
        let mut slot = None;
        tape.record_sized(event_bytes([method, target]), |t| {
            slot = Some(t.http.len());
            t.http.push(HttpEvent {
                method: method.to_owned(),
                target: target.to_owned(),
                outcome: HttpOutcome::Pending,
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
    pub(super) fn edit(&self, bytes: u64, f: impl FnOnce(&mut HttpEvent)) {
        if let Some((tape, i)) = &self.0 {
            tape.record_sized(bytes, |t| f(&mut t.http[*i]));
        }
    }

    /// Record a refusal of this call's policy: the transcript's entry, then the audit record,
    /// the call's error and the script's `PolicyDeniedError` (`AuditLog::deny`), all from the
    /// one refusal.
    pub(super) fn deny(&self, refusal: Refusal, audit: &AuditLog, started: Instant) {
        let fix = refusal.fix_text();
        let fix_bytes = refusal
            .fix
            .as_ref()
            .map_or(0, |f| f.key.len() + f.value.len());
        let bytes = event_bytes([&*refusal.rule, &*refusal.reason]) + fix_bytes as u64;
        self.edit(bytes, |e| {
            e.outcome = HttpOutcome::Denied;
            e.rule = Some(refusal.rule.to_string());
            e.reason = refusal.reason.to_string();
            e.fix = fix;
        });
        audit.deny(refusal, started, 0);
    }

    pub(super) fn fail(&self, error: &Error) {
        let reason = error.to_string();
        self.edit(event_bytes([reason.as_str()]), |e| {
            e.outcome = HttpOutcome::Failed;
            e.error = Some(kind_of(error).into());
            e.reason = reason;
        });
    }

    pub(super) fn respond(&self, status: u16, headers: Vec<(String, String)>) {
        let texts = headers.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]);
        self.edit(event_bytes(texts), |e| {
            e.outcome = HttpOutcome::Response;
            e.status = status;
            e.headers = headers;
        });
    }

    pub(super) fn body(&self, data: &[u8]) {
        self.edit(2 * data.len() as u64, |e| push_hex(&mut e.body, data));
    }

    pub(super) fn body_error(&self, error: &Error) {
        let reason = error.to_string();
        self.edit(event_bytes([reason.as_str()]), |e| {
            e.error = Some(kind_of(error).into());
            e.reason = reason;
        });
    }
}
