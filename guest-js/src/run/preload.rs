//! Preloading a compiled script: its module is evaluated once, before the snapshot is taken,
//! with the globals that belong to each call reserved, and its namespace held for every call.

use super::call_globals::call_global_names;
use super::{set_stack_limit, with_runtime};
use crate::errors::{exception, syntax};
use crate::exports::palisade::sandbox::runner::{Environment, Error};
use crate::globals;
use javy::quickjs::object::Accessor;
use javy::quickjs::{CatchResultExt, Ctx, Exception, Function, Module, Object, Persistent, Value};
use std::cell::RefCell;

thread_local! {
    /// The module `preload` evaluated, held in the snapshot of a compiled script.
    static PRELOADED: RefCell<Option<Preloaded>> = const { RefCell::new(None) };
    /// How the top level being preloaded first used a reserved global, if it did.
    static TOUCHED: RefCell<Option<String>> = const { RefCell::new(None) };
}

struct Preloaded {
    name: String,
    namespace: Persistent<Object<'static>>,
}

/// The namespace of the module evaluated by `preload`.
pub(super) fn preloaded<'js>(cx: &Ctx<'js>, name: &str) -> Result<Object<'js>, Error> {
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
            crate::globals::console::set_cap(env.console_limit);
            let thrown = |e| Error::Exception(exception(&cx, e));
            crate::globals::runtime::apply(&cx, env)
                .catch(&cx)
                .map_err(thrown)?;
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
            // The top level freed memory too, before this snapshot.
            super::holes::take();
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
