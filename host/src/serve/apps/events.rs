//! `GET /v1/apps/{app}/events?session_id=`: server-sent events of the session's committed
//! actions' `events`, read from the durable log. Each carries its id (from 1 per session);
//! `Last-Event-ID` (or `?last_event_id=`) resumes after it. The stream waits for commits and
//! ends when the client goes away. Open streams are capped per session, per tenant and per
//! server ([`StreamCaps`]); past a cap a new one is 429 `capacity_exhausted`, and a stream's
//! slot is free again as soon as its client goes away. The log keeps a session's last
//! [`MAX_EVENTS_PER_SESSION`] events; a reader that resumes from, or falls behind to, an
//! event no longer kept gets a `gap` event naming the ids it missed, then the next kept one.

use super::super::admission::RETRY_AFTER_SECONDS;
use super::super::errors::ApiError;
use super::{Apps, records};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, KeepAliveStream, Sse};
use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

/// The most event streams open at once. Each holds a connection, a task and up to `BUFFER`
/// events, so a client that opens streams without end would otherwise hold the server's memory
/// and tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamCaps {
    /// On one session of one app.
    pub per_session: usize,
    /// Of one tenant, over all its apps and sessions.
    pub per_tenant: usize,
    /// On the server.
    pub per_server: usize,
}

impl Default for StreamCaps {
    fn default() -> Self {
        StreamCaps {
            per_session: 16,
            per_tenant: 64,
            per_server: 256,
        }
    }
}

#[derive(Default)]
struct Open {
    server: usize,
    tenants: HashMap<String, usize>,
    sessions: HashMap<String, usize>,
}

/// The streams open now, counted per session, per tenant and on the server.
#[derive(Default)]
pub struct Streams {
    open: Mutex<Open>,
}

/// One open stream's place in the counts; dropping it (the client went away) frees it.
pub struct Slot {
    streams: Arc<Streams>,
    tenant: String,
    session_key: String,
    gauge: prometheus::IntGauge,
}

fn take(map: &mut HashMap<String, usize>, key: &str) {
    if let Some(n) = map.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            map.remove(key);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.streams.open.lock().unwrap_or_else(|e| e.into_inner());
        open.server -= 1;
        take(&mut open.tenants, &self.tenant);
        take(&mut open.sessions, &self.session_key);
        self.gauge.set(open.server as i64);
    }
}

impl Streams {
    /// A slot for one more stream of `tenant` on `session_key`, or 429 `capacity_exhausted`
    /// when a cap is reached.
    pub fn open(
        self: &Arc<Self>,
        caps: StreamCaps,
        tenant: &str,
        session_key: &str,
        gauge: &prometheus::IntGauge,
    ) -> Result<Slot, ApiError> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let full = |what: &str, cap: usize| {
            ApiError::capacity(
                StatusCode::TOO_MANY_REQUESTS,
                0,
                RETRY_AFTER_SECONDS,
                &format!(
                    "{what} has its maximum of {cap} open event streams; close one, or retry \
                     after Retry-After seconds"
                ),
            )
        };
        if open.sessions.get(session_key).copied().unwrap_or(0) >= caps.per_session {
            return Err(full("this session", caps.per_session));
        }
        if open.tenants.get(tenant).copied().unwrap_or(0) >= caps.per_tenant {
            return Err(full("your key", caps.per_tenant));
        }
        if open.server >= caps.per_server {
            return Err(full("the server", caps.per_server));
        }
        open.server += 1;
        *open.tenants.entry(tenant.to_owned()).or_default() += 1;
        *open.sessions.entry(session_key.to_owned()).or_default() += 1;
        gauge.set(open.server as i64);
        Ok(Slot {
            streams: self.clone(),
            tenant: tenant.to_owned(),
            session_key: session_key.to_owned(),
            gauge: gauge.clone(),
        })
    }
}

/// Events read from the log at a time, and their bytes: the events stay JSON text, never
/// parsed into trees (which took about 16 times their size).
const BATCH: (usize, usize) = (256, 1 << 20);

/// Events waiting to be sent to one client. With events of at most [`MAX_EVENT_BYTES`], a
/// stream holds at most one batch and this many events: about 3.5 MiB of RSS for a client that
/// reads nothing, as measured (`serve_cli::issue_38_slow_event_readers_hold_a_bounded_memory`),
/// at most `StreamCaps::per_server` times that on the server.
const BUFFER: usize = 16;

/// The most bytes of JSON one event may have: an action whose event is larger is the
/// script's `output_too_large`, and nothing of it is kept.
pub const MAX_EVENT_BYTES: usize = 64 << 10;

/// The most events the log keeps of one app session: a commit that writes event `n` drops
/// event `n - MAX_EVENTS_PER_SESSION` in the same step. With events of at most
/// [`MAX_EVENT_BYTES`] (64 KiB), one session's log holds at most 64 MB.
pub const MAX_EVENTS_PER_SESSION: u64 = 1_000;

/// The `gap` event before event `next` for a reader whose last event was `last`: the ids it
/// missed, dropped from the log. It has no id, so a reader's `Last-Event-ID` stays its last
/// event's.
fn gap(last: u64, next: u64) -> Option<Event> {
    (next > last + 1).then(|| {
        Event::default().event("gap").data(format!(
            "{{\"first_missing\":{},\"last_missing\":{}}}",
            last + 1,
            next - 1
        ))
    })
}

/// A stream of events fed by the task that reads the log. It holds the stream's slot: the
/// response body goes when the client does, and the slot with it.
pub struct EventStream {
    events: tokio::sync::mpsc::Receiver<Event>,
    _slot: Slot,
}

impl futures_core::Stream for EventStream {
    type Item = Result<Event, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.poll_recv(cx).map(|e| e.map(Ok))
    }
}

/// How often a stream reads the log of a shared store for other replicas' commits: an event
/// reaches a stream on another replica within this. Bounds the reads: one small range read per
/// open stream per period (at most `StreamCaps::per_server` streams).
pub const SHARED_POLL: Duration = Duration::from_millis(250);

/// Wait `period`, or for ever when there is none.
async fn tick(period: Option<Duration>) {
    match period {
        Some(period) => tokio::time::sleep(period).await,
        None => std::future::pending().await,
    }
}

/// The stream of `tenant`'s `session_key`'s events after the id `after`, or 429
/// `capacity_exhausted` past a cap.
pub fn stream(
    apps: &Apps,
    tenant: &str,
    session_key: String,
    after: u64,
) -> Result<Sse<KeepAliveStream<EventStream>>, ApiError> {
    let slot = apps.streams.open(
        apps.parts.stream_caps,
        tenant,
        &session_key,
        &apps.parts.metrics.app_event_streams,
    )?;
    let (tx, rx) = tokio::sync::mpsc::channel(BUFFER);
    let store = apps.parts.store.clone();
    // Other replicas' commits wake nothing here: on a shared store the log is read again
    // every `SHARED_POLL` too.
    let poll = store.shared().then_some(SHARED_POLL);
    let mut committed = apps.subscribe();
    tokio::spawn(async move {
        let mut last = after;
        loop {
            committed.borrow_and_update();
            let store = store.clone();
            let key = session_key.clone();
            let batch =
                match records::blocking(move || records::events_after(&store, &key, last, BATCH))
                    .await
                {
                    Ok(batch) => batch,
                    Err(_) => return,
                };
            let full = batch.len() == BATCH.0
                || batch.iter().map(|e| e.json.len()).sum::<usize>() >= BATCH.1;
            for record in batch {
                if let Some(gap) = gap(last, record.id)
                    && tx.send(gap).await.is_err()
                {
                    return;
                }
                last = record.id;
                let event = Event::default().id(record.id.to_string()).data(record.json);
                if tx.send(event).await.is_err() {
                    return;
                }
            }
            if full {
                continue;
            }
            // Wait for a commit, or for the client to go away.
            tokio::select! {
                changed = committed.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                () = tx.closed() => return,
                () = tick(poll) => {}
            }
        }
    });
    Ok(Sse::new(EventStream {
        events: rx,
        _slot: slot,
    })
    .keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}
