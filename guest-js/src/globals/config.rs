//! `config`: read-only values from the policy's `[config]` table, through `wasi:config/store`.
//! `config.get(key)` returns the string or `null`; `config.getAll()` returns an object. The
//! global exists only in calls whose policy has a `[config]` table. Secrets are never config.

#[cfg(feature = "capabilities")]
use crate::wasi::config::store::{Error as StoreError, get, get_all};
use javy::quickjs::{Ctx, Result};
#[cfg(feature = "capabilities")]
use javy::quickjs::{Exception, Function, Object, Value, prelude::MutFn};
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
        object.set(key, value)?;
    }
    Ok(object.into_value())
}

#[cfg(feature = "capabilities")]
/// Install the `config` global for this call.
pub fn install(cx: &Ctx<'_>) -> Result<()> {
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
    crate::globals::define_global(cx, "config", config)
}

/// The guest built without capabilities has no `wasi:config`; the host never asks it for
/// `config`.
#[cfg(not(feature = "capabilities"))]
pub fn install(cx: &Ctx<'_>) -> Result<()> {
    crate::globals::absent(cx.clone())
}
