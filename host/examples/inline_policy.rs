//! What a policy sent with a call costs `palisade serve` beside a named one, before the sandbox
//! runs: the request's policy fields read (`inline::from_fields`) and the policy resolved
//! (`Policies::resolve`), named against inline (admitted once, then from the cache), each
//! timed over many calls in alternating rounds (docs/bench.md, "Inline policies").
//!
//! ```sh
//! cargo run --release -p palisade --features serve --example inline_policy [ROUNDS] [CALLS]
//! ```

use palisade::serve::auth::Tenant;
use palisade::serve::catalog::Policies;
use palisade::serve::inline;
use palisade::serve::metrics::Metrics;
use serde_json::value::RawValue;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

/// Mean nanoseconds per call of reading `policy` (a request's `policy` field) and resolving it.
fn per_call(policies: &Policies, tenant: &Tenant, policy: &RawValue, calls: u32) -> f64 {
    let started = Instant::now();
    for _ in 0..calls {
        let given = inline::from_fields(Some(policy), None)
            .expect("a policy field")
            .expect("a policy");
        black_box(policies.resolve(tenant, given.as_ref()).expect("admitted"));
    }
    started.elapsed().as_nanos() as f64 / f64::from(calls)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map_or(5, |a| a.parse().expect("ROUNDS"));
    let calls: u32 = args.next().map_or(100_000, |a| a.parse().expect("CALLS"));
    let policies = Policies::open(None, Arc::new(Metrics::new()))
        .with_inline_ceiling(Some("default".to_owned()));
    let tenant = Tenant::local();
    let named = RawValue::from_string("\"default\"".to_owned()).unwrap();
    let sent = r#"{"description":"per-user","limits":{"timeout":"1s"}}"#;
    let inline = RawValue::from_string(sent.to_owned()).unwrap();
    let (mut n, mut i) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 0 {
            n.push(per_call(&policies, &tenant, &named, calls));
            i.push(per_call(&policies, &tenant, &inline, calls));
        } else {
            i.push(per_call(&policies, &tenant, &inline, calls));
            n.push(per_call(&policies, &tenant, &named, calls));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (n, i) = (median(&mut n), median(&mut i));
    println!("policy read and resolved, median of {rounds} rounds of {calls} calls:");
    println!(
        "named {n:.0} ns, inline {i:.0} ns per call (inline adds {:.0} ns)",
        i - n
    );
}
