//! The `wasi:filesystem` functions Palisade wraps, on top of wasmtime-wasi's: `open-at` opens
//! only regular files and directories (a FIFO would block a host thread, a device is no
//! file); those that add bytes (`write`, `write-via-stream`, `append-via-stream`, `set-size`)
//! or entries (`open-at` creating a file, `create-directory-at`, `link-at`) reserve them in
//! the directory's [`Quota`] first, and those that free them (`unlink-file-at`,
//! `remove-directory-at`, a shrinking `set-size`) give them back. Descriptors are traced to
//! their directory, and to their place below it, through `get-directories` and `open-at`; a
//! path deeper than [`super::usage::MAX_DEPTH`] levels or longer than `PATH_MAX` on the host
//! fails with `name-too-long`.

use super::FsState;
use super::account::Ask;
use super::quota::{Counted, Quota, Quotas, Traced};
use super::usage::Place;
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::WasiFilesystemView;
use wasmtime_wasi::p2::DynOutputStream;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self as fs, Descriptor, DescriptorFlags, DescriptorStat, DescriptorType, ErrorCode,
    HostDescriptor, OpenFlags, PathFlags,
};

const TYPES: &str = "wasi:filesystem/types@0.2.12";
const PREOPENS: &str = "wasi:filesystem/preopens@0.2.12";

type FsOut<T> = wasmtime::Result<(Result<T, ErrorCode>,)>;
/// The preopened directories and the guest path of each.
type Preopens = Vec<(Resource<Descriptor>, String)>;

/// The error code of a failed filesystem call, or a trap.
fn code<S: FsState>(
    state: &mut S,
    error: wasmtime_wasi::p2::FsError,
) -> wasmtime::Result<ErrorCode> {
    fs::Host::convert_error_code(&mut state.filesystem(), error)
}

/// The guest's form of a filesystem call's result: its value, or the error's code.
fn answer<S: FsState, T>(state: &mut S, result: Result<T, wasmtime_wasi::p2::FsError>) -> FsOut<T> {
    Ok((match result {
        Ok(value) => Ok(value),
        Err(e) => Err(code(state, e)?),
    },))
}

/// What is at `path` below `fd`, or the error code of looking.
async fn stat_at<S: FsState>(
    state: &mut S,
    fd: &Resource<Descriptor>,
    flags: PathFlags,
    path: &str,
) -> wasmtime::Result<Result<DescriptorStat, ErrorCode>> {
    let stat = HostDescriptor::stat_at(
        &mut state.filesystem(),
        Resource::new_borrow(fd.rep()),
        flags,
        path.to_owned(),
    )
    .await;
    Ok(match stat {
        Ok(stat) => Ok(stat),
        Err(e) => Err(code(state, e)?),
    })
}

/// The size of the file `fd` names.
async fn size_of<S: FsState>(
    state: &mut S,
    fd: &Resource<Descriptor>,
) -> wasmtime::Result<Result<u64, ErrorCode>> {
    let stat = HostDescriptor::stat(&mut state.filesystem(), Resource::new_borrow(fd.rep())).await;
    Ok(match stat {
        Ok(stat) => Ok(stat.size),
        Err(e) => Err(code(state, e)?),
    })
}

/// The bytes that removing this entry frees: a regular file's size, unless another name
/// still links to it.
fn freed_bytes(stat: &DescriptorStat) -> u64 {
    if stat.type_ == DescriptorType::RegularFile && stat.link_count <= 1 {
        stat.size
    } else {
        0
    }
}

/// Wrap a new stream of a quota'd descriptor, which writes from `position` of a file of
/// `size` bytes.
fn counted<S: FsState>(
    state: &mut S,
    stream: Resource<DynOutputStream>,
    quota: Option<Arc<Quota>>,
    position: u64,
    size: u64,
) -> wasmtime::Result<Resource<DynOutputStream>> {
    let Some(quota) = quota else {
        return Ok(stream);
    };
    let inner = state.ctx().table.delete(stream)?;
    Ok(state.ctx().table.push(Box::new(Counted {
        inner,
        quota,
        position,
        end: size,
    }) as DynOutputStream)?)
}

/// Only regular files and directories are opened through a mount: a FIFO would block the
/// opening thread until a writer comes (and keep the process from exiting), and a device or a
/// socket is no file to read.
fn openable(kind: DescriptorType) -> bool {
    matches!(
        kind,
        DescriptorType::RegularFile | DescriptorType::Directory | DescriptorType::SymbolicLink
    )
}

/// Link one `wasi:filesystem` function to an async fn of `(state, params)`.
macro_rules! wrap {
    ($instance:ident, $name:literal, $host:ident) => {
        $instance.func_wrap_async($name, |mut store, params| {
            Box::new(async move { $host(store.data_mut(), params).await })
        })?
    };
}

/// Replace the write paths of `wasi:filesystem` in `linker` with quota-checked ones, and its
/// `open-at` with one that refuses non-regular files. Call after the WASI functions were added.
pub(crate) fn add_to_linker<S: FsState>(linker: &mut Linker<S>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut preopens = linker.instance(PREOPENS)?;
    preopens.func_wrap("get-directories", |mut store, (): ()| {
        get_directories(store.data_mut())
    })?;
    let mut types = linker.instance(TYPES)?;
    wrap!(types, "[method]descriptor.open-at", open_at);
    wrap!(
        types,
        "[method]descriptor.write-via-stream",
        write_via_stream
    );
    wrap!(
        types,
        "[method]descriptor.append-via-stream",
        append_via_stream
    );
    wrap!(types, "[method]descriptor.write", write);
    wrap!(types, "[method]descriptor.set-size", set_size);
    wrap!(
        types,
        "[method]descriptor.create-directory-at",
        create_directory_at
    );
    wrap!(types, "[method]descriptor.symlink-at", symlink_at);
    wrap!(types, "[method]descriptor.unlink-file-at", unlink_file_at);
    wrap!(
        types,
        "[method]descriptor.remove-directory-at",
        remove_directory_at
    );
    wrap!(types, "[method]descriptor.rename-at", rename_at);
    wrap!(types, "[method]descriptor.link-at", link_at);
    linker.allow_shadowing(false);
    Ok(())
}

/// `get-directories`: the preopened directories, each traced to its quota (a mount without
/// one forgets what its handle number traced before).
fn get_directories<S: FsState>(state: &mut S) -> wasmtime::Result<(Preopens,)> {
    let dirs = fs_preopens(state)?;
    for (fd, guest) in &dirs {
        if let Some(quota) = state.quotas().by_guest.get(guest).cloned() {
            let traced = Traced {
                quota,
                place: Place::default(),
            };
            state.quotas().by_descriptor.insert(fd.rep(), traced);
        } else {
            state.quotas().by_descriptor.remove(&fd.rep());
        }
    }
    Ok((dirs,))
}

/// `open-at`: only a regular file, a directory or a link (audited when refused); a new file
/// takes one entry of the quota, and the opened descriptor is traced to its place.
async fn open_at<S: FsState>(
    state: &mut S,
    (fd, path_flags, path, oflags, flags): (
        Resource<Descriptor>,
        PathFlags,
        String,
        OpenFlags,
        DescriptorFlags,
    ),
) -> FsOut<Resource<Descriptor>> {
    let traced = state.quotas().traced(&fd);
    let existing = stat_at(state, &fd, path_flags, &path).await?;
    if let Ok(stat) = &existing
        && !openable(stat.type_)
    {
        let reason = format!(
            "{path} is not a regular file or directory ({:?})",
            stat.type_
        );
        let refusal = super::refusal("fs.mount", reason, None);
        state.quotas().audit.deny(refusal, Instant::now(), 0);
        return Ok((Err(ErrorCode::Access),));
    }
    let place = traced.as_ref().and_then(|t| t.place.join(&path));
    if traced.is_some() && place.is_none() {
        // Above the directory's root (cap-std refuses it too): never untraced.
        return Ok((Err(ErrorCode::NotPermitted),));
    }
    let creates = oflags.contains(OpenFlags::CREATE) && matches!(existing, Err(ErrorCode::NoEntry));
    let created = match reserve_created(traced.as_ref(), place.as_ref(), creates) {
        Ok(created) => created,
        Err(e) => return Ok((Err(e),)),
    };
    let opened =
        HostDescriptor::open_at(&mut state.filesystem(), fd, path_flags, path, oflags, flags).await;
    match &opened {
        Ok(child) => {
            let truncated = existing
                .ok()
                .filter(|_| oflags.contains(OpenFlags::TRUNCATE));
            trace_opened(state, child, traced.zip(place), truncated.as_ref());
        }
        Err(_) => {
            if let Some(quota) = created {
                quota.release(0, 1);
            }
        }
    }
    answer(state, opened)
}

/// A new name below a traced directory: one more file, at a place that is not too deep.
/// Returns the quota charged, to give back if the open fails.
fn reserve_created(
    traced: Option<&Traced>,
    place: Option<&Place>,
    creates: bool,
) -> Result<Option<Arc<Quota>>, ErrorCode> {
    match traced {
        Some(t) if creates => {
            if t.quota.refuse_place(place) {
                return Err(ErrorCode::NameTooLong);
            }
            if !t.quota.reserve(Ask { bytes: 0, files: 1 }) {
                return Err(ErrorCode::InsufficientSpace);
            }
            Ok(Some(t.quota.clone()))
        }
        _ => Ok(None),
    }
}

/// Trace an opened descriptor to its directory's quota and its place there (a truncated
/// file gives its bytes back), or forget what its handle number traced before.
fn trace_opened<S: FsState>(
    state: &mut S,
    child: &Resource<Descriptor>,
    at: Option<(Traced, Place)>,
    truncated: Option<&DescriptorStat>,
) {
    match at {
        Some((t, place)) => {
            if let Some(stat) = truncated {
                t.quota.release(freed_bytes(stat), 0);
            }
            let traced = Traced {
                quota: t.quota,
                place,
            };
            state.quotas().by_descriptor.insert(child.rep(), traced);
        }
        None => {
            state.quotas().by_descriptor.remove(&child.rep());
        }
    }
}

/// The size of the file a new stream writes to, when it has a quota (0 when not).
async fn size_if_counted<S: FsState>(
    state: &mut S,
    fd: &Resource<Descriptor>,
    quota: Option<&Arc<Quota>>,
) -> wasmtime::Result<Result<u64, ErrorCode>> {
    match quota {
        Some(_) => size_of(state, fd).await,
        None => Ok(Ok(0)),
    }
}

/// `write-via-stream`: a stream that reserves the bytes it adds past the file's end.
async fn write_via_stream<S: FsState>(
    state: &mut S,
    (fd, offset): (Resource<Descriptor>, u64),
) -> FsOut<Resource<DynOutputStream>> {
    let quota = state.quotas().of(&fd);
    let size = match size_if_counted(state, &fd, quota.as_ref()).await? {
        Ok(size) => size,
        Err(e) => return Ok((Err(e),)),
    };
    match HostDescriptor::write_via_stream(&mut state.filesystem(), fd, offset) {
        Ok(stream) => Ok((Ok(counted(state, stream, quota, offset, size)?),)),
        Err(e) => Ok((Err(code(state, e)?),)),
    }
}

/// `append-via-stream`: a stream from the file's end that reserves every byte it adds.
async fn append_via_stream<S: FsState>(
    state: &mut S,
    (fd,): (Resource<Descriptor>,),
) -> FsOut<Resource<DynOutputStream>> {
    let quota = state.quotas().of(&fd);
    let size = match size_if_counted(state, &fd, quota.as_ref()).await? {
        Ok(size) => size,
        Err(e) => return Ok((Err(e),)),
    };
    match HostDescriptor::append_via_stream(&mut state.filesystem(), fd) {
        Ok(stream) => Ok((Ok(counted(state, stream, quota, size, size)?),)),
        Err(e) => Ok((Err(code(state, e)?),)),
    }
}

/// `write`: reserve what a write past the end grows the file by (given back if it fails).
async fn write<S: FsState>(
    state: &mut S,
    (fd, buffer, offset): (Resource<Descriptor>, Vec<u8>, u64),
) -> FsOut<u64> {
    let mut reserved = None;
    if let Some(quota) = state.quotas().of(&fd) {
        // A write past the end grows the file to offset + length.
        let size = match size_of(state, &fd).await? {
            Ok(size) => size,
            Err(e) => return Ok((Err(e),)),
        };
        let end = offset.saturating_add(buffer.len() as u64);
        let grows = end.saturating_sub(size);
        if !quota.reserve_bytes(grows) {
            return Ok((Err(ErrorCode::InsufficientSpace),));
        }
        reserved = Some((quota, grows));
    }
    let written = HostDescriptor::write(&mut state.filesystem(), fd, buffer, offset).await;
    if written.is_err()
        && let Some((quota, grows)) = reserved
    {
        quota.release(grows, 0);
    }
    answer(state, written)
}

/// `set-size`: a larger size reserves the growth, a smaller one gives bytes back.
async fn set_size<S: FsState>(state: &mut S, (fd, size): (Resource<Descriptor>, u64)) -> FsOut<()> {
    let quota = state.quotas().of(&fd);
    let mut current = 0;
    if let Some(quota) = &quota {
        current = match size_of(state, &fd).await? {
            Ok(size) => size,
            Err(e) => return Ok((Err(e),)),
        };
        if !quota.reserve_bytes(size.saturating_sub(current)) {
            return Ok((Err(ErrorCode::InsufficientSpace),));
        }
    }
    let done = HostDescriptor::set_size(&mut state.filesystem(), fd, size).await;
    if let Some(quota) = &quota {
        match &done {
            Ok(()) => quota.release(current.saturating_sub(size), 0),
            Err(_) => quota.release(size.saturating_sub(current), 0),
        }
    }
    answer(state, done)
}

/// `create-directory-at`: one more entry of the quota, at a place that is not too deep.
async fn create_directory_at<S: FsState>(
    state: &mut S,
    (fd, path): (Resource<Descriptor>, String),
) -> FsOut<()> {
    let quota = state.quotas().of(&fd);
    if let Some(quota) = &quota {
        if state.quotas().too_deep(&fd, &path) {
            return Ok((Err(ErrorCode::NameTooLong),));
        }
        if !quota.reserve(Ask { bytes: 0, files: 1 }) {
            return Ok((Err(ErrorCode::InsufficientSpace),));
        }
    }
    let done = HostDescriptor::create_directory_at(&mut state.filesystem(), fd, path).await;
    if done.is_err()
        && let Some(quota) = &quota
    {
        quota.release(0, 1);
    }
    answer(state, done)
}

/// `symlink-at`: refused below a quota'd directory. A link made by the script could point
/// anywhere in the tree and make a path deeper than the places traced here; the `fs` global
/// makes none.
async fn symlink_at<S: FsState>(
    state: &mut S,
    (fd, old, new): (Resource<Descriptor>, String, String),
) -> FsOut<()> {
    if state.quotas().of(&fd).is_some() {
        return Ok((Err(ErrorCode::NotPermitted),));
    }
    let done = HostDescriptor::symlink_at(&mut state.filesystem(), fd, old, new).await;
    answer(state, done)
}

/// `unlink-file-at`: the file's entry and, unless another name links to it, its bytes go
/// back to the quota.
async fn unlink_file_at<S: FsState>(
    state: &mut S,
    (fd, path): (Resource<Descriptor>, String),
) -> FsOut<()> {
    let quota = state.quotas().of(&fd);
    let freed = match &quota {
        Some(_) => stat_at(state, &fd, PathFlags::empty(), &path)
            .await?
            .ok()
            .map(|stat| freed_bytes(&stat)),
        None => None,
    };
    let done = HostDescriptor::unlink_file_at(&mut state.filesystem(), fd, path).await;
    if done.is_ok()
        && let (Some(quota), Some(bytes)) = (quota, freed)
    {
        quota.release(bytes, 1);
    }
    answer(state, done)
}

/// `remove-directory-at`: the directory's entry goes back to the quota.
async fn remove_directory_at<S: FsState>(
    state: &mut S,
    (fd, path): (Resource<Descriptor>, String),
) -> FsOut<()> {
    let quota = state.quotas().of(&fd);
    let done = HostDescriptor::remove_directory_at(&mut state.filesystem(), fd, path).await;
    if done.is_ok()
        && let Some(quota) = quota
    {
        quota.release(0, 1);
    }
    answer(state, done)
}

/// `rename-at`. Moving a file between directories with different quotas would move bytes
/// past the destination's quota: refused as a cross-device move (`EXDEV`), which programs
/// answer by copying. Within one quota, a directory may not move deeper or to a longer path
/// (its subtree would go past the depth checked when it was made).
async fn rename_at<S: FsState>(
    state: &mut S,
    (fd, old, new_fd, new): (Resource<Descriptor>, String, Resource<Descriptor>, String),
) -> FsOut<()> {
    if !same_quota(state.quotas(), &fd, &new_fd) {
        return Ok((Err(ErrorCode::CrossDevice),));
    }
    if let (Some(from), Some(to)) = (state.quotas().traced(&fd), state.quotas().traced(&new_fd)) {
        if to.quota.refuse_place(to.place.join(&new).as_ref()) {
            return Ok((Err(ErrorCode::NameTooLong),));
        }
        let moves_dir = matches!(
            stat_at(state, &fd, PathFlags::empty(), &old).await?,
            Ok(stat) if stat.type_ == DescriptorType::Directory
        );
        let (old_place, new_place) = (from.place.join(&old), to.place.join(&new));
        let deeper = match (old_place, new_place) {
            (Some(a), Some(b)) => b.depth() > a.depth() || b.len() > a.len(),
            _ => true,
        };
        if moves_dir && deeper {
            return Ok((Err(ErrorCode::NameTooLong),));
        }
    }
    let done = HostDescriptor::rename_at(&mut state.filesystem(), fd, old, new_fd, new).await;
    answer(state, done)
}

/// `link-at`: one more entry of the destination's quota, at a place that is not too deep;
/// refused between quotas as `rename-at` is.
async fn link_at<S: FsState>(
    state: &mut S,
    (fd, flags, old, new_fd, new): (
        Resource<Descriptor>,
        PathFlags,
        String,
        Resource<Descriptor>,
        String,
    ),
) -> FsOut<()> {
    if !same_quota(state.quotas(), &fd, &new_fd) {
        return Ok((Err(ErrorCode::CrossDevice),));
    }
    let quota = state.quotas().of(&new_fd);
    if let Some(quota) = &quota {
        if state.quotas().too_deep(&new_fd, &new) {
            return Ok((Err(ErrorCode::NameTooLong),));
        }
        if !quota.reserve(Ask { bytes: 0, files: 1 }) {
            return Ok((Err(ErrorCode::InsufficientSpace),));
        }
    }
    let done = HostDescriptor::link_at(&mut state.filesystem(), fd, flags, old, new_fd, new).await;
    if done.is_err()
        && let Some(quota) = &quota
    {
        quota.release(0, 1);
    }
    answer(state, done)
}

/// Whether two descriptors write to the same quota (or both to none).
fn same_quota(quotas: &Quotas, a: &Resource<Descriptor>, b: &Resource<Descriptor>) -> bool {
    match (quotas.of(a), quotas.of(b)) {
        (None, None) => true,
        (Some(x), Some(y)) => Arc::ptr_eq(&x, &y),
        _ => false,
    }
}

fn fs_preopens<S: FsState>(state: &mut S) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
    wasmtime_wasi::p2::bindings::filesystem::preopens::Host::get_directories(
        &mut state.filesystem(),
    )
}
