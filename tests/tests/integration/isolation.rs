//! Nothing of one call is visible to the next; each call gets fresh randomness and real time.

use crate::support::*;

#[tokio::test]
async fn globals_clocks_and_randomness_do_not_carry_over() {
    let p = roomy();
    let mut randoms = Vec::new();
    let mut times = Vec::new();
    for _ in 0..3 {
        let outcome = run(&p, "isolation.js", "null").await;
        let value: serde_json::Value = serde_json::from_str(output(&outcome)).unwrap();
        assert_eq!(
            value[0], "undefined",
            "a global set by an earlier call is visible"
        );
        randoms.push(value[2].as_f64().unwrap());
        times.push(value[3].as_f64().unwrap());
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    randoms.dedup();
    assert_eq!(
        randoms.len(),
        3,
        "Math.random() repeated across calls: {randoms:?}"
    );
    assert!(
        times.windows(2).all(|w| w[1] > w[0]),
        "Date.now() did not advance: {times:?}"
    );
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as f64;
    assert!(
        (now_ms - times[2]).abs() < 60_000.0,
        "Date.now() is not the real time"
    );
}

#[tokio::test]
async fn prototype_pollution_does_not_carry_over() {
    let polluted = run_source("export default () => { Object.prototype.evil = 1; Array.prototype.push = null; return 1; }", "null").await;
    assert_eq!(output(&polluted), "1");
    let clean = run_source(
        "export default () => { const a = []; a.push(({}).evil); return a; }",
        "null",
    )
    .await;
    assert_eq!(output(&clean), "[null]");
}
