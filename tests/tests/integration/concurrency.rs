//! One Palisade serves many concurrent calls from tokio tasks; hostile calls do not disturb
//! normal ones.

use crate::support::*;
use palisade::Policy;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_mixed_calls_all_come_back_right() {
    let normal = Arc::new(Policy::builtin_default());
    let tight = Arc::new(policy(
        "[limits]\nfuel = 200_000_000\ntimeout = \"2s\"\nmemory = \"16MiB\"\n",
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
