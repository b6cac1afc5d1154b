//! A live session's call: a script evaluated in the global scope of an instance that outlives
//! the call, so that what one call defines is there for the next.

use super::call_globals::install_call_globals;
use super::settle::{forget_lost_memory, settle};
use super::{set_stack_limit, to_json, with_runtime};
use crate::errors::{exception, syntax};
use crate::exports::palisade::sandbox::runner::{Environment, Error};
use crate::globals;
use javy::quickjs::context::EvalOptions;
use javy::quickjs::{CatchResultExt, CaughtError, Ctx, Value, qjs};
use std::ffi::{CString, c_int};

/// Evaluate `source` as a classic script in the global scope, with the call's `input` as the
/// global `input`, and return its completion value as JSON. What the call leaves pending
/// (timers, host operations, open buckets) is dropped before it returns.
pub fn evaluate_script(
    name: &str,
    source: &str,
    input: &str,
    env: &Environment,
) -> Result<String, Error> {
    fastrand::seed(env.random_seed);
    forget_lost_memory();
    let output = with_runtime(|rt| {
        rt.context().with(|cx| {
            let output = evaluate_in(&cx, name, source, input, env);
            // Best effort: a failure here is the call's own (out of memory), which the host
            // rolls back.
            let _ = globals::timers::clear_all(&cx);
            output
        })
    });
    globals::io::clear();
    globals::kv::close_buckets();
    output
}

fn evaluate_in(
    cx: &Ctx<'_>,
    name: &str,
    source: &str,
    input: &str,
    env: &Environment,
) -> Result<String, Error> {
    let thrown = |e| Error::Exception(exception(cx, e));
    set_stack_limit(cx, env.stack_limit);
    globals::fetch::set_data_limit(env.response_body_limit);
    globals::console::set_cap(env.console_limit);
    let (arg, shapes) = crate::json::parse(cx, input).map_err(Error::InvalidInput)?;
    globals::runtime::apply(cx, env)
        .and_then(|()| install_call_globals(cx, env))
        .catch(cx)
        .map_err(thrown)?;
    cx.globals().set("input", arg).catch(cx).map_err(thrown)?;
    let real_clock = !env.fixed_clock;
    let value = if source.contains("await") {
        evaluate_async(cx, name, source, real_clock)?
    } else {
        evaluate_plain(cx, name, source)?
    };
    let value = settle(cx, value, "the result promise", real_clock)?;
    let output = to_json(cx, value);
    drop(shapes);
    output
}

/// Evaluate a script that may use top-level `await`: QuickJS compiles it as an async body
/// (its `promise` option), whose promise the event loop settles; its completion value.
fn evaluate_async<'js>(
    cx: &Ctx<'js>,
    name: &str,
    source: &str,
    real_clock: bool,
) -> Result<Value<'js>, Error> {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.promise = true;
    options.filename = Some(name.to_owned());
    // With `promise`, QuickJS compiles the script as an async body: a syntax error throws
    // here, anything else rejects the promise, which resolves to `{ value }`.
    let completion: Value = cx
        .eval_with_options(source, options)
        .catch(cx)
        .map_err(|e| syntax(cx, e))?;
    let settled = settle(cx, completion, "the script", real_clock)?;
    match settled.as_object() {
        Some(record) => record
            .get("value")
            .catch(cx)
            .map_err(|e| Error::Exception(exception(cx, e))),
        None => Ok(settled),
    }
}

/// Evaluate a script that cannot await (the word is nowhere in it) as a plain script: compiled,
/// then run, its completion value. The same as [`evaluate_async`] gives, without the async
/// body's promise and its reaction jobs, whose objects a step would write again each time.
#[allow(unsafe_code)]
fn evaluate_plain<'js>(cx: &Ctx<'js>, name: &str, source: &str) -> Result<Value<'js>, Error> {
    let caught = |e: javy::quickjs::Error| CaughtError::from_error(cx, e);
    let filename = CString::new(name).map_err(|e| syntax(cx, caught(e.into())))?;
    let text = CString::new(source).map_err(|e| syntax(cx, caught(e.into())))?;
    let ctx = cx.as_raw().as_ptr();
    // SAFETY: the context is live; both strings are NUL-terminated and outlive the calls; the
    // compiled script is handed to `JS_EvalFunction`, which frees it; the value it returns is
    // owned here.
    unsafe {
        let flags = qjs::JS_EVAL_TYPE_GLOBAL | qjs::JS_EVAL_FLAG_COMPILE_ONLY;
        let compiled = qjs::JS_Eval(
            ctx,
            text.as_ptr(),
            source.len() as qjs::size_t,
            filename.as_ptr(),
            flags as c_int,
        );
        if qjs::JS_IsException(compiled) {
            return Err(syntax(cx, caught(javy::quickjs::Error::Exception)));
        }
        let completion = qjs::JS_EvalFunction(ctx, compiled);
        if qjs::JS_IsException(completion) {
            let thrown = caught(javy::quickjs::Error::Exception);
            return Err(Error::Exception(exception(cx, thrown)));
        }
        Ok(Value::from_raw(cx.clone(), completion))
    }
}
