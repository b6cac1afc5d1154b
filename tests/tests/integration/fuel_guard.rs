//! A deterministic performance guard: the fuel each benchmark workload uses, from source and
//! compiled into a component (`palisade compile`), stays within ±3% of the recorded value in
//! `tests/fixtures/fuel.json` (`BLESS=1` records new values, to be
//! committed with the change that moved them and its benchmark figures). w1 is also measured
//! under policies that grant the capability bridge (`w1.bridge`) and a key-value bucket
//! (`w1.kv`), whose calls run in the full guest and get the `maia` or `kv` global.

use crate::support::*;
use palisade::Script;
use std::collections::BTreeMap;

#[tokio::test]
async fn workload_fuel_stays_within_three_percent() {
    const LIMITS: &str = "[limits]\nfuel = 10_000_000_000\ntimeout = \"30s\"\n";
    let plain = policy(LIMITS);
    let bridge = policy(&format!(
        "{LIMITS}[capabilities]\nglobal = \"maia\"\n[capabilities.allow.do]\n"
    ));
    let kv = policy(&format!(
        "{LIMITS}[kv]\nnamespace = \"fuel\"\n[kv.buckets]\nstate = \"rw\"\n"
    ));
    let dir = root().join("bench/workloads");
    let mut measured = BTreeMap::new();
    for (name, p, suffix) in [
        ("w1", &plain, ""),
        ("w2", &plain, ""),
        ("w3", &plain, ""),
        ("w4", &plain, ""),
        ("w1", &bridge, ".bridge"),
        ("w1", &kv, ".kv"),
    ] {
        let read =
            |suffix: &str| std::fs::read_to_string(dir.join(format!("{name}.{suffix}"))).unwrap();
        let source = format!(
            "{}\nexport default (input) => main(input);\n",
            read("main.js")
        );
        let script = Script::new(format!("{name}.js"), source);
        let compiled = PALISADE.compile(p, &script).await.unwrap();
        let compiled = Script::from_component(compiled).unwrap();
        let expected: serde_json::Value = serde_json::from_str(&read("expected.json")).unwrap();
        for (key, script) in [
            (format!("{name}{suffix}"), script),
            (format!("{name}{suffix}.compiled"), compiled),
        ] {
            // The first call from source also compiles the script to bytecode and is charged
            // for it; the guard measures the calls after that.
            let first = PALISADE.run(p, &script, &read("input.json")).await;
            let outcome = PALISADE.run(p, &script, &read("input.json")).await;
            assert!(
                first.receipt.fuel_used >= outcome.receipt.fuel_used,
                "{key}"
            );
            let got: serde_json::Value = serde_json::from_str(output(&outcome)).unwrap();
            assert_eq!(got, expected, "{key}");
            measured.insert(key, outcome.receipt.fuel_used);
        }
    }
    let path = root().join("tests/fixtures/fuel.json");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&measured).unwrap() + "\n",
        )
        .unwrap();
        return;
    }
    let recorded: BTreeMap<String, u64> = serde_json::from_str(
        &std::fs::read_to_string(&path).expect("tests/fixtures/fuel.json; run with BLESS=1"),
    )
    .unwrap();
    for (name, fuel) in &measured {
        let expected = recorded[name] as f64;
        let drift = (*fuel as f64 - expected) / expected;
        assert!(
            drift.abs() <= 0.03,
            "{name}: {fuel} fuel vs {expected} recorded ({:+.1}%)",
            drift * 100.0
        );
    }
}

/// The first global a call adds costs about what each further one costs: the global object
/// leaves initialization with room for more properties (`make_global_room` in the guest), so
/// installing a policy's global (the capability bridge, `kv`, `fs`, `config`) does not grow it
/// in every call. Before, the first global cost 10,000 wasm instructions and each further one
/// 1,500.
#[tokio::test]
async fn the_first_global_of_a_call_costs_no_more_than_the_next() {
    let p = policy("");
    let mut fuel = Vec::new();
    for n in 0..=2 {
        let sets: String = (0..n).map(|i| format!("globalThis.g{i} = {i}; ")).collect();
        let source = format!("export default () => {{ {sets}return {n}; }};");
        let outcome = PALISADE
            .run(&p, &Script::new("globals.js", source), "null")
            .await;
        assert_eq!(output(&outcome), n.to_string());
        fuel.push(outcome.receipt.fuel_used as i64);
    }
    let (first, second) = (fuel[1] - fuel[0], fuel[2] - fuel[1]);
    assert!(
        first < second * 3 / 2,
        "the first global cost {first} fuel, the second {second}"
    );
}
