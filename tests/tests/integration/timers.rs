//! Timers and the guest's event loop: timers run when no job is left, in due order; waiting on
//! them counts against the deadline; `atob`/`btoa` work as in browsers.

use crate::support::*;
use palisade::Policy;

#[tokio::test]
async fn timers_run_in_due_order_and_can_be_cleared() {
    let source = "export default async () => { const order = []; \
        setTimeout(() => order.push('late'), 30); \
        const c = setTimeout(() => order.push('cleared'), 5); clearTimeout(c); \
        setTimeout((x) => order.push(x), 0, 'soon'); \
        queueMicrotask(() => order.push('micro')); \
        await new Promise((r) => setTimeout(r, 40)); return order; }";
    assert_eq!(
        output(&run_source(source, "null").await),
        r#"["micro","soon","late"]"#
    );
}

#[tokio::test]
async fn ten_concurrent_timers_share_one_wait() {
    // Sequential waits would take a second; the loop sleeps until the earliest is due, so all
    // ten are due after about 100 ms.
    let p = policy("[limits]\ntimeout = \"5s\"\n");
    let source = "export default async () => { const t0 = Date.now(); \
        await Promise.all(Array.from({ length: 10 }, (_, i) => new Promise((r) => setTimeout(r, 100, i)))); \
        return Date.now() - t0; }";
    let outcome = PALISADE
        .run(&p, &palisade::Script::new("t.js", source), "null")
        .await;
    let elapsed: f64 = output(&outcome).parse().unwrap();
    assert!((100.0..600.0).contains(&elapsed), "took {elapsed} ms");
}

#[tokio::test]
async fn waiting_on_a_timer_counts_against_the_deadline() {
    let p = policy("[limits]\ntimeout = \"150ms\"\n");
    let source = "export default () => new Promise((r) => setTimeout(r, 5000))";
    let outcome = PALISADE
        .run(&p, &palisade::Script::new("t.js", source), "null")
        .await;
    assert_eq!(code(&outcome), "timeout");
    assert_next_call_works().await;
}

#[tokio::test]
async fn an_exception_in_a_timer_fails_the_call() {
    let source = "export default () => new Promise(() => setTimeout(() => { throw new RangeError('in timer'); }, 1))";
    let outcome = run_source(source, "null").await;
    match outcome.error() {
        Some(palisade::Error::GuestException { name, message, .. }) => {
            assert_eq!(
                (name.as_str(), message.as_str()),
                ("RangeError", "in timer")
            );
        }
        other => panic!("expected guest_exception, got {other:?}"),
    }
}

#[tokio::test]
async fn under_a_fixed_clock_timers_fire_without_waiting() {
    let p = Policy::from_file(root().join("policies/deterministic-action.toml")).unwrap();
    let source = "export default async () => { const order = []; \
        setTimeout(() => order.push(2), 60000); setTimeout(() => order.push(1), 30000); \
        await new Promise((r) => setTimeout(r, 90000)); return [order, Date.now()]; }";
    let outcome = PALISADE
        .run(&p, &palisade::Script::new("t.js", source), "null")
        .await;
    assert_eq!(output(&outcome), "[[1,2],1704067200000]");
}

#[tokio::test]
async fn base64_round_trips_and_refuses_bad_input() {
    let source = "export default () => { const out = [btoa('hello'), atob('aGVsbG8='), atob(btoa('\\u00ff\\u0000a'))]; \
        for (const f of [() => btoa('\\u0100'), () => atob('a')]) { try { f(); } catch (e) { out.push(e.name); } } return out; }";
    assert_eq!(
        output(&run_source(source, "null").await),
        r#"["aGVsbG8=","hello","ÿ\u0000a","InvalidCharacterError","InvalidCharacterError"]"#
    );
}

#[tokio::test]
async fn intervals_repeat_until_cleared_and_wrap_their_delay_like_webidl_long() {
    // `2 ** 32` is a WebIDL `long` 0: that interval runs before the 10 ms timeout; the other
    // one clears itself on its third run.
    let source = "export default async () => { const out = []; let n = 0; \
        const wrapped = setInterval(() => { out.push('wrapped'); clearInterval(wrapped); }, 2 ** 32); \
        const id = setInterval((tag) => { out.push(tag + ++n); if (n === 3) clearInterval(id); }, 1, 'tick'); \
        await new Promise((r) => setTimeout(r, 10)); \
        await new Promise((r) => setTimeout(r, 20)); return out; }";
    assert_eq!(
        output(&run_source(source, "null").await),
        r#"["wrapped","tick1","tick2","tick3"]"#
    );
}

#[tokio::test]
async fn a_runaway_interval_ends_at_the_deadline_and_the_next_call_is_normal() {
    // The result never settles and an interval fires for ever: each turn waits at least 4 ms
    // once it nests (HTML's floor), so the call ends at its deadline, not by fuel or a flood.
    let p = policy("[limits]\ntimeout = \"300ms\"\nfuel = 100_000_000_000\n");
    let source =
        "let n = 0; export default () => new Promise(() => setInterval(() => { n++; }, 0))";
    let outcome = PALISADE
        .run(&p, &palisade::Script::new("t.js", source), "null")
        .await;
    assert_eq!(code(&outcome), "timeout");
    assert_next_call_works().await;
}

#[tokio::test]
async fn under_a_fixed_clock_an_interval_does_not_starve_a_later_timer() {
    // The fixed clock does not move: the timers count from the last due time instead, so the
    // 1 s interval fires three times before the 3.5 s timeout.
    let p = Policy::from_file(root().join("policies/deterministic-action.toml")).unwrap();
    let source = "export default async () => { let n = 0; \
        const id = setInterval(() => n++, 1000); \
        await new Promise((r) => setTimeout(r, 3500)); clearInterval(id); return n; }";
    let outcome = PALISADE
        .run(&p, &palisade::Script::new("t.js", source), "null")
        .await;
    assert_eq!(output(&outcome), "3");
}

#[tokio::test]
async fn message_channels_deliver_clones_asynchronously() {
    let source = "export default () => new Promise((resolve) => { \
        const { port1, port2 } = new MessageChannel(); const sent = { n: 1, list: [2] }; \
        const order = []; \
        port2.onmessage = (e) => { order.push('message'); \
          resolve([order, e.data, e.data !== sent, e instanceof MessageEvent, e.detail ?? null]); }; \
        port1.postMessage(sent); order.push('posted'); }); ";
    assert_eq!(
        output(&run_source(source, "null").await),
        r#"[["posted","message"],{"n":1,"list":[2]},true,true,null]"#
    );
}
