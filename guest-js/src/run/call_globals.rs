//! The globals a call gets from its policy: installed for each call, reserved while a
//! compiled script's top level is preloaded.

use crate::exports::palisade::sandbox::runner::Environment;
use crate::globals;
use javy::quickjs::Ctx;

/// A global that a call gets from its policy.
enum CallGlobal<'e> {
    Fs,
    Config,
    Kv { bucket: &'e str },
    Bridge { name: &'e str },
}

impl CallGlobal<'_> {
    fn name(&self) -> &str {
        match self {
            CallGlobal::Fs => "fs",
            CallGlobal::Config => "config",
            CallGlobal::Kv { .. } => "kv",
            CallGlobal::Bridge { name } => name,
        }
    }
}

/// Visit the globals a call under `env` gets, in the order they are installed (a bridge may be
/// named like another of them, which it then replaces).
fn each_call_global<'e, E>(
    env: &'e Environment,
    mut visit: impl FnMut(CallGlobal<'e>) -> Result<(), E>,
) -> Result<(), E> {
    if env.fs {
        visit(CallGlobal::Fs)?;
    }
    if env.config {
        visit(CallGlobal::Config)?;
    }
    if let Some(bucket) = &env.kv_bucket {
        visit(CallGlobal::Kv { bucket })?;
    }
    if let Some(name) = &env.bridge_global {
        visit(CallGlobal::Bridge { name })?;
    }
    Ok(())
}

/// Install the globals the call's policy grants.
pub(super) fn install_call_globals(cx: &Ctx<'_>, env: &Environment) -> javy::quickjs::Result<()> {
    each_call_global(env, |global| match global {
        CallGlobal::Fs => globals::fs::install(cx),
        CallGlobal::Config => globals::config::install(cx),
        CallGlobal::Kv { bucket } => globals::kv::install(cx, bucket),
        CallGlobal::Bridge { name } => globals::bridge::install(cx, name),
    })
}

/// The names of the globals `install_call_globals` defines for `env`, each once.
pub(super) fn call_global_names(env: &Environment) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let _ = each_call_global(env, |global| {
        if !names.iter().any(|n| n == global.name()) {
            names.push(global.name().to_owned());
        }
        Ok::<(), std::convert::Infallible>(())
    });
    names
}
