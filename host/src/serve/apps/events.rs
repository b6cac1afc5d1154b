//! `GET /v1/apps/{app}/events?session_id=`: server-sent events of the session's committed
//! actions' `events`, read from the durable log. Each carries its id (from 1 per session);
//! `Last-Event-ID` (or `?last_event_id=`) resumes after it. The stream waits for commits and
//! ends when the client goes away.

use super::super::state::AppState;
use super::records;
use axum::response::sse::{Event, KeepAlive, KeepAliveStream, Sse};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// Events read from the log at a time.
const BATCH: usize = 256;

/// Events waiting to be sent to one client; bounds what a slow client holds in memory.
const BUFFER: usize = 64;

/// A stream of events fed by the task that reads the log.
pub struct EventStream(tokio::sync::mpsc::Receiver<Event>);

impl futures_core::Stream for EventStream {
    type Item = Result<Event, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|e| e.map(Ok))
    }
}

/// The stream of `session_key`'s events after the id `after`.
pub fn stream(
    state: &Arc<AppState>,
    session_key: String,
    after: u64,
) -> Sse<KeepAliveStream<EventStream>> {
    let (tx, rx) = tokio::sync::mpsc::channel(BUFFER);
    let state = state.clone();
    tokio::spawn(async move {
        let mut committed = state.apps.subscribe();
        let mut last = after;
        loop {
            committed.borrow_and_update();
            let store = state.store.clone();
            let key = session_key.clone();
            let batch =
                match records::blocking(move || records::events_after(&store, &key, last, BATCH))
                    .await
                {
                    Ok(batch) => batch,
                    Err(_) => return,
                };
            let full = batch.len() == BATCH;
            for record in batch {
                last = record.id;
                let event = Event::default()
                    .id(record.id.to_string())
                    .data(record.event.to_string());
                if tx.send(event).await.is_err() {
                    return;
                }
            }
            if full {
                continue;
            }
            // Wait for a commit; look now and then whether the client is still there.
            loop {
                tokio::select! {
                    changed = committed.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        break;
                    }
                    () = tokio::time::sleep(Duration::from_secs(5)) => {
                        if tx.is_closed() {
                            return;
                        }
                    }
                }
            }
        }
    });
    Sse::new(EventStream(rx)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
