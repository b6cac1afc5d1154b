//! The parts of the JavaScript runtime an action app's policy may turn off (`[apps]`, as the
//! host says in the call's environment): timers (`timers: false`) and `eval` with the
//! `Function` constructors (`eval: false`). Turned off here, in Rust, before any of the call's
//! JavaScript runs, and refused through the host (`capability.ungranted`), which records the
//! refusal: an uncaught one ends the call as `policy_denied`, whatever the script did to the
//! globals around it. Once off, a part stays off in the instance (a live session's next call,
//! a compiled app's snapshot).
//!
//! Timers: each timer function of the prelude asks `timers_off` first (timers/mod.rs), and the
//! event loop runs no timer while it holds. Eval: `eval`, the global `Function` and the
//! `constructor` of the plain, async, generator and async generator function prototypes become
//! refusing functions whose `prototype` is the one they replace (so `instanceof Function` keeps
//! working). QuickJS's own eval stays in the engine (the guest compiles modules with it), but no
//! reference to it is left for the call's JavaScript to reach.

use crate::exports::palisade::sandbox::runner::Environment;
use javy::quickjs::object::Property;
use javy::quickjs::{Array, Constructor, Ctx, Function, Object, Persistent, Result, Value};
use std::cell::{Cell, RefCell};

thread_local! {
    static TIMERS_OFF: Cell<bool> = const { Cell::new(false) };
    static EVAL_OFF: Cell<bool> = const { Cell::new(false) };
    /// `PolicyDeniedError` as the bridge's prelude defined it, captured before any script ran.
    static POLICY_DENIED: RefCell<Option<Persistent<Value<'static>>>> = const { RefCell::new(None) };
}

/// Functions of the kinds other than the plain one, made to read their prototypes (which a
/// new function gets from the engine's intrinsics, whatever a script did to the globals).
const KINDS: &str = "[async function () {}, function* () {}, async function* () {}]";
const KIND_NAMES: [&str; 3] = [
    "AsyncFunction",
    "GeneratorFunction",
    "AsyncGeneratorFunction",
];

/// Keep `PolicyDeniedError`. Runs once, before the snapshot, after the bridge's prelude.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let denied: Value = cx.globals().get("PolicyDeniedError")?;
    POLICY_DENIED.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, denied)));
    Ok(())
}

/// Turn off what `env` does not grant. Runs before the call's JavaScript (its module, its
/// preloaded top level or its live script).
pub fn apply(cx: &Ctx<'_>, env: &Environment) -> Result<()> {
    if !env.timers {
        TIMERS_OFF.set(true);
    }
    if !env.eval && !EVAL_OFF.get() {
        turn_off_eval(cx)?;
        EVAL_OFF.set(true);
    }
    Ok(())
}

/// Whether timers are off in this instance.
pub fn timers_off() -> bool {
    TIMERS_OFF.get()
}

/// The host's refusal of `name` (a function of the runtime part `part`: `timers` or `eval`)
/// as a thrown `PolicyDeniedError`.
pub fn refuse(cx: &Ctx<'_>, part: &str, name: &str) -> javy::quickjs::Error {
    let made = || -> Result<Value<'_>> {
        let denial = super::io::ungranted(cx.clone(), part.to_owned(), name.to_owned())?;
        let class: Constructor = POLICY_DENIED
            .with(|slot| slot.borrow().clone())
            .expect("PolicyDeniedError was kept at init")
            .restore(cx)?
            .get()?;
        class.construct((denial,))
    };
    match made() {
        Ok(error) => cx.throw(error),
        Err(error) => error,
    }
}

fn turn_off_eval(cx: &Ctx<'_>) -> Result<()> {
    let globals = cx.globals();
    let eval = refusing(cx, "eval", None)?;
    globals.prop("eval", Property::from(eval))?;
    let mut prototypes = vec![("Function", Function::prototype(cx.clone()))];
    let kinds: Array = cx.eval(KINDS)?;
    for (index, name) in KIND_NAMES.into_iter().enumerate() {
        let function: Object = kinds.get(index)?;
        let prototype = function
            .get_prototype()
            .expect("a function has a prototype");
        prototypes.push((name, prototype));
    }
    for (name, prototype) in prototypes {
        let constructor = refusing(cx, name, Some(prototype.clone()))?;
        prototype.prop("constructor", Property::from(constructor.clone()))?;
        if name == "Function" {
            globals.prop("Function", Property::from(constructor))?;
        }
    }
    Ok(())
}

/// A function named `name` that refuses every call and construction as `apps.eval`, with
/// `prototype` as its `prototype`.
fn refusing<'js>(
    cx: &Ctx<'js>,
    name: &'static str,
    prototype: Option<Object<'js>>,
) -> Result<Function<'js>> {
    let function = Function::new(cx.clone(), move |cx: Ctx<'js>| -> Result<()> {
        Err(refuse(&cx, "eval", name))
    })?;
    function.set_name(name)?;
    function.set_constructor(true);
    if let Some(prototype) = prototype {
        function.prop("prototype", Property::from(prototype))?;
    }
    Ok(function)
}
