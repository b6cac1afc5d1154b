//! The floor under `palisade serve`'s throughput: the smallest axum server that answers
//! `POST /v1/run`, with none of the server's tenants, admission, idempotency, metrics or audit.
//! `bench/serve/floor.sh` runs it beside `palisade serve` and the in-process bench
//! (docs/bench.md).
//!
//! ```sh
//! serve_floor PORT spin MICROS                       # parse the body, busy-wait MICROS µs,
//!                                                    # answer a fixed Outcome
//! serve_floor PORT library CONCURRENCY [POOL_SLOTS]  # parse the body, run its script with the
//!                                                    # library (the built-in default policy)
//! ```
//!
//! A body that is not JSON is answered 400, a call that fails 422 with its Outcome, so that
//! wrk's count of other answers shows a broken measurement.

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::routing::post;
use palisade::{Palisade, Policy, Script};
use serde_json::Value;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a request does besides HTTP.
enum Work {
    /// Busy-wait this long on the worker thread.
    Spin(Duration),
    /// Run the body's script in a fresh sandbox.
    Library(Palisade, Box<Policy>),
}

type Answer = (StatusCode, [(&'static str, &'static str); 1], String);

async fn run(work: Arc<Work>, body: Bytes) -> Answer {
    let json = [("content-type", "application/json")];
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, json, "{}".to_owned());
    };
    let input = request["input"].to_string();
    match &*work {
        Work::Spin(length) => {
            let started = Instant::now();
            while started.elapsed() < *length {
                std::hint::spin_loop();
            }
            let body = format!(r#"{{"ok":true,"output":{input},"logs":[],"audit":[]}}"#);
            (StatusCode::OK, json, body)
        }
        Work::Library(palisade, policy) => {
            let source = request["script"]["source"]
                .as_str()
                .or(request["source"].as_str())
                .unwrap_or_default();
            let outcome = palisade
                .run(policy, &Script::new("request.js", source), &input)
                .await;
            let status = match outcome.error() {
                None => StatusCode::OK,
                Some(_) => StatusCode::UNPROCESSABLE_ENTITY,
            };
            (
                status,
                json,
                serde_json::to_string(&outcome).unwrap_or_default(),
            )
        }
    }
}

fn work(args: &[String]) -> Option<(u16, Work)> {
    let port = args.first()?.parse().ok()?;
    let number = |i: usize| args.get(i)?.parse::<u32>().ok();
    let work = match (args.get(1)?.as_str(), args.len()) {
        ("spin", 3) => Work::Spin(Duration::from_micros(number(2)?.into())),
        ("library", 3 | 4) => {
            let mut builder = Palisade::builder().max_concurrency(number(2)?);
            if args.len() == 4 {
                builder = builder.pool_slots(number(3)?);
            }
            match builder.build() {
                Ok(palisade) => Work::Library(palisade, Box::new(Policy::builtin_default())),
                Err(e) => {
                    eprintln!("serve_floor: {e}");
                    return None;
                }
            }
        }
        _ => return None,
    };
    Some((port, work))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((port, work)) = work(&args) else {
        eprintln!("usage: serve_floor PORT (spin MICROS | library CONCURRENCY [POOL_SLOTS])");
        return ExitCode::from(2);
    };
    let work = Arc::new(work);
    let app =
        axum::Router::new().route("/v1/run", post(move |body: Bytes| run(work.clone(), body)));
    let served = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(listener) => axum::serve(listener, app).await,
        Err(e) => Err(e),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("serve_floor: 127.0.0.1:{port}: {e}");
            ExitCode::FAILURE
        }
    }
}
