//! `setTimeout`, `clearTimeout` and `queueMicrotask`, and the timer half of the guest's event
//! loop (run.rs): when the job queue is empty and the result is still pending, the loop waits
//! for the earliest timer together with the host operations in flight (a `wasi:io/poll` wait,
//! which the host bounds by the call's deadline). Under a fixed clock, timers fire in due order
//! without waiting. Timers still pending when the result settles are dropped with the call.

use javy::quickjs::{Array, Ctx, Function, Persistent, Result};
use std::cell::RefCell;
use std::time::Duration;

thread_local! {
    static NEXT_WAIT: RefCell<Option<Persistent<Function<'static>>>> = const { RefCell::new(None) };
    static RUN_NEXT: RefCell<Option<Persistent<Function<'static>>>> = const { RefCell::new(None) };
}

const PRELUDE: &str = r#"
(function () {
  "use strict";
  // Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const MapCtor = Map;
  const mapSet = uncurry(Map.prototype.set);
  const mapDelete = uncurry(Map.prototype.delete);
  const mapForEach = uncurry(Map.prototype.forEach);
  const { apply } = Reflect;
  const dateNow = Date.now;
  const { max } = Math;
  const NumberCtor = Number;
  const TypeErrorCtor = TypeError;
  const PromiseCtor = Promise;
  const timers = new MapCtor();
  let nextId = 1;
  globalThis.setTimeout = function setTimeout(callback, delay = 0, ...args) {
    if (typeof callback !== "function") throw new TypeErrorCtor("setTimeout needs a function");
    const id = nextId++;
    mapSet(timers, id, { __proto__: null, due: dateNow() + max(0, NumberCtor(delay) || 0), callback, args });
    return id;
  };
  globalThis.clearTimeout = function clearTimeout(id) {
    mapDelete(timers, id);
  };
  globalThis.queueMicrotask = function queueMicrotask(callback) {
    if (typeof callback !== "function") throw new TypeErrorCtor("queueMicrotask needs a function");
    (async () => {
      await undefined;
      callback();
    })();
  };
  let nextKey, next;
  const earlier = (timer, key) => {
    if (next === undefined || timer.due < next.due) { nextKey = key; next = timer; }
  };
  // The earliest timer (ties in creation order), in `nextKey` and `next`.
  const earliest = () => {
    nextKey = next = undefined;
    mapForEach(timers, earlier);
  };
  // Milliseconds until the earliest timer is due, or -1 when there is none.
  const nextWait = () => {
    earliest();
    return next === undefined ? -1 : max(0, next.due - dateNow());
  };
  // Run the earliest timer (ties in creation order).
  const runNext = () => {
    earliest();
    const timer = next;
    if (timer === undefined) return;
    mapDelete(timers, nextKey);
    next = undefined;
    apply(timer.callback, timer, timer.args);
  };
  return [nextWait, runNext];
})
"#;

/// Install the timer globals and keep `nextWait` and `runNext`. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let parts: Array = prelude.call(())?;
    let next_wait: Function = parts.get(0)?;
    let run_next: Function = parts.get(1)?;
    NEXT_WAIT.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, next_wait)));
    RUN_NEXT.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, run_next)));
    Ok(())
}

/// Time until the earliest timer is due; `None` when no timer is set.
pub fn next_wait(cx: &Ctx<'_>) -> Result<Option<Duration>> {
    let next = NEXT_WAIT
        .with(|slot| slot.borrow().clone())
        .expect("timers were registered at init");
    let ms: f64 = next.restore(cx)?.call(())?;
    Ok((ms >= 0.0).then(|| Duration::from_secs_f64(ms.min(1e9) / 1000.0)))
}

/// Run the earliest timer now.
pub fn run_next(cx: &Ctx<'_>) -> Result<()> {
    let run = RUN_NEXT
        .with(|slot| slot.borrow().clone())
        .expect("timers were registered at init");
    run.restore(cx)?.call(())
}
