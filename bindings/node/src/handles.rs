//! A policy and a script read once and used by many calls (`new Policy(spec)`,
//! `Script.fromSource`, `Script.fromFile`, `Script.fromComponent`), each held under a key of
//! its own by which a call names it ([`held`]).

use crate::errors::{library, refused};
use napi::Env;
use napi::bindgen_prelude::{Buffer, ObjectFinalize};
use napi_derive::napi;
use palisade::{Policy, Script};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::Arc;

/// The policies and scripts of this thread's `Policy` and `Script` objects, by key. A call
/// names its policy and script by key: napi tracks a borrow of each object handed to a native
/// method, which costs Node's thread more than the call's own start. The maps hash with Fx, not
/// SipHash: their keys are this module's own count, which no caller chooses.
#[derive(Default)]
struct Held {
    /// The last key given: keys are never given twice, so a key names one object or none.
    last: i64,
    policies: FxHashMap<i64, Arc<Policy>>,
    scripts: FxHashMap<i64, Script>,
}

thread_local! {
    static HELD: RefCell<Held> = RefCell::default();
}

/// Hold `policy` or `script` under a new key (1 and up).
fn hold(policy: Option<&Arc<Policy>>, script: Option<&Script>) -> i64 {
    HELD.with_borrow_mut(|held| {
        held.last += 1;
        let key = held.last;
        if let Some(policy) = policy {
            held.policies.insert(key, policy.clone());
        }
        if let Some(script) = script {
            held.scripts.insert(key, script.clone());
        }
        key
    })
}

/// Let go of what `key` holds: its object was collected (nothing once the thread is ending).
fn release(key: i64) {
    let _ = HELD.try_with(|held| {
        let mut held = held.borrow_mut();
        held.policies.remove(&key);
        held.scripts.remove(&key);
        // After a burst of objects, the maps give back what they no longer use.
        shrink(&mut held.policies);
        shrink(&mut held.scripts);
    });
}

/// Shrink `map` to twice its length once it uses less than a quarter of its capacity.
fn shrink<V>(map: &mut FxHashMap<i64, V>) {
    if map.len() * 4 < map.capacity() {
        map.shrink_to(map.len() * 2);
    }
}

/// The policy and the script held under `policy` and `script` (0 for none); an error for a
/// key that holds nothing.
pub(crate) fn held(
    policy: i64,
    script: i64,
) -> napi::Result<(Option<Arc<Policy>>, Option<Script>)> {
    HELD.with_borrow(|held| {
        let gone = || napi::Error::from_reason("the Policy or Script given is no longer held");
        let policy = match policy {
            0 => None,
            key => Some(held.policies.get(&key).ok_or_else(gone)?.clone()),
        };
        let script = match script {
            0 => None,
            key => Some(held.scripts.get(&key).ok_or_else(gone)?.clone()),
        };
        Ok((policy, script))
    })
}

/// A policy, checked as a policy file is.
#[napi(custom_finalize)]
pub struct NativePolicy {
    /// Shared by every call that runs under it.
    inner: Arc<Policy>,
    key: i64,
}

impl ObjectFinalize for NativePolicy {
    fn finalize(self, _env: Env) -> napi::Result<()> {
        release(self.key);
        Ok(())
    }
}

#[napi]
impl NativePolicy {
    /// Read a policy from its spec's JSON text: a file's path, TOML text, or a table.
    #[napi(factory)]
    pub fn read(spec: String) -> napi::Result<Self> {
        let inner: Arc<Policy> = palisade_bindings::read_policy(&spec)
            .map_err(refused)?
            .into();
        let key = hold(Some(&inner), None);
        Ok(Self { inner, key })
    }

    /// The key a call names it by.
    #[napi(getter)]
    pub fn key(&self) -> i64 {
        self.key
    }

    /// The policy's name.
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.inner.name().to_owned()
    }

    /// The SHA-256 of the policy's text.
    #[napi(getter)]
    pub fn sha256(&self) -> String {
        self.inner.sha256().to_owned()
    }
}

/// A script: an ES module's source, a file, or a compiled component.
#[napi(custom_finalize)]
pub struct NativeScript {
    inner: Script,
    key: i64,
}

impl ObjectFinalize for NativeScript {
    fn finalize(self, _env: Env) -> napi::Result<()> {
        release(self.key);
        Ok(())
    }
}

impl NativeScript {
    fn held(inner: Script) -> Self {
        let key = hold(None, Some(&inner));
        Self { inner, key }
    }
}

#[napi]
impl NativeScript {
    /// An ES module from its source; `name` appears in stack traces.
    #[napi(factory)]
    pub fn from_source(name: String, source: String) -> Self {
        Self::held(Script::new(name, source))
    }

    /// A script file as `palisade run FILE` reads it (ES module, TypeScript, component).
    #[napi(factory)]
    pub fn from_file(path: String) -> napi::Result<Self> {
        let inner = palisade_bindings::read_script(path.as_ref()).map_err(|e| library(&e))?;
        Ok(Self::held(inner))
    }

    /// A component compiled by `palisade compile`.
    #[napi(factory)]
    pub fn from_component(wasm: Buffer) -> napi::Result<Self> {
        let inner = Script::from_component(wasm.to_vec()).map_err(|e| library(&e))?;
        Ok(Self::held(inner))
    }

    /// The key a call names it by.
    #[napi(getter)]
    pub fn key(&self) -> i64 {
        self.key
    }

    /// The module name.
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.inner.name().to_owned()
    }
}
