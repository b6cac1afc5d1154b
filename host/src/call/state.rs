//! What one call's store holds: each capability's state, built from the policy, and the
//! linking of every import to its capability's view of it.

use super::stderr::StderrConsole;
use crate::Error;
use crate::audit::AuditLog;
use crate::caps::capability::{CapabilityState, CapabilityView, Handler};
use crate::caps::config::Config;
use crate::caps::console::Console;
use crate::caps::fs::{Files, FsState, Quotas};
use crate::caps::http::{HttpGate, RateLimiter};
use crate::caps::kv::{KvState, KvView};
use crate::kv::KvBackend;
use crate::limits::MemoryLimiter;
use crate::policy::Policy;
use crate::record::Tape;
use std::collections::HashMap;
use std::sync::Arc;
use wasmtime::component::{Linker, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// Everything one call's store holds.
pub(crate) struct CallState {
    pub(super) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) console: Console,
    pub(crate) capabilities: CapabilityState,
    pub(super) config: Config,
    pub(super) http_ctx: WasiHttpCtx,
    pub(crate) http: HttpGate,
    pub(crate) kv: KvState,
    /// The policy's directories: byte and file quotas, the scratch directory.
    pub(super) fs: Files,
    /// The call's cancel flag, when it was started with a handle.
    pub(super) cancel: Option<super::Cancel>,
    /// The operator's audit log, which gets the call's records when it ends.
    pub(super) audit_file: Option<Arc<crate::audit_file::AuditFile>>,
    /// Fields added to each of the call's lines in the audit log.
    pub(super) audit_tags: Arc<crate::audit_file::Tags>,
    /// Whether the call runs a standalone component (`palisade build`), whose console is its
    /// stderr and whose refused requests reach it as plain errors.
    pub(super) standalone: bool,
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.http,
        }
    }
}

/// What a call needs from the long-lived host besides its policy.
#[derive(Clone, Default)]
pub(crate) struct Shared {
    pub handlers: Arc<HashMap<String, Handler>>,
    /// The policy's request rate limiter, shared by every call under that policy.
    pub rate: Option<Arc<RateLimiter>>,
    /// The key-value store, when the policy has a `[kv]` table.
    pub kv: Option<Arc<dyn KvBackend>>,
    /// Recording or replaying the host's answers, if either.
    pub tape: Tape,
    /// Who is calling, for capability handlers.
    pub context: crate::CallContext,
    /// The embedder's callback for console lines and audit records as they are made.
    pub events: Option<crate::EventSink>,
    /// The call's cancel flag, when it was started with a handle.
    pub cancel: Option<super::Cancel>,
    /// Files placed in the scratch directory before the script runs.
    pub files: Arc<[(String, bytes::Bytes)]>,
    /// The operator's audit log, which gets the call's records when it ends.
    pub audit_file: Option<Arc<crate::audit_file::AuditFile>>,
    /// Fields added to each of the call's lines in the audit log.
    pub audit_tags: Arc<crate::audit_file::Tags>,
}

/// What a call gets from its [`RunOptions`](crate::RunOptions) besides its policy.
#[derive(Default)]
pub(crate) struct Extras {
    pub metadata: Option<Arc<serde_json::Value>>,
    pub events: Option<crate::EventSink>,
    pub cancel: Option<super::Cancel>,
    pub files: Arc<[(String, bytes::Bytes)]>,
    pub audit_tags: Arc<crate::audit_file::Tags>,
    /// Hold the call's key-value writes ([`crate::RunOptions::kv_transaction`]).
    pub kv_transaction: bool,
}

impl FsState for CallState {
    fn quotas(&mut self) -> &mut Quotas {
        &mut self.fs.quotas
    }
}

/// Link every import of the guest's world to the call's state: WASI (its file system wrapped
/// by the quota gate) and `wasi:http` through the network gate, then Palisade's own
/// interfaces and `wasi:config`, each to the view of its own capability.
pub(crate) fn link(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    crate::caps::fs::add_to_linker(linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)?;
    crate::caps::console::add_to_linker(linker, |s| &mut s.console)?;
    crate::caps::capability::add_to_linker(linker, |s| CapabilityView {
        state: &mut s.capabilities,
        table: &mut s.table,
        http: &mut s.http,
    })?;
    crate::caps::config::add_to_linker(linker, |s| &mut s.config)?;
    crate::caps::kv::add_to_linker(linker, |s| KvView {
        kv: &s.kv,
        table: &mut s.table,
    })
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl CallState {
    pub(crate) fn new(
        policy: &Policy,
        shared: Shared,
        stderr: Option<&StderrConsole>,
    ) -> Result<Self, Error> {
        // No arguments, environment, stdin or network: WASI here only carries the clocks and
        // randomness the language runtime needs and the policy's directories (and, for a
        // standalone component, the stderr its console lines are read from).
        let mut wasi = WasiCtxBuilder::new();
        wasi.allow_tcp(false).allow_udp(false);
        if let Some(stderr) = stderr {
            wasi.stderr(stderr.clone());
        }
        let tape = shared.tape;
        crate::caps::clock::configure(&mut wasi, policy.determinism(), &tape);
        let audit = AuditLog::new(policy);
        if let Some(events) = &shared.events {
            audit.stream_to(events.clone());
        }
        let fs = Files::open(policy, &shared.files, audit.clone(), &mut wasi)?;
        Ok(Self {
            wasi: wasi.build(),
            table: {
                let mut table = ResourceTable::new();
                table.set_max_capacity(crate::limits::MAX_HOST_RESOURCES);
                table
            },
            limiter: MemoryLimiter::new(policy.limits().memory.0),
            console: Console::new(policy.limits().console.0).stream_to(shared.events, || {
                crate::secrets::Secrets::from_policy(policy)
            }),
            capabilities: CapabilityState::new(
                policy,
                shared.handlers,
                audit.clone(),
                tape.clone(),
                shared.context,
            ),
            config: Config(policy.config().cloned()),
            http_ctx: WasiHttpCtx::new(),
            http: HttpGate::new(
                policy.http().cloned(),
                shared.rate,
                audit.clone(),
                tape.clone(),
            ),
            kv: KvState::new(policy.kv().cloned(), shared.kv, audit, tape),
            fs,
            cancel: shared.cancel,
            audit_file: shared.audit_file,
            audit_tags: shared.audit_tags,
            standalone: stderr.is_some(),
        })
    }
}
