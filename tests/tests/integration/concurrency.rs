//! One Palisade serves many concurrent calls from tokio tasks; hostile calls do not disturb
//! normal ones.

use crate::support::*;
use palisade::Policy;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_mixed_calls_all_come_back_right() {
    let normal = Arc::new(Policy::builtin_default());
    let tight = Arc::new(policy(
        // A long deadline: on a loaded machine the fuel must still be what ends the loop.
        "[limits]\nfuel = 200_000_000\ntimeout = \"60s\"\nmemory = \"16MiB\"\n",
    ));
    let mut tasks = Vec::new();
    for i in 0..200u32 {
        let (normal, tight) = (normal.clone(), tight.clone());
        tasks.push(tokio::spawn(async move {
            let (fixture, expected): (&str, Result<String, &str>) = match i % 5 {
                0 => ("infinite_loop.js", Err("fuel_exhausted")),
                1 => ("memory_bomb.js", Err("memory_limit")),
                2 => ("throws_type_error.js", Err("guest_exception")),
                _ => ("echo.js", Ok(format!(r#"{{"got":{i}}}"#))),
            };
            let p = if i % 5 < 2 { tight } else { normal };
            let outcome = run(&p, fixture, &i.to_string()).await;
            match expected {
                Ok(json) => assert_eq!(output(&outcome), json, "call {i}"),
                Err(expected_code) => assert_eq!(code(&outcome), expected_code, "call {i}"),
            }
        }));
    }
    for task in tasks {
        task.await.expect("task finished without panicking");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_admission_limit_calls_wait_then_fail_with_capacity_exhausted() {
    let palisade = palisade::Palisade::builder()
        .max_concurrency(1)
        .queue_timeout(std::time::Duration::from_millis(50))
        .build()
        .unwrap();
    let slow = policy("[limits]\nfuel = 1_000_000_000_000\ntimeout = \"500ms\"\n");
    let busy = {
        let (palisade, slow) = (palisade.clone(), slow.clone());
        tokio::spawn(async move {
            palisade
                .run(&slow, &fixture("infinite_loop.js"), "null")
                .await
        })
    };
    // The loop holds the only slot once its task has started; until then (a loaded machine
    // may start it late) a probe takes the free slot and runs.
    let mut refused = None;
    for _ in 0..40 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        let probe = palisade
            .run(&Policy::builtin_default(), &fixture("echo.js"), "1")
            .await;
        if probe.result.is_ok() {
            continue;
        }
        refused = Some(probe);
        break;
    }
    let refused = refused.expect("a call was refused while the loop held the slot");
    assert_eq!(code(&refused), "capacity_exhausted");
    assert_eq!(refused.error().unwrap().http_status(), 503);
    assert_eq!(code(&busy.await.unwrap()), "timeout");
    let after = palisade
        .run(&Policy::builtin_default(), &fixture("echo.js"), "1")
        .await;
    assert_eq!(output(&after), r#"{"got":1}"#, "the slot is free again");
}

/// On a single-threaded executor, a CPU-bound guest yields after every fuel slice, so a short call
/// started after it finishes while the loop is still running.
#[tokio::test(flavor = "current_thread")]
async fn a_cpu_bound_guest_does_not_starve_other_tasks() {
    let slow = policy("[limits]\nfuel = 1_000_000_000_000\ntimeout = \"400ms\"\n");
    let looping = tokio::spawn(async move {
        PALISADE
            .run(&slow, &fixture("infinite_loop.js"), "null")
            .await
    });
    tokio::task::yield_now().await;
    let quick = PALISADE
        .run(&Policy::builtin_default(), &fixture("echo.js"), "5")
        .await;
    assert_eq!(output(&quick), r#"{"got":5}"#);
    assert!(
        !looping.is_finished(),
        "the quick call had to wait for the loop to end"
    );
    let looped = looping.await.unwrap();
    assert_eq!(code(&looped), "timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_both_guests_share_one_pool() {
    // Eight slots, 64 calls at once, alternating between a policy that runs in the plain guest
    // and one that runs in the full guest: the two guests' instances take the same slots.
    let palisade = palisade::Palisade::builder()
        .max_concurrency(8)
        .build()
        .unwrap();
    let plain = Arc::new(Policy::builtin_default());
    let full = Arc::new(policy("[config]\nregion = \"eu\"\n"));
    let source = "export default (n) => { \
        try { return [n, config.get('region')]; } catch (e) { return [n, e.name]; } };";
    let mut tasks = Vec::new();
    for i in 0..64u32 {
        let (palisade, plain, full) = (palisade.clone(), plain.clone(), full.clone());
        tasks.push(tokio::spawn(async move {
            let (p, expected) = if i % 2 == 0 {
                (plain, format!(r#"[{i},"PolicyDeniedError"]"#))
            } else {
                (full, format!(r#"[{i},"eu"]"#))
            };
            let script = palisade::Script::new("both.js", source);
            let outcome = palisade.run(&p, &script, &i.to_string()).await;
            assert_eq!(output(&outcome), expected, "call {i}");
        }));
    }
    for task in tasks {
        task.await.expect("task finished without panicking");
    }
}
