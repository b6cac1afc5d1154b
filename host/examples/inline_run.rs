//! What a policy sent with a call costs `POST /v1/run` w1 beside a named one, whole request:
//! the server's router (`palisade::serve::router`: authentication, admission, the policy read
//! and resolved, the sandbox call, the answer written) driven in process with tower's `oneshot`,
//! without TCP or a client, one request at a time, named and inline in alternating rounds. Per
//! request it reports the wall time and the CPU time of all the process's threads (from
//! `/proc/self/task/*/schedstat`), each round's inline/named ratio, and their medians (docs/bench.md,
//! "Inline policies"). Run from the repository's root:
//!
//! ```sh
//! cargo run --release -p palisade --features serve --example inline_run [ROUNDS] [REQUESTS] [same]
//! ```
//!
//! With `same`, the "inline" rounds send the named body too: the ratios then show how far two
//! identical runs differ on this machine (the benchmark's resolution).

use axum::body::Body;
use axum::http::{Request, StatusCode};
use palisade::serve::{AppState, Config, router};
use std::time::Instant;
use tower::ServiceExt;

/// The inline policy: the built-in default's limits, so only where the policy comes from
/// differs (as `bench/serve/inline.sh` sends it).
const INLINE: &str = r#"{"description":"per-user","limits":{"timeout":"1s"}}"#;

/// The w1 request body under `policy` (JSON text: a name or an object), as
/// `bench/serve/w1-body.sh` writes it.
fn w1_body(policy: &str) -> String {
    let read = |name: &str| {
        std::fs::read_to_string(format!("bench/workloads/{name}")).unwrap_or_else(|e| {
            panic!("bench/workloads/{name} (run from the repository's root): {e}")
        })
    };
    let source = format!("{}\nexport default main;\n", read("w1.main.js"));
    let rest = serde_json::json!({
        "script": {"name": "w1.js", "source": source},
        "input": serde_json::from_str::<serde_json::Value>(&read("w1.input.json")).unwrap(),
    });
    format!(r#"{{"policy":{policy},{}"#, &rest.to_string()[1..])
}

/// The CPU time of the process's threads so far, in nanoseconds: the sum of the first field
/// of each `/proc/self/task/*/schedstat` (time on a CPU; the worker threads live as long as the
/// process, so none of a round's time leaves with an exited thread).
fn cpu_nanos() -> u64 {
    let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// Per request: wall microseconds and CPU microseconds over `requests` calls with `body`.
async fn round(app: &axum::Router, body: &str, requests: u32) -> (f64, f64) {
    let (started, cpu) = (Instant::now(), cpu_nanos());
    for _ in 0..requests {
        let request = Request::post("/v1/run")
            .header("content-type", "application/json")
            .body(Body::from(body.to_owned()))
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        assert_eq!(
            status,
            StatusCode::OK,
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }
    let wall = started.elapsed().as_secs_f64() * 1e6 / f64::from(requests);
    let cpu = (cpu_nanos() - cpu) as f64 / 1e3 / f64::from(requests);
    (wall, cpu)
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map_or(9, |a| a.parse().expect("ROUNDS"));
    let requests: u32 = args.next().map_or(2_000, |a| a.parse().expect("REQUESTS"));
    let data = std::env::temp_dir().join(format!("palisade-inline-run-{}", std::process::id()));
    let mut config = Config::new(data.clone());
    config.inline_ceiling = Some("default".to_owned());
    let app = router(AppState::open(config).expect("the server state opens"));
    let same = args.next().is_some_and(|a| a == "same");
    let named = w1_body("\"default\"");
    let inline = if same { named.clone() } else { w1_body(INLINE) };
    round(&app, &named, 200).await;
    round(&app, &inline, 200).await;
    // (wall, cpu) per request, by round.
    let (mut n, mut i) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        if r % 2 == 0 {
            n.push(round(&app, &named, requests).await);
            i.push(round(&app, &inline, requests).await);
        } else {
            i.push(round(&app, &inline, requests).await);
            n.push(round(&app, &named, requests).await);
        }
        let (a, b) = (n[r], i[r]);
        println!(
            "round {r}: named {:.1} µs wall {:.1} µs CPU, inline {:.1} µs wall {:.1} µs CPU",
            a.0, a.1, b.0, b.1
        );
    }
    let _ = std::fs::remove_dir_all(&data);
    let wall = |v: &[(f64, f64)]| v.iter().map(|x| x.0).collect::<Vec<_>>();
    let cpu = |v: &[(f64, f64)]| v.iter().map(|x| x.1).collect::<Vec<_>>();
    let ratio = |a: Vec<f64>, b: Vec<f64>| {
        median(&a.iter().zip(&b).map(|(n, i)| i / n).collect::<Vec<_>>())
    };
    println!("{rounds} rounds of {requests} requests each, one at a time, medians per request:");
    println!(
        "named {:.1} µs wall, {:.1} µs CPU; inline {:.1} µs wall, {:.1} µs CPU",
        median(&wall(&n)),
        median(&cpu(&n)),
        median(&wall(&i)),
        median(&cpu(&i))
    );
    println!(
        "median of each round's inline/named: wall {:.3}, CPU {:.3}",
        ratio(wall(&n), wall(&i)),
        ratio(cpu(&n), cpu(&i))
    );
}
