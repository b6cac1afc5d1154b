//! The floor under `palisade serve`'s throughput: the smallest axum server that answers
//! `POST /v1/run`, with none of the server's tenants, admission, idempotency, metrics or audit.
//! `bench/serve/floor.sh` runs it beside `palisade serve` and the in-process bench
//! (docs/bench.md).
//!
//! ```sh
//! serve_floor PORT spin MICROS   # parse the body, busy-wait MICROS µs, answer a fixed Outcome
//! serve_floor PORT library SLOTS # parse the body, run its script with the library (the
//!                                # built-in default policy, `max_concurrency(SLOTS)`)
//! ```

use axum::body::Bytes;
use axum::routing::post;
use palisade::{Palisade, Policy, Script};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a request does besides HTTP.
enum Work {
    /// Busy-wait this long on the worker thread.
    Spin(Duration),
    /// Run the body's script in a fresh sandbox.
    Library(Palisade, Box<Policy>),
}

async fn run(work: Arc<Work>, body: Bytes) -> ([(&'static str, &'static str); 1], String) {
    let json = [("content-type", "application/json")];
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let input = request["input"].to_string();
    match &*work {
        Work::Spin(length) => {
            let started = Instant::now();
            while started.elapsed() < *length {
                std::hint::spin_loop();
            }
            (
                json,
                format!(r#"{{"ok":true,"output":{input},"logs":[],"audit":[]}}"#),
            )
        }
        Work::Library(palisade, policy) => {
            let script = request["script"]["source"]
                .as_str()
                .or(request["source"].as_str())
                .unwrap_or("");
            let outcome = palisade
                .run(policy, &Script::new("request.js", script), &input)
                .await;
            let body = serde_json::to_string(&outcome).unwrap_or_default();
            (json, body)
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: serve_floor PORT (spin MICROS | library SLOTS)";
    let [port, mode, n] = args.as_slice() else {
        return Err(usage.into());
    };
    let port: u16 = port.parse().map_err(|_| usage)?;
    let n: u64 = n.parse().map_err(|_| usage)?;
    let work = match mode.as_str() {
        "spin" => Work::Spin(Duration::from_micros(n)),
        "library" => Work::Library(
            Palisade::builder()
                .max_concurrency(u32::try_from(n).map_err(|_| usage)?)
                .build()
                .map_err(|e| e.to_string())?,
            Box::new(Policy::builtin_default()),
        ),
        _ => return Err(usage.into()),
    };
    let work = Arc::new(work);
    let app =
        axum::Router::new().route("/v1/run", post(move |body: Bytes| run(work.clone(), body)));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    axum::serve(listener, app).await.map_err(|e| e.to_string())
}
