//! `config`: read-only values from the policy's `[config]` table, through `wasi:config/store`.
//! `config.get(key)` returns the string or `null`; `config.getAll()` returns an object. The
//! global is this object in calls whose policy has a `[config]` table, and the refusing one of
//! `globals::ungranted` in the others. Secrets are never config.

#[cfg(feature = "capabilities")]
use crate::wasi::config::store::{Error as StoreError, get, get_all};
use javy::quickjs::{Ctx, Result};
#[cfg(feature = "capabilities")]
use javy::quickjs::{Exception, Function, Object, Persistent, Value, prelude::MutFn};
#[cfg(feature = "capabilities")]
use javy::{Args, hold_and_release};

#[cfg(feature = "capabilities")]
fn store_error(e: StoreError) -> String {
    match e {
        StoreError::Upstream(m) | StoreError::Io(m) => m,
    }
}

#[cfg(feature = "capabilities")]
fn config_get<'js>(args: Args<'js>) -> Result<Value<'js>> {
    let (cx, args) = args.release();
    let key: String = match args.0.into_iter().next() {
        Some(v) => v.get()?,
        None => return Err(Exception::throw_type(&cx, "config.get(key) needs a key")),
    };
    match get(&key) {
        Ok(Some(value)) => Ok(javy::quickjs::String::from_str(cx, &value)?.into_value()),
        Ok(None) => Ok(Value::new_null(cx)),
        Err(e) => Err(Exception::throw_message(&cx, &store_error(e))),
    }
}

#[cfg(feature = "capabilities")]
fn config_get_all<'js>(args: Args<'js>) -> Result<Value<'js>> {
    let (cx, _) = args.release();
    let all = get_all().map_err(|e| Exception::throw_message(&cx, &store_error(e)))?;
    let object = Object::new(cx)?;
    for (key, value) in all {
        crate::globals::define_own(&object, key, value)?;
    }
    Ok(object.into_value())
}

#[cfg(feature = "capabilities")]
thread_local! {
    /// The `config` object, made once before the snapshot (making it per call took 8,000 wasm
    /// instructions); its functions ask the host for the call's values each time they run.
    static CONFIG: std::cell::RefCell<Option<Persistent<Object<'static>>>> =
        const { std::cell::RefCell::new(None) };
}

/// Make the `config` object. Runs once, before the snapshot.
#[cfg(feature = "capabilities")]
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let config = Object::new(cx.clone())?;
    config.prop(
        "get",
        Function::new(
            cx.clone(),
            MutFn::new(|cx, args| {
                let (cx, args) = hold_and_release!(cx, args);
                config_get(Args::hold(cx, args))
            }),
        )?,
    )?;
    config.prop(
        "getAll",
        Function::new(
            cx.clone(),
            MutFn::new(|cx, args| {
                let (cx, args) = hold_and_release!(cx, args);
                config_get_all(Args::hold(cx, args))
            }),
        )?,
    )?;
    CONFIG.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, config)));
    Ok(())
}

/// Install the `config` global for this call.
#[cfg(feature = "capabilities")]
pub fn install(cx: &Ctx<'_>) -> Result<()> {
    let config = CONFIG
        .with(|slot| slot.borrow().clone())
        .expect("the config object was made at init")
        .restore(cx)?;
    crate::globals::define_global(cx, "config", config)
}

/// The guest built without capabilities has no `wasi:config`: nothing to make.
#[cfg(not(feature = "capabilities"))]
pub fn register(_cx: &Ctx<'_>) -> Result<()> {
    Ok(())
}

/// The guest built without capabilities has no `wasi:config`; the host never asks it for
/// `config`.
#[cfg(not(feature = "capabilities"))]
pub fn install(cx: &Ctx<'_>) -> Result<()> {
    crate::globals::absent(cx.clone())
}
