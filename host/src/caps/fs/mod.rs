//! The file-system gate (`[fs]`): the policy's mounts and the call's scratch directory as
//! WASI preopens, and the byte and file quotas of the writable ones, checked where
//! `wasi:filesystem` adds or frees bytes and entries ([`files`]).

mod account;
mod files;
mod quota;
pub(crate) mod scratch;
mod usage;

pub(crate) use files::add_to_linker;
pub(crate) use quota::Quotas;
// The session file operations of `palisade serve` meet the same account and depth limit.
#[cfg(feature = "serve")]
pub(crate) use account::{Account, Ask, Limits as AccountLimits};
#[cfg(feature = "serve")]
pub(crate) use usage::MAX_DEPTH;

use crate::audit::AuditLog;
use crate::caps::gate::{Capability, Refusal};
use crate::policy::{MountMode, Policy};
use crate::{Error, Fix, PolicyError};
use account::{Limits as QuotaLimits, Usage};
use scratch::ScratchDir;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder, WasiView};

/// A refusal of the file-system gate: the guest looks it up under the target `fs`.
pub(crate) fn refusal(rule: impl Into<String>, reason: String, fix: Option<Fix>) -> Refusal {
    Refusal::new(Capability::Fs, "fs", rule, reason, fix)
}

/// What the file-system gate reaches of a call's state: WASI's file system (its descriptors
/// and resource table) and the quotas of the writable directories.
pub(crate) trait FsState: WasiView + 'static {
    fn quotas(&mut self) -> &mut Quotas;
}

/// A call's directories: the quotas of the writable ones, and its scratch directory, removed
/// when the call's state is dropped.
pub(crate) struct Files {
    pub quotas: Quotas,
    _scratch: Option<ScratchDir>,
}

impl Files {
    /// Preopen the policy's mounts and a fresh scratch directory in `wasi`, with their quotas.
    pub fn open(
        policy: &Policy,
        files: &[(String, bytes::Bytes)],
        audit: AuditLog,
        wasi: &mut WasiCtxBuilder,
    ) -> Result<Self, Error> {
        let mut quotas = Quotas::new(audit);
        mount(policy, &mut quotas, wasi)?;
        let scratch = scratch(policy, files, &mut quotas, wasi)?;
        Ok(Self {
            quotas,
            _scratch: scratch,
        })
    }
}

/// Preopen each of the policy's mounts, and count the writable ones against their quotas.
fn mount(policy: &Policy, quotas: &mut Quotas, wasi: &mut WasiCtxBuilder) -> Result<(), Error> {
    for (i, mount) in policy
        .fs()
        .map_or(&[][..], |fs| &fs.mount)
        .iter()
        .enumerate()
    {
        if let Some(quota) = mount.quota {
            let max_files = mount.max_files.unwrap_or(crate::policy::DEFAULT_MAX_FILES);
            quotas.add(
                &mount.guest,
                &mount.host,
                QuotaLimits {
                    bytes: quota.0,
                    files: max_files,
                    table: format!("fs.mount[{i}]"),
                },
                Usage::of_mount(&mount.host, max_files),
            );
        }
        let perms = match mount.mode {
            MountMode::Ro => FsPerms::ReadOnly,
            MountMode::Rw => FsPerms::ReadWrite,
        };
        wasi.preopened_dir(&mount.host, &mount.guest, perms)
            .map_err(|e| {
                Error::InvalidPolicy(PolicyError {
                    file: None,
                    key: "fs.mount".into(),
                    line: None,
                    column: None,
                    message: format!(
                        "cannot open {} for {}: {e:#}",
                        mount.host.display(),
                        mount.guest
                    ),
                })
            })?;
    }
    Ok(())
}

/// Create, seed and preopen the call's scratch directory, if the policy has one.
fn scratch(
    policy: &Policy,
    files: &[(String, bytes::Bytes)],
    quotas: &mut Quotas,
    wasi: &mut WasiCtxBuilder,
) -> Result<Option<ScratchDir>, Error> {
    Ok(match policy.fs().and_then(|fs| fs.scratch.as_ref()) {
        Some(spec) => {
            // A seed that cannot be copied (it changed since the policy was loaded) is
            // the policy's to fix, and the caller is told which and why.
            let (dir, mut seeded) =
                ScratchDir::create(&spec.seed, spec.max_files).map_err(|e| {
                    let key = match e.index {
                        usize::MAX => "fs.scratch".to_owned(),
                        i => format!("fs.scratch.seed[{i}]"),
                    };
                    Error::InvalidPolicy(PolicyError {
                        file: None,
                        key,
                        line: None,
                        column: None,
                        message: e.message,
                    })
                })?;
            // The call's own files (`RunOptions::file`, names checked there), with the seed
            // within the quota.
            for (name, contents) in files {
                seeded.bytes += contents.len() as u64;
                seeded.files += 1;
                if seeded.bytes > spec.quota.0 || seeded.files > spec.max_files {
                    return Err(Error::InvalidInput {
                        detail: format!(
                            "the call's files and the seed need {} bytes in {} files, over the \
                             scratch directory's quota of {} in {} files",
                            seeded.bytes, seeded.files, spec.quota, spec.max_files
                        ),
                        fix: None,
                    });
                }
                std::fs::write(dir.path().join(name), contents).map_err(|e| Error::Internal {
                    detail: format!("cannot place {name} in the scratch directory: {e}"),
                })?;
            }
            quotas.add(
                &spec.guest,
                dir.path(),
                QuotaLimits {
                    bytes: spec.quota.0,
                    files: spec.max_files,
                    table: "fs.scratch".into(),
                },
                Usage::known(seeded.bytes, seeded.files),
            );
            wasi.preopened_dir(dir.path(), &spec.guest, FsPerms::ReadWrite)
                .map_err(|e| Error::Internal {
                    detail: format!("cannot open the scratch directory: {e:#}"),
                })?;
            Some(dir)
        }
        None => None,
    })
}
