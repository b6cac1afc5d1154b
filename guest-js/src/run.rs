//! The QuickJS runtime held in the snapshot, and the run/compile entry points.

use crate::errors::{exception, syntax};
use crate::exports::palisade::sandbox::runner::{Environment, Error, Module as Source};
use crate::globals;
use crate::wasi::clocks::monotonic_clock::subscribe_duration;
use javy::quickjs::function::{Rest, This};
use javy::quickjs::object::Accessor;
use javy::quickjs::{
    CatchResultExt, Ctx, Exception, Function, Module, Object, Persistent, Value, qjs,
};
use javy::{Config, Runtime};
use std::cell::{OnceCell, RefCell};
use std::mem;

thread_local! {
    static RUNTIME: OnceCell<Runtime> = const { OnceCell::new() };
    /// The module `preload` evaluated, held in the snapshot of a compiled script.
    static PRELOADED: RefCell<Option<Preloaded>> = const { RefCell::new(None) };
    /// How the top level being preloaded first used a reserved global, if it did.
    static TOUCHED: RefCell<Option<String>> = const { RefCell::new(None) };
}

struct Preloaded {
    name: String,
    namespace: Persistent<Object<'static>>,
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
    with_runtime(|rt| rt.context().with(|cx| crate::stringify::init(&cx)));
    // fastrand's thread-local generator seeds itself from the monotonic clock when first
    // touched; touch it here (the snapshot's clock reads zero), so that no later seeding reads
    // a clock. Every call seeds it again.
    fastrand::seed(0);
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
            // The input is read first: input that is not JSON ends the call before any of the
            // script runs.
            let (arg, shapes) = crate::json::parse(&cx, input).map_err(Error::InvalidInput)?;
            install_call_globals(&cx, env)
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
fn install_call_globals(cx: &Ctx<'_>, env: &Environment) -> javy::quickjs::Result<()> {
    each_call_global(env, |global| match global {
        CallGlobal::Fs => globals::fs::install(cx),
        CallGlobal::Config => globals::config::install(cx),
        CallGlobal::Kv { bucket } => globals::kv::install(cx, bucket),
        CallGlobal::Bridge { name } => globals::bridge::install(cx, name),
    })
}

/// The names of the globals `install_call_globals` defines for `env`, each once.
fn call_global_names(env: &Environment) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let _ = each_call_global(env, |global| {
        if !names.iter().any(|n| n == global.name()) {
            names.push(global.name().to_owned());
        }
        Ok::<(), std::convert::Infallible>(())
    });
    names
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

/// The namespace of the module evaluated by `preload`.
fn preloaded<'js>(cx: &Ctx<'js>, name: &str) -> Result<Object<'js>, Error> {
    let held = PRELOADED.with(|p| {
        p.borrow()
            .as_ref()
            .map(|p| (p.name.clone(), p.namespace.clone()))
    });
    match held {
        Some((held, namespace)) if held == name => namespace
            .restore(cx)
            .catch(cx)
            .map_err(|e| Error::Exception(exception(cx, e))),
        Some((held, _)) => Err(Error::MissingExport(format!(
            "this component holds the module `{held}`, not `{name}`"
        ))),
        None => Err(Error::MissingExport(
            "this component holds no preloaded module".to_owned(),
        )),
    }
}

/// Evaluate a module once, before the snapshot of a compiled script is taken, and keep its
/// namespace. Its top level may define things and run promise jobs; anything whose result
/// would be frozen into every later call (random numbers, timers, host calls, which the host
/// refuses while snapshotting, and the globals that each call under `env` gets) fails the
/// compile.
pub fn preload(name: &str, source: &str, env: &Environment) -> Result<(), Error> {
    // A changed seed afterwards means the top level drew from the generator.
    const UNTOUCHED: u64 = 0x5041_4c49_5341_4445;
    fastrand::seed(UNTOUCHED);
    let seed = fastrand::get_seed();
    TOUCHED.with(|t| t.borrow_mut().take());
    with_runtime(|rt| {
        rt.context().with(|cx| {
            set_stack_limit(&cx, env.stack_limit);
            let thrown = |e| Error::Exception(exception(&cx, e));
            let reserved = call_global_names(env);
            let placeholders = reserve(&cx, &reserved).catch(&cx).map_err(thrown)?;
            let evaluated = evaluate_top_level(&cx, name, source);
            let released = release(&cx, placeholders).catch(&cx).map_err(thrown);
            // Using a reserved global wins over what followed from it (the top level may have
            // caught the error and carried on with another view of its scope).
            if let Some(what) = TOUCHED.with(|t| t.borrow_mut().take()) {
                return Err(Error::NotCompilable(format!(
                    "the top level of `{name}` {what}; those belong to each call, so use them \
                     inside the exported function"
                )));
            }
            let module = evaluated?;
            released?;
            if fastrand::get_seed() != seed {
                return Err(Error::NotCompilable(format!(
                    "the top level of `{name}` called Math.random(), whose values would be the \
                     same in every call; draw them inside the exported function"
                )));
            }
            // A request still in flight holds a host handle that no later instance has.
            if globals::io::pending() {
                return Err(Error::NotCompilable(format!(
                    "the top level of `{name}` left a request in flight, which a snapshot \
                     cannot hold; make requests inside the exported function"
                )));
            }
            let namespace = module.namespace().catch(&cx).map_err(thrown)?;
            let namespace = Persistent::save(&cx, namespace);
            PRELOADED.with(|p| {
                *p.borrow_mut() = Some(Preloaded {
                    name: name.to_owned(),
                    namespace,
                })
            });
            Ok(())
        })
    })
}

/// Declare and evaluate the module being preloaded, running its promise jobs to the end.
fn evaluate_top_level<'js>(
    cx: &Ctx<'js>,
    name: &str,
    source: &str,
) -> Result<Module<'js, javy::quickjs::module::Evaluated>, Error> {
    let thrown = |e| Error::Exception(exception(cx, e));
    let declared = Module::declare(cx.clone(), name, source)
        .catch(cx)
        .map_err(|e| syntax(cx, e))?;
    let (module, evaluation) = declared.eval().catch(cx).map_err(thrown)?;
    while cx.execute_pending_job() {}
    match evaluation.result::<Value>() {
        Some(result) => result.catch(cx).map_err(thrown).map(drop)?,
        None => {
            return Err(Error::NotCompilable(format!(
                "the top level of `{name}` is still waiting after its promise jobs ran; a \
                 compiled script's top level must finish without timers or host calls"
            )));
        }
    }
    Ok(module)
}

/// The accessors `reserve` defined, and the untouched builtins `release` checks them with.
struct Placeholders<'js> {
    describe: Function<'js>,
    is_extensible: Function<'js>,
    /// Each reserved name with its accessor's getter and setter.
    accessors: Vec<(String, Value<'js>, Value<'js>)>,
}

/// Record the first use of a reserved global.
fn touch(what: String) {
    TOUCHED.with(|t| {
        t.borrow_mut().get_or_insert(what);
    });
}

/// Define each reserved global as an accessor that records its use and throws, so that the
/// top level sees these names exist (as it would from source) but cannot take their values.
fn reserve<'js>(cx: &Ctx<'js>, reserved: &[String]) -> javy::quickjs::Result<Placeholders<'js>> {
    let globals = cx.globals();
    // Taken before the top level runs, which could replace them.
    let object: Object = globals.get("Object")?;
    let describe: Function = object.get("getOwnPropertyDescriptor")?;
    let is_extensible: Function = object.get("isExtensible")?;
    let mut accessors = Vec::new();
    for name in reserved {
        let used = |name: String| {
            move |cx: Ctx<'_>| -> javy::quickjs::Result<()> {
                touch(format!("used the global `{name}`"));
                Err(Exception::throw_reference(
                    &cx,
                    &format!(
                        "`{name}` belongs to each call; a compiled script's top level cannot use it"
                    ),
                ))
            }
        };
        let get = used(name.clone());
        let set = {
            let used = used(name.clone());
            move |cx: Ctx<'_>, _value: Value<'_>| used(cx)
        };
        globals.prop(
            name.as_str(),
            Accessor::new(get, set).configurable().enumerable(),
        )?;
        let descriptor: Object = describe.call((globals.clone(), name.as_str()))?;
        accessors.push((name.clone(), descriptor.get("get")?, descriptor.get("set")?));
    }
    Ok(Placeholders {
        describe,
        is_extensible,
        accessors,
    })
}

/// Remove the accessors `reserve` defined (a call installs the real globals), noting a top
/// level that removed, redefined or sealed them, or made the global object non-extensible: a
/// call could then not get its globals as it would from source.
fn release<'js>(cx: &Ctx<'js>, placeholders: Placeholders<'js>) -> javy::quickjs::Result<()> {
    let globals = cx.globals();
    for (name, get, set) in &placeholders.accessors {
        let descriptor: Value = placeholders
            .describe
            .call((globals.clone(), name.as_str()))?;
        let intact = match descriptor.into_object() {
            Some(d) => {
                // Read only the descriptor's own fields, never a getter the top level put on
                // `Object.prototype`.
                d.set_prototype(None)?;
                d.get::<_, Value>("get")? == *get
                    && d.get::<_, Value>("set")? == *set
                    && d.get::<_, Option<bool>>("enumerable")? == Some(true)
                    && d.get::<_, Option<bool>>("configurable")? == Some(true)
            }
            None => false,
        };
        if !intact {
            touch(format!("removed or redefined the global `{name}`"));
            continue;
        }
        globals::ungranted::reinstate(cx, name)?;
    }
    if !placeholders.accessors.is_empty()
        && !placeholders.is_extensible.call::<_, bool>((globals,))?
    {
        touch("made the global object non-extensible, where each call adds globals".to_owned());
    }
    Ok(())
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

/// Run the event loop until `value` (when it is a promise) settles: jobs first; then, with
/// none left, the earliest due timer, or a `wasi:io/poll` wait on the host operations in
/// flight and the earliest timer together.
fn settle<'js>(
    cx: &Ctx<'js>,
    value: Value<'js>,
    what: &str,
    real_clock: bool,
) -> Result<Value<'js>, Error> {
    let Some(promise) = value.as_promise() else {
        return Ok(value);
    };
    let thrown = |e| Error::Exception(exception(cx, e));
    loop {
        if let Some(result) = promise.result::<Value>() {
            return result.catch(cx).map_err(thrown);
        }
        if cx.execute_pending_job() {
            continue;
        }
        let timer = globals::timers::next_wait(cx).catch(cx).map_err(thrown)?;
        let in_flight = globals::io::pending();
        match timer {
            None if !in_flight => {
                return Err(Error::Deadlock(format!(
                    "{what} is still pending and no job, timer or host operation is left that \
                     could settle it"
                )));
            }
            // A due timer, or a fixed clock with nothing else to wait for: fire it now.
            Some(wait) if wait.is_zero() || (!real_clock && !in_flight) => {
                globals::timers::run_next(cx).catch(cx).map_err(thrown)?;
            }
            _ if in_flight => {
                let timer = timer
                    .filter(|_| real_clock)
                    .map(|wait| subscribe_duration(wait.as_nanos() as u64));
                let fired = globals::io::run_ready(cx, timer)
                    .catch(cx)
                    .map_err(thrown)?;
                if fired {
                    globals::timers::run_next(cx).catch(cx).map_err(thrown)?;
                }
            }
            Some(wait) => {
                subscribe_duration(wait.as_nanos() as u64).block();
                globals::timers::run_next(cx).catch(cx).map_err(thrown)?;
            }
            None => unreachable!("covered above"),
        }
    }
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
    let text = cx
        .json_stringify(value)
        .catch(cx)
        .map_err(|e| Error::BadOutput(exception(cx, e).message))?;
    match text {
        Some(text) => text
            .to_string()
            .map_err(|e| Error::BadOutput(format!("the result is not valid UTF-8: {e}"))),
        None => Ok("null".to_owned()),
    }
}
