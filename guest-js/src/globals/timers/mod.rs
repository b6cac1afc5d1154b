//! `setTimeout`, `setInterval`, `clearTimeout`, `clearInterval` and `queueMicrotask`, and the
//! timer half of the guest's event loop (run.rs): when the job queue is empty and the result is
//! still pending, the loop waits for the earliest timer together with the host operations in
//! flight (a `wasi:io/poll` wait, which the host bounds by the call's deadline). Under a fixed
//! clock, timers fire in due order without waiting. Timers and intervals still pending when the
//! result settles are dropped with the call; an interval never keeps a call alive. When the
//! call's policy turns timers off (`runtime::timers_off`), every timer function refuses, and
//! the loop runs no timer: one pending then ends the call with the host's refusal.

use javy::quickjs::prelude::Func;
use javy::quickjs::{Array, Ctx, Function, Persistent, Result};
use std::cell::{Cell, RefCell};
use std::time::Duration;

thread_local! {
    static NEXT_WAIT: RefCell<Option<Persistent<Function<'static>>>> = const { RefCell::new(None) };
    static RUN_NEXT: RefCell<Option<Persistent<Function<'static>>>> = const { RefCell::new(None) };
    static CLEAR_ALL: RefCell<Option<Persistent<Function<'static>>>> = const { RefCell::new(None) };
    /// Whether a timer function ran since the timers were last cleared: only one can have set
    /// a timer (each asks [`admit`] first), so without one there is nothing to clear.
    static ADMITTED: Cell<bool> = const { Cell::new(false) };
}

const PRELUDE: &str = include_str!("timers.js");

/// Install the timer globals and keep `nextWait` and `runNext`. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let parts: Array = prelude.call((Func::from(admit),))?;
    let next_wait: Function = parts.get(0)?;
    let run_next: Function = parts.get(1)?;
    let clear_all: Function = parts.get(2)?;
    NEXT_WAIT.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, next_wait)));
    RUN_NEXT.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, run_next)));
    CLEAR_ALL.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, clear_all)));
    Ok(())
}

/// Called by each timer function before it does anything (`name` is the function): refused
/// by the host when the call's policy turns timers off.
fn admit(cx: Ctx<'_>, name: String) -> Result<()> {
    ADMITTED.set(true);
    if super::runtime::timers_off() {
        return Err(super::runtime::refuse(&cx, "timers", &name));
    }
    Ok(())
}

/// Time until the earliest timer is due; `None` when no timer is set. With timers off, a
/// pending timer (which no timer function would have admitted) is dropped and refused.
pub fn next_wait(cx: &Ctx<'_>) -> Result<Option<Duration>> {
    let next = NEXT_WAIT
        .with(|slot| slot.borrow().clone())
        .expect("timers were registered at init");
    let ms: f64 = next.restore(cx)?.call(())?;
    if ms >= 0.0 && super::runtime::timers_off() {
        clear_now(cx)?;
        return Err(super::runtime::refuse(cx, "timers", "setTimeout"));
    }
    Ok((ms >= 0.0).then(|| Duration::from_secs_f64(ms.min(1e9) / 1000.0)))
}

/// Run the earliest timer now.
pub fn run_next(cx: &Ctx<'_>) -> Result<()> {
    let run = RUN_NEXT
        .with(|slot| slot.borrow().clone())
        .expect("timers were registered at init");
    run.restore(cx)?.call(())
}

/// Drop every pending timer and interval: a live session's call ends with its result.
pub fn clear_all(cx: &Ctx<'_>) -> Result<()> {
    if ADMITTED.get() {
        clear_now(cx)?;
        ADMITTED.set(false);
    }
    Ok(())
}

fn clear_now(cx: &Ctx<'_>) -> Result<()> {
    let clear = CLEAR_ALL
        .with(|slot| slot.borrow().clone())
        .expect("timers were registered at init");
    clear.restore(cx)?.call(())
}
