//! Live sessions in the server (`"live": true` on `POST /v1/sessions`): each session's
//! [`LiveSession`], at most `--max-live-sessions` of them hot (their instances kept), the rest
//! cooled to their image. After every run that succeeds, the image is written durably to the
//! session's folder (`DATA/sessions/ID/heap.img`) before the answer goes out, so a restart (or
//! a `kill -9`) finds the heap of the last acknowledged run; the next run wakes it.

use super::auth::Authed;
use super::errors::ApiError;
use super::journal::Who;
use super::reply::Stored;
use super::runner::Runner;
use super::runs::RunRequest;
use super::sessions::Sessions;
use crate::{Error, LiveSession, Policy};
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

type Slot = Arc<tokio::sync::Mutex<Option<LiveSession>>>;

/// The server's live sessions, by session id.
pub struct LiveHeaps {
    slots: Mutex<HashMap<String, Slot>>,
    /// The hot ones, most recently run first.
    hot: Mutex<lru::LruCache<String, ()>>,
    max_hot: usize,
}

/// Where a live session's image is kept, beside its `files` folder.
pub fn heap_file(session_dir: &Path) -> PathBuf {
    session_dir.with_file_name("heap.img")
}

fn internal(detail: String) -> ApiError {
    Error::Internal { detail }.into()
}

impl LiveHeaps {
    /// At most `max_hot` sessions keep their instance.
    pub fn new(max_hot: usize) -> LiveHeaps {
        LiveHeaps {
            slots: Mutex::new(HashMap::new()),
            hot: Mutex::new(lru::LruCache::unbounded()),
            max_hot: max_hot.max(1),
        }
    }

    fn slot(&self, id: &str) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.entry(id.to_owned()).or_default().clone()
    }

    /// Whether `policy` can hold a live session (it mounts no directory).
    pub async fn check(runner: &Runner, policy: &Policy) -> Result<(), ApiError> {
        runner.palisade().live_session(policy).await?;
        Ok(())
    }

    /// The session `id`'s [`LiveSession`], loaded from `file` (or fresh) on first use.
    async fn load<'a>(
        &self,
        slot: &'a Slot,
        runner: &Runner,
        policy: &Policy,
        file: &Path,
    ) -> Result<tokio::sync::MutexGuard<'a, Option<LiveSession>>, ApiError> {
        let mut guard = slot.lock().await;
        // The catalog changed the session's policy since it was loaded: its heap goes on under
        // the policy of now (a narrowed grant holds at once, not after the session cools).
        if let Some(live) = guard.as_ref()
            && live.policy() != policy
        {
            let image = live.image();
            *guard = Some(runner.palisade().wake_live_session(policy, &image).await?);
        }
        if guard.is_none() {
            let path = file.to_owned();
            let bytes = tokio::task::spawn_blocking(move || std::fs::read(path).ok())
                .await
                .map_err(|e| internal(e.to_string()))?;
            let palisade = runner.palisade();
            *guard = Some(match bytes {
                Some(bytes) => palisade.wake_live_session(policy, &bytes).await?,
                None => palisade.live_session(policy).await?,
            });
        }
        Ok(guard)
    }

    /// Run `request` in the live session `id` (one run at a time: the caller holds the
    /// session's turn), then keep its image and cool the least recently run past the limit.
    pub async fn run(
        &self,
        runner: &Runner,
        place: (&str, &Path),
        policy: &Policy,
        request: &RunRequest,
        who: &Who<'_>,
    ) -> Result<Stored, ApiError> {
        let (id, file) = place;
        let (name, source) = request.live_source()?;
        let options = request.options(who)?;
        let input = request.input.as_deref().map_or("null", |i| i.get());
        let slot = self.slot(id);
        let mut guard = self.load(&slot, runner, policy, file).await?;
        let live = guard.as_mut().expect("loaded");
        let outcome = runner
            .run_live(live, name, source, input, options, who)
            .await?;
        if outcome.error().is_none()
            && let Err(e) = save(file, live.image()).await
        {
            // Not kept durably, so not kept: the next run wakes from the last saved image.
            *guard = None;
            return Err(e);
        }
        drop(guard);
        self.used(id);
        super::runs::respond(&outcome)
    }

    /// Mark `id` hot and cool the least recently run sessions past `max_hot`.
    fn used(&self, id: &str) {
        if !self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(id)
        {
            return; // stopped while this turn ran (`forget`): not hot again
        }
        let cool: Vec<String> = {
            let mut hot = self.hot.lock().unwrap_or_else(|e| e.into_inner());
            hot.put(id.to_owned(), ());
            let mut out = Vec::new();
            while hot.len() > self.max_hot {
                if let Some((old, ())) = hot.pop_lru() {
                    out.push(old);
                }
            }
            out
        };
        for old in cool {
            let Some(slot) = self
                .slots
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&old)
                .cloned()
            else {
                continue;
            };
            // Its image is in its file: the session is dropped from memory and woken from the
            // file by its next run. One running now is cooled after its next turn here.
            if let Ok(mut guard) = slot.try_lock() {
                *guard = None;
            }
        }
    }

    /// `GET /v1/sessions/{id}/heap`.
    pub async fn heap(
        &self,
        runner: &Runner,
        place: (&str, &Path),
        policy: &Policy,
    ) -> Result<serde_json::Value, ApiError> {
        let slot = self.slot(place.0);
        let guard = self.load(&slot, runner, policy, place.1).await?;
        let heap = guard.as_ref().expect("loaded").heap();
        drop(guard);
        self.used(place.0);
        Ok(serde_json::json!({
            "session_id": place.0,
            "memory_bytes": heap.memory_bytes,
            "changed_blocks": heap.changed_blocks,
            "changed_bytes": heap.changed_blocks * 4096,
            "hot": heap.hot,
            "calls": heap.calls,
        }))
    }

    /// `POST /v1/sessions/{id}/reset`: back to a fresh heap, kept durably.
    pub async fn reset(
        &self,
        runner: &Runner,
        place: (&str, &Path),
        policy: &Policy,
    ) -> Result<(), ApiError> {
        let slot = self.slot(place.0);
        let mut guard = self.load(&slot, runner, policy, place.1).await?;
        let live = guard.as_mut().expect("loaded");
        live.reset();
        let saved = save(place.1, live.image()).await;
        if saved.is_err() {
            *guard = None;
        }
        drop(guard);
        self.used(place.0);
        saved
    }

    /// Copy session `from`'s heap (as of its last successful run) to a new session's file.
    pub async fn fork(
        &self,
        runner: &Runner,
        from: (&str, &Path),
        policy: &Policy,
        to_file: &Path,
    ) -> Result<(), ApiError> {
        let slot = self.slot(from.0);
        let guard = self.load(&slot, runner, policy, from.1).await?;
        let image = guard.as_ref().expect("loaded").image();
        drop(guard);
        self.used(from.0);
        save(to_file, image).await
    }

    /// Forget a stopped session.
    pub fn forget(&self, id: &str) {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        self.hot.lock().unwrap_or_else(|e| e.into_inner()).pop(id);
    }
}

/// Write `image` to `file` durably: a temporary file, synced, renamed over it, the folder
/// synced.
async fn save(file: &Path, image: Vec<u8>) -> Result<(), ApiError> {
    let file = file.to_owned();
    tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        use std::io::Write;
        let temp = file.with_extension("img.tmp");
        let mut out = std::fs::File::create(&temp)?;
        out.write_all(&image)?;
        out.sync_all()?;
        std::fs::rename(&temp, &file)?;
        if let Some(dir) = file.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    })
    .await
    .map_err(|e| internal(e.to_string()))?
    .map_err(|e| internal(format!("keeping a live session's heap: {e}")))
}

/// A live session's heap: its size, the blocks that differ from a fresh instance's, whether its
/// instance is hot, and its successful runs.
#[utoipa::path(get, path = "/v1/sessions/{id}/heap", tag = "sessions",
    params(("id" = String, Path, description = "the session's id")),
    responses((status = 200, description = "`{session_id, memory_bytes, changed_blocks, changed_bytes, hot, calls}`"),
        (status = 400, description = "invalid_input: the session is not live"),
        (status = 404, description = "session_not_found")))]
pub async fn session_heap(
    State(sessions): State<Arc<Sessions>>,
    Authed(tenant): Authed,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ApiError> {
    let heap = sessions.heap(&tenant, &id).await?;
    Ok((StatusCode::OK, axum::Json(heap)).into_response())
}

/// Return a live session's heap to a fresh instance's.
#[utoipa::path(post, path = "/v1/sessions/{id}/reset", tag = "sessions",
    params(("id" = String, Path, description = "the session's id")),
    responses((status = 200, description = "`{session_id, reset: true}`"),
        (status = 400, description = "invalid_input: the session is not live"),
        (status = 404, description = "session_not_found")))]
pub async fn reset_session(
    State(sessions): State<Arc<Sessions>>,
    Authed(tenant): Authed,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ApiError> {
    sessions.reset(&tenant, &id).await?;
    let body = serde_json::json!({"session_id": id, "reset": true});
    Ok((StatusCode::OK, axum::Json(body)).into_response())
}

/// A new live session with a copy of this one's heap: run a step on the fork, keep it or
/// stop it.
#[utoipa::path(post, path = "/v1/sessions/{id}/fork", tag = "sessions",
    params(("id" = String, Path, description = "the session's id")),
    responses((status = 201, description = "`{session_id, policy, created_at, forked_from}`"),
        (status = 400, description = "invalid_input: the session is not live"),
        (status = 404, description = "session_not_found"),
        (status = 429, description = "capacity_exhausted: no room for another session")))]
pub async fn fork_session(
    State(sessions): State<Arc<Sessions>>,
    Authed(tenant): Authed,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ApiError> {
    let forked = sessions.fork(&tenant, &id).await?;
    Ok((StatusCode::CREATED, axum::Json(forked)).into_response())
}
