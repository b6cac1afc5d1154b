//! Live sessions in the server (`"live": true` on `POST /v1/sessions`): each session's
//! [`LiveSession`], at most `--max-live-sessions` of them hot (their instances kept), the rest
//! cooled to their image. After every run that succeeds, what the run changed is written
//! durably to the session's folder before the answer goes out, so a restart (or a `kill -9`)
//! finds the heap of the last acknowledged run; the next run wakes it. The folder holds the
//! heap's image file (`DATA/sessions/ID/heap.img`) and its journal (`heap.jrnl`, the blocks each
//! run changed since the image was written, appended); when the journal outgrows half the
//! image (or 1 MiB), the next run writes a new image and starts the journal again.

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

type Slot = Arc<tokio::sync::Mutex<Option<Loaded>>>;

/// A live session in memory, and where its journal stands.
struct Loaded {
    live: LiveSession,
    journal: Journal,
}

/// Where a session's files stand: the image file's length (0: none yet, so the next run
/// writes one) and the journal after it.
#[derive(Clone, Copy)]
struct Journal {
    image_len: u64,
    /// The digest the next record chains from (the last record's, or the image file's).
    head: [u8; 32],
    /// Bytes in the journal file (0: none yet; the next record writes its header first).
    len: u64,
    /// The memory's size at the last record (or image file).
    memory_size: u64,
}

/// The journal is folded into a new image file once it is past half the image or this.
const JOURNAL_MIN: u64 = 1 << 20;

impl Journal {
    /// A session with no file yet.
    fn none() -> Journal {
        Journal {
            image_len: 0,
            head: [0; 32],
            len: 0,
            memory_size: 0,
        }
    }

    /// Just after the image file `image` was written, for a memory of `memory_size` bytes.
    fn after_image(image: &[u8], memory_size: u64) -> Journal {
        let head = image[image.len().saturating_sub(32)..]
            .try_into()
            .unwrap_or([0; 32]);
        Journal {
            image_len: image.len() as u64,
            head,
            len: 0,
            memory_size,
        }
    }

    /// Whether the next run writes a new image file rather than a record.
    fn full(&self) -> bool {
        self.image_len == 0 || self.len > (self.image_len / 2).max(JOURNAL_MIN)
    }
}

/// The server's live sessions, by session id.
pub struct LiveHeaps {
    slots: Mutex<HashMap<String, Slot>>,
    /// The hot ones, most recently run first.
    hot: Mutex<lru::LruCache<String, ()>>,
    max_hot: usize,
    /// Those hibernated since their last turn ([`LiveHeaps::hibernate`]).
    hibernated: Mutex<std::collections::HashSet<String>>,
}

/// Where a live session's image is kept, beside its `files` folder.
pub fn heap_file(session_dir: &Path) -> PathBuf {
    session_dir.with_file_name("heap.img")
}

/// Where the journal of the image `heap_file` is kept.
fn journal_file(heap_file: &Path) -> PathBuf {
    heap_file.with_file_name("heap.jrnl")
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
            hibernated: Mutex::default(),
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

    /// The session `id`'s turn: its slot, locked until the turn ends.
    async fn turn(&self, id: &str) -> Turn<'_> {
        Turn {
            guard: Some(self.slot(id).lock_owned().await),
            heaps: self,
            id: id.to_owned(),
        }
    }

    /// The session `id`'s turn with its [`LiveSession`], loaded from `file` (or fresh) on
    /// first use.
    async fn load(
        &self,
        id: &str,
        runner: &Runner,
        policy: &Policy,
        file: &Path,
    ) -> Result<Turn<'_>, ApiError> {
        let mut turn = self.turn(id).await;
        let guard = turn.guard.as_mut().expect("held until dropped");
        // The catalog changed the session's policy since it was loaded: its heap goes on under
        // the policy of now (a narrowed grant holds at once, not after the session cools).
        if let Some(loaded) = guard.as_mut()
            && loaded.live.policy() != policy
        {
            let _slot = runner.admit().await?;
            let image = loaded.live.image();
            loaded.live = runner.palisade().wake_live_session(policy, &image).await?;
        }
        if guard.is_none() {
            **guard = Some(wake(runner, policy, file).await?);
        }
        Ok(turn)
    }

    /// Run `request` in the live session `id` (one run at a time: the caller holds the
    /// session's turn), then keep its image; the turn's end cools the least recently run past
    /// the limit.
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
        let mut turn = self.load(id, runner, policy, file).await?;
        let outcome = runner
            .run_live(turn.live(), name, source, input, options, who)
            .await?;
        if outcome.error().is_none() {
            keep(file, turn.take()).await?;
        }
        drop(turn);
        super::runs::respond(&outcome)
    }

    /// Mark `id` hot and cool the least recently run sessions past `max_hot`. Called at the
    /// end of every turn, however it ends, so that a session skipped here because its turn
    /// was under way (a run that then failed, even before it ran) is counted again.
    fn used(&self, id: &str) {
        if !self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(id)
        {
            return; // stopped while this turn ran (`forget`): not hot again
        }
        self.hibernated
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
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
            // file by its next run. One whose turn is under way is counted hot again when its
            // turn ends, and cooled here in its order.
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
        let mut turn = self.load(place.0, runner, policy, place.1).await?;
        let heap = turn.live().heap();
        drop(turn);
        Ok(serde_json::json!({
            "session_id": place.0,
            "memory_bytes": heap.memory_bytes,
            "changed_blocks": heap.changed_blocks,
            "changed_bytes": heap.changed_blocks * 4096,
            "hot": heap.hot,
            "calls": heap.calls,
        }))
    }

    /// `POST /v1/sessions/{id}/reset`: back to a fresh heap, kept durably. The heap of before
    /// is not read, so a session whose file no longer wakes (damaged, or of an older format)
    /// can be reset.
    pub async fn reset(
        &self,
        runner: &Runner,
        place: (&str, &Path),
        policy: &Policy,
    ) -> Result<(), ApiError> {
        let mut turn = self.turn(place.0).await;
        let live = runner.palisade().live_session(policy).await?;
        let image = live.image();
        let journal = Journal::after_image(&image, live.memory_size());
        let file = place.1.to_owned();
        let mut guard = turn.take();
        held(async move {
            let saved = save(&file, image).await;
            *guard = saved.is_ok().then_some(Loaded { live, journal });
            saved
        })
        .await
    }

    /// Give a new session's file (`to_file`) session `from`'s heap as of its last
    /// acknowledged run: a hard link to its image file (which `save` only ever replaces, never
    /// changes), or a copy where the folder cannot link, and a copy of its journal. A session
    /// with no file yet (no run kept) forks to one that starts fresh too.
    pub async fn fork(&self, from: (&str, &Path), to_file: &Path) -> Result<(), ApiError> {
        // After a run in progress here has kept its image.
        let _turn = self.turn(from.0).await;
        let (from, to) = (from.1.to_owned(), to_file.to_owned());
        tokio::task::spawn_blocking(move || -> std::io::Result<()> {
            match std::fs::hard_link(&from, &to) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(_) => drop(std::fs::copy(&from, &to)?),
                Ok(()) => {}
            }
            std::fs::File::open(&to)?.sync_all()?;
            match std::fs::copy(journal_file(&from), journal_file(&to)) {
                Ok(_) => std::fs::File::open(journal_file(&to))?.sync_all()?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            sync_folder(&to)
        })
        .await
        .map_err(|e| internal(e.to_string()))?
        .map_err(|e| internal(format!("forking a live session's heap: {e}")))
    }

    /// Forget a stopped session.
    pub fn forget(&self, id: &str) {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        self.hot.lock().unwrap_or_else(|e| e.into_inner()).pop(id);
        self.hibernated
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }

    /// Whether session `id` was hibernated since its last turn.
    pub fn hibernated(&self, id: &str) -> bool {
        self.hibernated
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(id)
    }

    /// Hibernate session `id`, idle: drop it from memory (its next turn wakes it from its
    /// files) and compress its heap file `file` in place of the file itself
    /// ([`crate::HeapImage::compress`]: the same digest, so its journal still fits), unless a
    /// turn of it is under way (then nothing: a later round tries again). Once until its next
    /// turn.
    pub async fn hibernate(&self, id: &str, file: &Path) -> Result<(), ApiError> {
        let Ok(mut guard) = self.slot(id).try_lock_owned() else {
            return Ok(());
        };
        *guard = None;
        self.hot.lock().unwrap_or_else(|e| e.into_inner()).pop(id);
        // Tried once an idle period, whether it succeeds or not (a file that cannot be
        // compressed stays as it is, and wakes as it is).
        self.hibernated
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_owned());
        let file = file.to_owned();
        held(async move {
            let compressed = tokio::task::spawn_blocking(move || compress_file(&file)).await;
            drop(guard);
            compressed
                .map_err(|e| internal(e.to_string()))?
                .map_err(|e| internal(format!("compressing a live session's heap: {e}")))
        })
        .await
    }
}

/// A session's turn: its slot locked. When it ends, however its holder leaves (an answer, an
/// error, a refusal at admission), the session is counted as just used and the least recently
/// used past `--max-live-sessions` are cooled: no session keeps an instance uncounted.
struct Turn<'a> {
    heaps: &'a LiveHeaps,
    id: String,
    /// `Some` until the turn is dropped, or its holder takes it ([`Turn::take`]).
    guard: Option<Guard>,
}

impl Turn<'_> {
    /// The session, once [`LiveHeaps::load`] has loaded it.
    fn loaded(&mut self) -> &mut Loaded {
        let guard = self.guard.as_mut().expect("held until dropped");
        guard.as_mut().expect("loaded")
    }

    fn live(&mut self) -> &mut LiveSession {
        &mut self.loaded().live
    }

    /// The session's slot, held by the caller from now on (the turn still ends when dropped).
    fn take(&mut self) -> Guard {
        self.guard.take().expect("held until dropped")
    }
}

/// A session's slot, held.
type Guard = tokio::sync::OwnedMutexGuard<Option<Loaded>>;

/// Run `write` (a write of the session's files, which owns the session's slot) on a task of its
/// own, to its end: a request that goes away midway (its client gone) neither cuts the write
/// short nor lets the session's next turn write its files beside it, or run on a journal not
/// yet noted (the slot is held until `write` ends).
async fn held<T: Send + 'static>(
    write: impl Future<Output = Result<T, ApiError>> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::spawn(write)
        .await
        .map_err(|e| internal(e.to_string()))?
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        self.heaps.used(&self.id);
    }
}

/// A session from its files: the image file, then its journal's records; a fresh session if
/// no run was kept yet. A journal cut short (a write that never finished) is cut back to its
/// last whole record, and one left from an older image is emptied.
async fn wake(runner: &Runner, policy: &Policy, file: &Path) -> Result<Loaded, ApiError> {
    let (image_path, journal_path) = (file.to_owned(), journal_file(file));
    let opened = tokio::task::spawn_blocking(move || read_files(&image_path, &journal_path))
        .await
        .map_err(|e| internal(e.to_string()))?
        .map_err(|e| internal(format!("opening a live session's heap: {e}")))?;
    let palisade = runner.palisade();
    let Some(files) = opened else {
        let live = palisade.live_session(policy).await?;
        return Ok(Loaded {
            live,
            journal: Journal::none(),
        });
    };
    // A wake takes memory (a compressed file is decompressed into it, a journal replayed over
    // a copy) and a CPU as a call does: admitted as one, so that no more sessions wake at once
    // than calls run (`--max-concurrency`). A session with no file yet starts fresh, mapping
    // the runtime's fresh heap.
    let _slot = runner.admit().await?;
    // Mapped from the file (its digest checked first).
    let mut live = palisade
        .wake_live_session_file(policy, &files.image)
        .await?;
    let mut journal = Journal {
        // A compressed file (the session hibernated) is replaced by a plain one at the next
        // step kept, so that a later wake maps it rather than decompressing it again.
        image_len: if files.compressed { 0 } else { files.image_len },
        head: files.digest,
        len: 0,
        memory_size: live.memory_size(),
    };
    if let Some(log) = files.journal {
        let replayed = live.replay_journal(&log, &journal.head)?;
        if replayed.valid < log.len() {
            cut(journal_file(file), replayed.valid as u64).await?;
        }
        journal.head = replayed.head;
        journal.len = replayed.valid as u64;
        journal.memory_size = live.memory_size();
    }
    Ok(Loaded { live, journal })
}

/// A session's files, as [`wake`] reads them.
struct Files {
    image: std::fs::File,
    image_len: u64,
    /// The digest the image file ends with.
    digest: [u8; 32],
    /// Whether the image file is compressed ([`crate::HeapImage::compress`]).
    compressed: bool,
    journal: Option<Vec<u8>>,
}

/// The image file at `image` (`None`: no run was kept yet) and the journal at `journal`.
fn read_files(image: &Path, journal: &Path) -> std::io::Result<Option<Files>> {
    use std::os::unix::fs::FileExt;
    let absent = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    let image = match std::fs::File::open(image) {
        Ok(image) => image,
        Err(e) if absent(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let image_len = image.metadata()?.len();
    let (mut digest, mut magic) = ([0u8; 32], [0u8; 8]);
    if image_len >= 32 {
        image.read_exact_at(&mut digest, image_len - 32)?;
        image.read_exact_at(&mut magic, 0)?;
    }
    let journal = match std::fs::read(journal) {
        Ok(bytes) => Some(bytes),
        Err(e) if absent(&e) => None,
        Err(e) => return Err(e),
    };
    Ok(Some(Files {
        image,
        image_len,
        digest,
        compressed: crate::HeapImage::is_compressed(&magic),
        journal,
    }))
}

/// Keep a successful run durably: a record of what it changed appended to the journal, or a
/// new image file once the journal is past its bound; the session is dropped from memory when
/// the write fails (not kept durably, so not kept: the next run wakes from the last saved
/// image). The write holds the session's slot (`guard`) to its end ([`held`]).
async fn keep(file: &Path, mut guard: Guard) -> Result<(), ApiError> {
    let Some(loaded) = guard.as_mut() else {
        return Err(internal("keeping a live session that is not loaded".into()));
    };
    let memory_size = loaded.live.memory_size();
    let was = loaded.journal;
    let kept = match was.full() {
        true => Kept::Image(loaded.live.image_for_journal()),
        false => {
            let (record, head) = loaded.live.journal_record(was.memory_size, &was.head);
            Kept::Record(record, head)
        }
    };
    let file = file.to_owned();
    held(async move {
        let journal = match kept {
            Kept::Image(image) => {
                let journal = Journal::after_image(&image, memory_size);
                save(&file, image).await.map(|()| journal)
            }
            Kept::Record(record, head) => {
                append(journal_file(&file), was, record)
                    .await
                    .map(|added| Journal {
                        head,
                        len: was.len + added,
                        memory_size,
                        ..was
                    })
            }
        };
        match (journal, guard.as_mut()) {
            (Ok(journal), Some(loaded)) => loaded.journal = journal,
            (Ok(_), None) => {}
            (Err(e), _) => {
                *guard = None;
                return Err(e);
            }
        }
        Ok(())
    })
    .await
}

/// What a successful run leaves to write: a new image file, or a journal record and the
/// digest the next record chains from.
enum Kept {
    Image(Vec<u8>),
    Record(Vec<u8>, [u8; 32]),
}

/// Append `record` to the journal at `path` (`was` says where it stands: a journal of no bytes
/// is written anew, its header first) and sync it; the bytes added. A write that fails is cut
/// back off, so that it cannot surface as a run that was never acknowledged.
async fn append(path: PathBuf, was: Journal, record: Vec<u8>) -> Result<u64, ApiError> {
    tokio::task::spawn_blocking(move || -> std::io::Result<u64> {
        use std::io::Write;
        if was.len == 0 {
            let mut bytes = crate::live::journal::header(&was.head);
            bytes.extend_from_slice(&record);
            let mut out = std::fs::File::create(&path)?;
            out.write_all(&bytes)?;
            out.sync_all()?;
            sync_folder(&path)?;
            return Ok(bytes.len() as u64);
        }
        let mut out = std::fs::OpenOptions::new().append(true).open(&path)?;
        let written = out.write_all(&record).and_then(|()| out.sync_data());
        if let Err(e) = written {
            let _ = out.set_len(was.len).and_then(|()| out.sync_data());
            return Err(e);
        }
        Ok(record.len() as u64)
    })
    .await
    .map_err(|e| internal(e.to_string()))?
    .map_err(|e| internal(format!("keeping a live session's journal: {e}")))
}

/// Cut the journal at `path` back to `len` bytes, durably.
async fn cut(path: PathBuf, len: u64) -> Result<(), ApiError> {
    tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        let out = std::fs::OpenOptions::new().write(true).open(&path)?;
        out.set_len(len)?;
        out.sync_all()
    })
    .await
    .map_err(|e| internal(e.to_string()))?
    .map_err(|e| internal(format!("cutting a live session's journal: {e}")))
}

/// Write `image` to `file` durably: a temporary file, synced, renamed over it, the journal of
/// the image before removed, the folder synced (so that neither the old image nor its journal
/// can come back). A heap file is never changed in place, so a fork may link to it.
async fn save(file: &Path, image: Vec<u8>) -> Result<(), ApiError> {
    let file = file.to_owned();
    tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        replace(&file, &image)?;
        match std::fs::remove_file(journal_file(&file)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        sync_folder(&file)
    })
    .await
    .map_err(|e| internal(e.to_string()))?
    .map_err(|e| internal(format!("keeping a live session's heap: {e}")))
}

/// Replace the heap file `file` (if any, and not compressed yet) by its compressed form,
/// durably, as [`save`] replaces one: a temporary file, synced, renamed over it, the folder
/// synced. A file that is not a heap file is left as it is (its wake refuses it).
fn compress_file(file: &Path) -> std::io::Result<()> {
    let bytes = match std::fs::read(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        read => read?,
    };
    // Refused: compressed already, or not a heap file.
    let Ok(packed) = crate::HeapImage::compress(&bytes) else {
        return Ok(());
    };
    replace(file, &packed)?;
    sync_folder(file)
}

/// Replace the heap file `file` by `bytes`: a temporary file (the one name every writer of the
/// session's files uses, each holding the session's slot), synced, then renamed over it. The
/// caller syncs the folder.
fn replace(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let temp = file.with_extension("img.tmp");
    let mut out = std::fs::File::create(&temp)?;
    out.write_all(bytes)?;
    out.sync_all()?;
    std::fs::rename(&temp, file)
}

/// Sync the folder that holds `file`, so that its new name is durable.
fn sync_folder(file: &Path) -> std::io::Result<()> {
    match file.parent() {
        Some(dir) => std::fs::File::open(dir)?.sync_all(),
        None => Ok(()),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::admission::Admission;
    use crate::serve::metrics::Metrics;
    use std::time::Duration;

    fn who(id: &str) -> Who<'_> {
        Who {
            tenant: "local",
            session: Some(id),
            app: None,
        }
    }

    fn step(source: &str) -> RunRequest {
        serde_json::from_value(serde_json::json!({ "source": source })).unwrap()
    }

    /// Sessions holding an instance.
    fn hot(heaps: &LiveHeaps) -> Vec<String> {
        let slots = heaps.slots.lock().unwrap();
        let mut out: Vec<String> = slots
            .iter()
            .filter(|(_, slot)| {
                let guard = slot.try_lock().expect("no turn under way");
                guard.as_ref().is_some_and(|loaded| loaded.live.is_hot())
            })
            .map(|(id, _)| id.clone())
            .collect();
        out.sort();
        out
    }

    /// With one hot session at most: `a`'s run waits for a run slot (holding its turn) while
    /// `b` is used, which skips cooling `a`; `a`'s run is then refused at admission
    /// (`capacity_exhausted`). Its turn's end counts `a` again, so `c`'s run cools it: one
    /// instance is held, not two.
    #[tokio::test]
    async fn a_session_skipped_while_its_turn_runs_is_cooled_later() {
        let dir = std::env::temp_dir().join(format!("palisade-live-heaps-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let file = |id: &str| {
            std::fs::create_dir_all(dir.join(id)).unwrap();
            dir.join(id).join("heap.img")
        };
        let (fa, fb, fc) = (file("a"), file("b"), file("c"));
        let palisade = crate::Palisade::builder().build().unwrap();
        // The refusal comes after 5 s, ample for `b`'s use to happen first on a loaded machine.
        let admission = Admission::new(1, Duration::from_secs(5));
        let runner = Runner::new(palisade, admission, Arc::new(Metrics::new()));
        let heaps = LiveHeaps::new(1);
        let policy = Policy::builtin_default();
        let run = async |id: &str, file: &Path, source: &str| {
            heaps
                .run(&runner, (id, file), &policy, &step(source), &who(id))
                .await
        };
        run("a", &fa, "let x = 1; x").await.unwrap();
        assert_eq!(hot(&heaps), ["a"]);
        let permit = runner.admit().await.unwrap();
        let (refused, ()) = tokio::join!(run("a", &fa, "x"), async {
            while heaps.slot("a").try_lock().is_ok() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            heaps.heap(&runner, ("b", &fb), &policy).await.unwrap();
        });
        assert_eq!(refused.err().unwrap().code(), "capacity_exhausted");
        drop(permit);
        run("c", &fc, "let y = 2; y").await.unwrap();
        assert_eq!(hot(&heaps), ["c"]);
        // `a` wakes from its file with its heap.
        run("a", &fa, "x + 1").await.unwrap();
        assert_eq!(hot(&heaps), ["a"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A hibernation that cannot write its compressed file (its temporary name taken by a
    /// folder here, a full disk in life) is `internal` and marked done until the session's
    /// next turn, as one that succeeds: the reaper does not read and compress the whole file
    /// again every round. The file stays plain, and the next run wakes from it and answers.
    #[tokio::test]
    async fn a_failed_hibernation_waits_for_the_next_turn() {
        let dir = std::env::temp_dir().join(format!("palisade-hibernate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("heap.img");
        let palisade = crate::Palisade::builder().build().unwrap();
        let admission = Admission::new(1, Duration::from_secs(60));
        let runner = Runner::new(palisade, admission, Arc::new(Metrics::new()));
        let heaps = LiveHeaps::new(1);
        let policy = Policy::builtin_default();
        let run = async |source: &str| {
            let stored = heaps
                .run(&runner, ("a", &file), &policy, &step(source), &who("a"))
                .await
                .unwrap();
            serde_json::from_str::<serde_json::Value>(&stored.body).unwrap()["output"].clone()
        };
        assert_eq!(run("globalThis.x = 1; x").await, 1);
        std::fs::create_dir(dir.join("heap.img.tmp")).unwrap();
        let failed = heaps.hibernate("a", &file).await.unwrap_err();
        assert_eq!(failed.code(), "internal");
        assert!(heaps.hibernated("a"), "not tried again at the next round");
        assert!(std::fs::read(&file).unwrap().starts_with(b"PALIHEAP"));
        assert_eq!(run("x + 1").await, 2);
        assert!(
            !heaps.hibernated("a"),
            "its next turn may hibernate it again"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
