//! The QuickJS runtime held in the snapshot, and the run/compile entry points.

mod call_globals;
mod holes;
mod live;
mod preload;
mod settle;

use crate::errors::{exception, syntax};
use crate::exports::palisade::sandbox::runner::{Environment, Error, Module as Source};
use crate::globals;
use call_globals::install_call_globals;
use javy::quickjs::function::{Rest, This};
use javy::quickjs::{CatchResultExt, Ctx, Function, Module, Object, Value, qjs};
use javy::{Config, Runtime};
pub use live::evaluate_script;
pub use preload::preload;
use preload::preloaded;
use settle::settle;
use std::cell::OnceCell;
use std::mem;

thread_local! {
    static RUNTIME: OnceCell<Runtime> = const { OnceCell::new() };
}

/// QuickJS collects cycles once the bytes it holds pass this threshold, and then whenever they
/// grow by half of what survived the last collection. Reference counting frees everything else
/// at once; this bounds what garbage cycles can pin. (It counts bytes because the guest's
/// QuickJS is built to ask wasi-libc for each allocation's size: see `QUICKJS_CFLAGS` in xtask.)
const GC_THRESHOLD: usize = 4 << 20;

fn build_runtime() -> Runtime {
    let mut config = Config::default();
    config.gc_threshold(GC_THRESHOLD).text_encoding(true);
    let runtime = Runtime::new(config).expect("the QuickJS runtime is created");
    runtime
        .context()
        .with(|cx| globals::register(&cx))
        .expect("the Palisade globals are installed");
    runtime.context().with(|cx| crate::modules::install(&cx));
    runtime
}

fn with_runtime<R>(f: impl FnOnce(&Runtime) -> R) -> R {
    RUNTIME.with(|cell| f(cell.get_or_init(build_runtime)))
}

/// Create the runtime. Called once, before the snapshot is taken.
pub fn init() {
    with_runtime(|rt| {
        rt.context().with(|cx| {
            crate::stringify::init(&cx);
            settle::watch_memory(&cx).expect("the out-of-memory watch is installed");
        })
    });
    // fastrand's thread-local generator seeds itself from the monotonic clock when first
    // touched; touch it here (the snapshot's clock reads zero), so that no later seeding reads
    // a clock. Every call seeds it again.
    fastrand::seed(0);
    // Last: what ran above freed memory too.
    holes::take();
}

/// Compile a module to bytecode.
pub fn compile(name: &str, source: &str) -> Result<Vec<u8>, Error> {
    with_runtime(|rt| {
        rt.context().with(|cx| {
            let module = Module::declare(cx.clone(), name, source)
                .catch(&cx)
                .map_err(|e| syntax(&cx, e))?;
            module
                .write(Default::default())
                .catch(&cx)
                .map_err(|e| Error::Exception(exception(&cx, e)))
        })
    })
}

/// Evaluate a module and call one of its exports with JSON input.
pub fn run(
    name: &str,
    source: Source,
    entry: &str,
    input: &str,
    env: &Environment,
) -> Result<String, Error> {
    // javy's `Math.random` draws from fastrand's generator; the host seeds it for every call.
    fastrand::seed(env.random_seed);
    globals::io::clear();
    with_runtime(|rt| {
        rt.context().with(|cx| {
            set_stack_limit(&cx, env.stack_limit);
            globals::fetch::set_data_limit(env.response_body_limit);
            globals::console::set_cap(env.console_limit);
            // The input is read first: input that is not JSON ends the call before any of the
            // script runs.
            let (arg, shapes) = crate::json::parse(&cx, input).map_err(Error::InvalidInput)?;
            globals::runtime::apply(&cx, env)
                .and_then(|()| install_call_globals(&cx, env))
                .catch(&cx)
                .map_err(|e| Error::Exception(exception(&cx, e)))?;
            let real_clock = !env.fixed_clock;
            let namespace = match source {
                Source::Preloaded => preloaded(&cx, name)?,
                Source::Source(text) => {
                    let declared = Module::declare(cx.clone(), name, text)
                        .catch(&cx)
                        .map_err(|e| syntax(&cx, e))?;
                    evaluate(&cx, declared, real_clock)?
                }
                Source::Bytecode(bytes) => {
                    // SAFETY: the host passes only bytecode that `compile` of this guest or of
                    // its other build (the same QuickJS, built with or without capabilities)
                    // produced; user-supplied bytes never reach this call.
                    let declared = unsafe { Module::load(cx.clone(), &bytes) }
                        .catch(&cx)
                        .map_err(|e| syntax(&cx, e))?;
                    evaluate(&cx, declared, real_clock)?
                }
            };
            let result = if namespace.contains_key(entry).unwrap_or(false) {
                let export: Value = namespace
                    .get(entry)
                    .catch(&cx)
                    .map_err(|e| Error::Exception(exception(&cx, e)))?;
                match export.as_function() {
                    Some(function) if env.spread_args => {
                        let undefined = Value::new_undefined(cx.clone());
                        call_spread(&cx, function, undefined, arg)?
                    }
                    Some(function) => {
                        // The instance ends with this call and its memory is discarded whole:
                        // the input is not freed value by value when the call returns (for a
                        // 1,000-row input, 6% of the call).
                        mem::forget(arg.clone());
                        call(&cx, function, arg)?
                    }
                    None => {
                        warn_of_methods(&export);
                        export
                    }
                }
            } else {
                no_such_export(&cx, &namespace, name, entry, arg, env.spread_args)?
            };
            let result = settle(&cx, result, "the result promise", real_clock)?;
            mem::forget(result.clone());
            let output = to_json(&cx, result);
            // Held until the script is done, so that the objects it makes with the input's
            // keys find the input's shapes (compiled w2 about 3% faster than freed with the
            // parse, docs/bench.md).
            drop(shapes);
            output
        })
    })
}

/// A call of an export the module does not have. Without a default export the module ran for
/// its top level's effects (the result is `undefined`); a name that is a method of the default
/// export (`export default { async execute(a, b) {…} }`, a tool's usual shape) calls that
/// method with the default export as `this`.
#[inline(never)]
fn no_such_export<'js>(
    cx: &Ctx<'js>,
    namespace: &Object<'js>,
    name: &str,
    entry: &str,
    arg: Value<'js>,
    spread_args: bool,
) -> Result<Value<'js>, Error> {
    let thrown = |e| Error::Exception(exception(cx, e));
    if entry == "default" {
        return Ok(Value::new_undefined(cx.clone()));
    }
    if namespace
        .contains_key("default")
        .catch(cx)
        .map_err(thrown)?
    {
        let default: Value = namespace.get("default").catch(cx).map_err(thrown)?;
        if let Some(object) = default.as_object() {
            let method: Value = object.get(entry).catch(cx).map_err(thrown)?;
            if let Some(method) = method.as_function() {
                if spread_args {
                    return call_spread(cx, method, default.clone(), arg);
                }
                return method
                    .call((This(default.clone()), arg))
                    .catch(cx)
                    .map_err(thrown);
            }
        }
    }
    Err(Error::MissingExport(format!(
        "module `{name}` has no export named `{entry}`, and its default export has no method \
         of that name"
    )))
}

/// Let QuickJS use `limit` bytes of the shadow stack from here: a recursion past it throws a
/// catchable `RangeError` (QuickJS's stack check, which this guest's QuickJS keeps on under
/// WASI) before the wasm stacks run out.
fn set_stack_limit(cx: &Ctx<'_>, limit: u32) {
    // SAFETY: the context is live; these only set the runtime's stack top and limit.
    unsafe {
        let rt = qjs::JS_GetRuntime(cx.as_raw().as_ptr());
        qjs::JS_UpdateStackTop(rt);
        qjs::JS_SetMaxStackSize(rt, limit as qjs::size_t);
    }
}

/// Call `function` with the elements of `args`, a JSON array, as its arguments.
fn call_spread<'js>(
    cx: &Ctx<'js>,
    function: &Function<'js>,
    this: Value<'js>,
    args: Value<'js>,
) -> Result<Value<'js>, Error> {
    let Some(array) = args.as_array() else {
        return Err(Error::InvalidInput(
            "the arguments must be a JSON array (one element per argument)".to_owned(),
        ));
    };
    let mut list = Vec::with_capacity(array.len());
    for element in array.iter::<Value>() {
        list.push(
            element
                .catch(cx)
                .map_err(|e| Error::Exception(exception(cx, e)))?,
        );
    }
    function
        .call((This(this), Rest(list)))
        .catch(cx)
        .map_err(|e| Error::Exception(exception(cx, e)))
}

/// A default export that is an object with methods gives `{}` for them as JSON: say which
/// methods there are and how to call one.
fn warn_of_methods(value: &Value<'_>) {
    let Some(object) = value.as_object() else {
        return;
    };
    if object.as_function().is_some() || object.as_array().is_some() {
        return;
    }
    let mut methods = Vec::new();
    for key in object.keys::<String>() {
        let Ok(key) = key else { continue };
        if object
            .get::<_, Value>(key.as_str())
            .is_ok_and(|v| v.as_function().is_some())
        {
            methods.push(key);
        }
    }
    if !methods.is_empty() {
        crate::palisade::sandbox::console::log(
            crate::palisade::sandbox::console::Level::Warn,
            &format!(
                "[palisade] the export is an object whose methods ({}) are not JSON and were \
                 left out of the result; call one by name (`palisade run --export {}`)",
                methods.join(", "),
                methods[0]
            ),
        );
    }
}
/// Evaluate a declared module, run its top level to completion and return its namespace.
fn evaluate<'js>(
    cx: &Ctx<'js>,
    declared: Module<'js>,
    real_clock: bool,
) -> Result<Object<'js>, Error> {
    let thrown = |e| Error::Exception(exception(cx, e));
    let (module, evaluation) = declared.eval().catch(cx).map_err(thrown)?;
    settle(
        cx,
        Value::from_promise(evaluation),
        "module evaluation",
        real_clock,
    )?;
    module.namespace().catch(cx).map_err(thrown)
}
fn call<'js>(
    cx: &Ctx<'js>,
    function: &Function<'js>,
    arg: Value<'js>,
) -> Result<Value<'js>, Error> {
    function
        .call((arg,))
        .catch(cx)
        .map_err(|e| Error::Exception(exception(cx, e)))
}
/// `JSON.stringify` the result; `undefined` is `null`, a function or symbol is not JSON.
fn to_json<'js>(cx: &Ctx<'js>, value: Value<'js>) -> Result<String, Error> {
    if value.is_undefined() {
        return Ok("null".to_owned());
    }
    if value.is_function() || value.is_symbol() {
        return Err(Error::BadOutput(format!(
            "the result is a {}, which has no JSON form",
            value.type_name()
        )));
    }
    if let Some(text) = crate::stringify::plain(cx, &value) {
        return Ok(text);
    }
    let text = cx.json_stringify(value).catch(cx).map_err(|e| {
        let e = exception(cx, e);
        // A result nested deeper than QuickJS's `JSON_MAX_DEPTH` (2,048 objects; vendor/README.md)
        // or than the stack allows is the recursion's error, as the host reports it for any call.
        if e.name == "RangeError" && e.message == "Maximum call stack size exceeded" {
            Error::Exception(e)
        } else {
            Error::BadOutput(e.message)
        }
    })?;
    match text {
        Some(text) => text
            .to_string()
            .map_err(|e| Error::BadOutput(format!("the result is not valid UTF-8: {e}"))),
        None => Ok("null".to_owned()),
    }
}
