//! `setTimeout`, `clearTimeout` and `queueMicrotask`, and the timer half of the guest's event
//! loop: when the job queue is empty and the result is still pending, the earliest timer runs,
//! after the guest sleeps until it is due (a WASI clock wait, which the host bounds by the call's
//! deadline). Under a fixed clock, timers fire in due order without waiting. Timers still
//! pending when the result settles are dropped with the call.

use javy::quickjs::{Ctx, Function, Persistent, Result, prelude::Func};
use std::cell::RefCell;
use std::time::Duration;

thread_local! {
    static RUN_NEXT: RefCell<Option<Persistent<Function<'static>>>> = const { RefCell::new(None) };
}

const PRELUDE: &str = r#"
(function (sleepMs) {
  const timers = new Map();
  let nextId = 1;
  globalThis.setTimeout = function setTimeout(callback, delay = 0, ...args) {
    if (typeof callback !== "function") throw new TypeError("setTimeout needs a function");
    const id = nextId++;
    timers.set(id, { due: Date.now() + Math.max(0, Number(delay) || 0), callback, args });
    return id;
  };
  globalThis.clearTimeout = function clearTimeout(id) {
    timers.delete(id);
  };
  globalThis.queueMicrotask = function queueMicrotask(callback) {
    if (typeof callback !== "function") throw new TypeError("queueMicrotask needs a function");
    Promise.resolve().then(() => callback());
  };
  // Run the earliest timer (ties in creation order); false when none is left.
  return function runNextTimer(waitForDue) {
    let nextKey, next;
    for (const [key, timer] of timers) {
      if (next === undefined || timer.due < next.due) { nextKey = key; next = timer; }
    }
    if (next === undefined) return false;
    timers.delete(nextKey);
    const wait = next.due - Date.now();
    if (waitForDue && wait > 0) sleepMs(wait);
    next.callback(...next.args);
    return true;
  };
})
"#;

fn sleep_ms(ms: f64) {
    if ms.is_finite() && ms > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(ms / 1000.0));
    }
}

/// Install the timer globals and keep `runNextTimer`. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let run_next: Function = prelude.call((Func::from(sleep_ms),))?;
    RUN_NEXT.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, run_next)));
    Ok(())
}

/// Run the earliest pending timer; `Ok(false)` when there is none. With `wait_for_due` false
/// (a fixed clock, where time never passes) it fires without sleeping.
pub fn run_next(cx: &Ctx<'_>, wait_for_due: bool) -> Result<bool> {
    let run = RUN_NEXT
        .with(|slot| slot.borrow().clone())
        .expect("timers were registered at init");
    run.restore(cx)?.call((wait_for_due,))
}
