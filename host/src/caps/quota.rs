//! Byte quotas for writable directories (`rw` mounts and the scratch directory), enforced on
//! the host by wrapping the `wasi:filesystem` functions that add bytes: `write`,
//! `write-via-stream`, `append-via-stream` and `set-size`. Descriptors are traced to their
//! directory through `get-directories` and `open-at`.
//!
//! A directory's usage is measured (a walk of its files) at its first write in a call; after
//! that every byte written counts, overwrites included (a conservative count), and removals
//! free space only for later calls. A write that would pass the quota fails with
//! `insufficient-space` (`ENOSPC` for the script) and writes nothing.

use crate::Fix;
use crate::audit::AuditLog;
use crate::call::CallState;
use crate::policy::ByteSize;
use bytes::Bytes;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::WasiFilesystemView;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self as fs, Descriptor, DescriptorFlags, DescriptorType, ErrorCode, HostDescriptor, OpenFlags,
    PathFlags,
};
use wasmtime_wasi::p2::{DynOutputStream, OutputStream, Pollable, StreamError, StreamResult};

/// One writable directory's quota.
pub(crate) struct Quota {
    host: PathBuf,
    guest: String,
    /// The policy key that sets it, such as `fs.scratch.quota`.
    rule: String,
    audit: AuditLog,
    limit: u64,
    /// Usage at the first write of the call, then every byte written since.
    used: OnceLock<AtomicU64>,
}

impl Quota {
    fn used(&self) -> &AtomicU64 {
        self.used.get_or_init(|| AtomicU64::new(usage(&self.host)))
    }

    /// Reserve `bytes`; false (and nothing reserved, and the refusal recorded under the
    /// target `fs`) when that would pass the limit.
    fn reserve(&self, bytes: u64) -> bool {
        let reserved = self
            .used()
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.limit)
            });
        let Err(used) = reserved else {
            return true;
        };
        let needed = used.saturating_add(bytes);
        let reason = format!(
            "{} holds {used} bytes; {bytes} more would pass its {} quota",
            self.guest,
            ByteSize(self.limit)
        );
        let fix = (needed <= 1 << 40).then(|| Fix {
            key: self.rule.clone(),
            value: format!("\"{}\"", ByteSize(needed.next_power_of_two())),
        });
        self.audit
            .deny_target("fs", "fs", "fs", &self.rule, &reason, fix, Instant::now());
        false
    }
}

/// Bytes in the files under `dir`, not following links. Iterative: a script can make the tree
/// deep, and this runs on the call's fiber stack. A part of the tree that cannot be measured
/// (a path too long to open) makes the directory count as full: the quota fails closed.
fn usage(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return u64::MAX;
        };
        for entry in entries {
            let Ok(entry) = entry else {
                return u64::MAX;
            };
            match entry.file_type() {
                Ok(t) if t.is_dir() => pending.push(entry.path()),
                Ok(t) if t.is_file() => match entry.metadata() {
                    Ok(m) => total = total.saturating_add(m.len()),
                    Err(_) => return u64::MAX,
                },
                Ok(_) => {}
                Err(_) => return u64::MAX,
            }
        }
    }
    total
}

/// The call's quotas by guest path, and which quota each open descriptor writes to.
pub(crate) struct Quotas {
    audit: AuditLog,
    by_guest: HashMap<String, Arc<Quota>>,
    by_descriptor: HashMap<u32, Arc<Quota>>,
}

impl Quotas {
    pub fn new(audit: AuditLog) -> Self {
        Self {
            audit,
            by_guest: HashMap::new(),
            by_descriptor: HashMap::new(),
        }
    }

    pub fn add(&mut self, guest: &str, host: &Path, limit: u64, rule: String) {
        self.by_guest.insert(
            guest.to_owned(),
            Arc::new(Quota {
                host: host.to_path_buf(),
                guest: guest.to_owned(),
                rule,
                audit: self.audit.clone(),
                limit,
                used: OnceLock::new(),
            }),
        );
    }

    fn of(&self, fd: &Resource<Descriptor>) -> Option<Arc<Quota>> {
        self.by_descriptor.get(&fd.rep()).cloned()
    }
}

/// An output stream that counts its bytes against a quota.
struct Counted {
    inner: DynOutputStream,
    quota: Arc<Quota>,
}

fn no_space() -> StreamError {
    // ENOSPC: wasmtime-wasi reports it to the guest as `insufficient-space`.
    StreamError::LastOperationFailed(std::io::Error::from_raw_os_error(28).into())
}

#[wasmtime_wasi::async_trait]
impl Pollable for Counted {
    async fn ready(&mut self) {
        self.inner.ready().await;
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for Counted {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        if !self.quota.reserve(bytes.len() as u64) {
            return Err(no_space());
        }
        self.inner.write(bytes)
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.inner.check_write()
    }
}

const TYPES: &str = "wasi:filesystem/types@0.2.12";
const PREOPENS: &str = "wasi:filesystem/preopens@0.2.12";

type FsOut<T> = wasmtime::Result<(Result<T, ErrorCode>,)>;

/// The error code of a failed filesystem call, or a trap.
fn code(state: &mut CallState, error: wasmtime_wasi::p2::FsError) -> wasmtime::Result<ErrorCode> {
    fs::Host::convert_error_code(&mut state.filesystem(), error)
}

/// Wrap a new stream of a quota'd descriptor.
fn counted(
    state: &mut CallState,
    stream: Resource<DynOutputStream>,
    quota: Option<Arc<Quota>>,
) -> wasmtime::Result<Resource<DynOutputStream>> {
    let Some(quota) = quota else {
        return Ok(stream);
    };
    let inner = state.table.delete(stream)?;
    Ok(state
        .table
        .push(Box::new(Counted { inner, quota }) as DynOutputStream)?)
}

/// Replace the write paths of `wasi:filesystem` in `linker` with quota-checked ones. Call after
/// the WASI functions were added.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut preopens = linker.instance(PREOPENS)?;
    preopens.func_wrap("get-directories", |mut store, (): ()| {
        let state = store.data_mut();
        let dirs = fs_preopens(state)?;
        for (fd, guest) in &dirs {
            if let Some(quota) = state.quotas.by_guest.get(guest).cloned() {
                state.quotas.by_descriptor.insert(fd.rep(), quota);
            } else {
                state.quotas.by_descriptor.remove(&fd.rep());
            }
        }
        Ok((dirs,))
    })?;
    let mut types = linker.instance(TYPES)?;
    types.func_wrap_async(
        "[method]descriptor.open-at",
        |mut store,
         (fd, path_flags, path, oflags, flags): (
            Resource<Descriptor>,
            PathFlags,
            String,
            OpenFlags,
            DescriptorFlags,
        )| {
            Box::new(async move {
                let state = store.data_mut();
                let quota = state.quotas.of(&fd);
                // Only regular files and directories are opened: a FIFO would block the
                // opening thread until a writer comes (and keep the process from exiting), and
                // a device or a socket is no file to read.
                let kind = HostDescriptor::stat_at(
                    &mut state.filesystem(),
                    Resource::new_borrow(fd.rep()),
                    path_flags,
                    path.clone(),
                )
                .await
                .map(|stat| stat.type_);
                if let Ok(kind) = kind
                    && !matches!(
                        kind,
                        DescriptorType::RegularFile
                            | DescriptorType::Directory
                            | DescriptorType::SymbolicLink
                    )
                {
                    state.quotas.audit.deny_target(
                        "fs",
                        "fs",
                        "fs",
                        "fs.mount",
                        &format!("{path} is not a regular file or directory ({kind:?})"),
                        None,
                        Instant::now(),
                    );
                    return Ok((Err(ErrorCode::Access),));
                }
                let opened = HostDescriptor::open_at(
                    &mut state.filesystem(),
                    fd,
                    path_flags,
                    path,
                    oflags,
                    flags,
                )
                .await;
                Ok((match opened {
                    Ok(child) => {
                        match quota {
                            Some(q) => state.quotas.by_descriptor.insert(child.rep(), q),
                            None => state.quotas.by_descriptor.remove(&child.rep()),
                        };
                        Ok(child)
                    }
                    Err(e) => Err(code(state, e)?),
                },))
            })
        },
    )?;
    types.func_wrap(
        "[method]descriptor.write-via-stream",
        |mut store,
         (fd, offset): (Resource<Descriptor>, u64)|
         -> FsOut<Resource<DynOutputStream>> {
            let state = store.data_mut();
            let quota = state.quotas.of(&fd);
            match HostDescriptor::write_via_stream(&mut state.filesystem(), fd, offset) {
                Ok(stream) => Ok((Ok(counted(state, stream, quota)?),)),
                Err(e) => Ok((Err(code(state, e)?),)),
            }
        },
    )?;
    types.func_wrap(
        "[method]descriptor.append-via-stream",
        |mut store, (fd,): (Resource<Descriptor>,)| -> FsOut<Resource<DynOutputStream>> {
            let state = store.data_mut();
            let quota = state.quotas.of(&fd);
            match HostDescriptor::append_via_stream(&mut state.filesystem(), fd) {
                Ok(stream) => Ok((Ok(counted(state, stream, quota)?),)),
                Err(e) => Ok((Err(code(state, e)?),)),
            }
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.write",
        |mut store, (fd, buffer, offset): (Resource<Descriptor>, Vec<u8>, u64)| {
            Box::new(async move {
                let state = store.data_mut();
                if let Some(quota) = state.quotas.of(&fd) {
                    // A write past the end grows the file to offset + length.
                    let size = match HostDescriptor::stat(
                        &mut state.filesystem(),
                        Resource::new_borrow(fd.rep()),
                    )
                    .await
                    {
                        Ok(stat) => stat.size,
                        Err(e) => return Ok((Err(code(state, e)?),)),
                    };
                    let end = offset.saturating_add(buffer.len() as u64);
                    let bytes = end.saturating_sub(size).max(buffer.len() as u64);
                    if !quota.reserve(bytes) {
                        return Ok((Err(ErrorCode::InsufficientSpace),));
                    }
                }
                let written =
                    HostDescriptor::write(&mut state.filesystem(), fd, buffer, offset).await;
                Ok((match written {
                    Ok(n) => Ok(n),
                    Err(e) => Err(code(state, e)?),
                },))
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.set-size",
        |mut store, (fd, size): (Resource<Descriptor>, u64)| {
            Box::new(async move {
                let state = store.data_mut();
                if let Some(quota) = state.quotas.of(&fd) {
                    let current = match HostDescriptor::stat(
                        &mut state.filesystem(),
                        Resource::new_borrow(fd.rep()),
                    )
                    .await
                    {
                        Ok(stat) => stat.size,
                        Err(e) => return Ok((Err(code(state, e)?),)),
                    };
                    if size > current && !quota.reserve(size - current) {
                        return Ok((Err(ErrorCode::InsufficientSpace),));
                    }
                }
                let done = HostDescriptor::set_size(&mut state.filesystem(), fd, size).await;
                Ok((match done {
                    Ok(()) => Ok(()),
                    Err(e) => Err(code(state, e)?),
                },))
            })
        },
    )?;
    // Moving or linking a file between directories with different quotas would move bytes past
    // the destination's quota: refused as a cross-device move (`EXDEV`), which programs answer
    // by copying.
    types.func_wrap_async(
        "[method]descriptor.rename-at",
        |mut store, (fd, old, new_fd, new): (Resource<Descriptor>, String, Resource<Descriptor>, String)| {
            Box::new(async move {
                let state = store.data_mut();
                if !same_quota(&state.quotas, &fd, &new_fd) {
                    return Ok((Err(ErrorCode::CrossDevice),));
                }
                let done =
                    HostDescriptor::rename_at(&mut state.filesystem(), fd, old, new_fd, new).await;
                Ok((match done {
                    Ok(()) => Ok(()),
                    Err(e) => Err(code(state, e)?),
                },))
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.link-at",
        |mut store,
         (fd, flags, old, new_fd, new): (
            Resource<Descriptor>,
            PathFlags,
            String,
            Resource<Descriptor>,
            String,
        )| {
            Box::new(async move {
                let state = store.data_mut();
                if !same_quota(&state.quotas, &fd, &new_fd) {
                    return Ok((Err(ErrorCode::CrossDevice),));
                }
                let done =
                    HostDescriptor::link_at(&mut state.filesystem(), fd, flags, old, new_fd, new)
                        .await;
                Ok((match done {
                    Ok(()) => Ok(()),
                    Err(e) => Err(code(state, e)?),
                },))
            })
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Whether two descriptors write to the same quota (or both to none).
fn same_quota(quotas: &Quotas, a: &Resource<Descriptor>, b: &Resource<Descriptor>) -> bool {
    match (quotas.of(a), quotas.of(b)) {
        (None, None) => true,
        (Some(x), Some(y)) => Arc::ptr_eq(&x, &y),
        _ => false,
    }
}

fn fs_preopens(state: &mut CallState) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
    wasmtime_wasi::p2::bindings::filesystem::preopens::Host::get_directories(
        &mut state.filesystem(),
    )
}
