//! A deterministic performance guard: the fuel each benchmark workload uses, from source and
//! compiled into a component (`palisade compile`), stays within ±3% of the recorded value in
//! `tests/fixtures/fuel.json` (`BLESS=1` records new values, to be
//! committed with the change that moved them and its benchmark figures).

use crate::support::*;
use palisade::Script;
use std::collections::BTreeMap;

#[tokio::test]
async fn workload_fuel_stays_within_three_percent() {
    let p = policy("[limits]\nfuel = 10_000_000_000\ntimeout = \"30s\"\n");
    let dir = root().join("bench/workloads");
    let mut measured = BTreeMap::new();
    for name in ["w1", "w2", "w3", "w4"] {
        let read =
            |suffix: &str| std::fs::read_to_string(dir.join(format!("{name}.{suffix}"))).unwrap();
        let source = format!(
            "{}\nexport default (input) => main(input);\n",
            read("main.js")
        );
        let script = Script::new(format!("{name}.js"), source);
        let compiled = PALISADE.compile(&p, &script).await.unwrap();
        let compiled = Script::from_component(compiled).unwrap();
        let expected: serde_json::Value = serde_json::from_str(&read("expected.json")).unwrap();
        for (key, script) in [
            (name.to_owned(), script),
            (format!("{name}.compiled"), compiled),
        ] {
            let outcome = PALISADE.run(&p, &script, &read("input.json")).await;
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
