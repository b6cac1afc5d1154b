//! Calls under a key-value transaction (`RunOptions::kv_transaction`): the call reads its own
//! writes, nothing reaches the store until `Palisade::apply_kv`, and the apply meets another
//! writer as documented on `palisade::kv::KvWrites`. Regressions of issue 39, contract 1 (a dry
//! run kept its `kv.increment`).

use crate::support::*;
use palisade::kv::{KvError, KvOp};
use palisade::{Outcome, Policy, RunOptions, Script};
use serde_json::{Value, json};

fn kv_policy(namespace: &str, extra: &str) -> Policy {
    policy(&format!(
        "[kv]\nnamespace = \"{namespace}\"\n{extra}\n[kv.buckets]\napp = \"rw\"\n"
    ))
}

async fn call(policy: &Policy, source: &str, options: &RunOptions) -> Outcome {
    let script = Script::new("kv-transaction.js", source);
    PALISADE.run_with(policy, &script, "null", options).await
}

/// A call under a transaction.
async fn dry(policy: &Policy, source: &str) -> Outcome {
    call(policy, source, &RunOptions::default().kv_transaction()).await
}

/// A plain call, whose writes reach the store at once.
async fn direct(policy: &Policy, source: &str) -> Outcome {
    call(policy, source, &RunOptions::default()).await
}

fn json_of(outcome: &Outcome) -> Value {
    serde_json::from_str(output(outcome)).unwrap()
}

/// What the store holds, read by a plain call: every key of `app` with its value.
async fn stored(policy: &Policy) -> Value {
    let read = "export default async () => { const out = {}; \
                for (const k of (await kv.list({ limit: 1000 })).keys) out[k] = await kv.get(k); \
                return out; };";
    json_of(&direct(policy, read).await)
}

const INCREMENT: &str = "export default () => kv.increment(\"visits\");";

#[tokio::test]
async fn issue_39_two_dry_runs_of_an_increment_each_answer_1_and_store_nothing() {
    let p = kv_policy("tx-dry", "");
    for _ in 0..2 {
        let outcome = dry(&p, INCREMENT).await;
        assert_eq!(output(&outcome), "1");
        let writes = outcome.kv_writes.expect("a transaction's writes");
        let ops: Vec<_> = writes.iter().map(|w| (w.key.as_str(), &w.op)).collect();
        assert_eq!(ops, [("visits", &KvOp::Increment(1))]);
        // Dropped: a dry run.
    }
    assert_eq!(stored(&p).await, json!({}));
}

#[tokio::test]
async fn applied_writes_persist_exactly_once() {
    let p = kv_policy("tx-commit", "");
    let first = dry(&p, INCREMENT).await;
    assert_eq!(output(&first), "1");
    PALISADE.apply_kv(first.kv_writes.unwrap()).await.unwrap();
    assert_eq!(stored(&p).await, json!({ "visits": "1" }));
    // The next call sees the applied state, and its own apply adds once more.
    let second = dry(&p, INCREMENT).await;
    assert_eq!(output(&second), "2");
    PALISADE.apply_kv(second.kv_writes.unwrap()).await.unwrap();
    assert_eq!(stored(&p).await, json!({ "visits": "2" }));
}

#[tokio::test]
async fn a_call_reads_its_own_writes_through_every_operation() {
    let p = kv_policy("tx-read-own", "");
    assert_eq!(
        output(&direct(&p, "export default () => kv.set(\"old\", \"o\");").await),
        "null"
    );
    let source = r#"export default async () => {
      await kv.set("a", { n: 1 });
      const a = await kv.getJSON("a");
      const counts = [await kv.increment("c"), await kv.increment("c", 5)];
      await kv.delete("old");
      const swapped = [
        await kv.compareAndSwap("lock", null, "me"),
        await kv.compareAndSwap("lock", null, "you"),
        await kv.compareAndSwap("lock", "me", "done"),
      ];
      for (let i = 0; i < 120; i++) await kv.set(`item/${String(i).padStart(3, "0")}`, i);
      const page = await kv.list({ prefix: "item/", limit: 100 });
      const rest = await kv.list({ prefix: "item/", cursor: page.cursor });
      return {
        a, counts, swapped, lock: await kv.get("lock"), c: await kv.getJSON("c"),
        old: [await kv.has("old"), await kv.get("old")],
        listed: (await kv.list({ limit: 4 })).keys,
        items: [page.keys.length, page.keys[0], rest.keys.length, rest.keys[19], rest.cursor],
      };
    };"#;
    let outcome = dry(&p, source).await;
    assert_eq!(
        json_of(&outcome),
        json!({
            "a": { "n": 1 }, "counts": [1, 6], "swapped": [true, false, true], "lock": "done",
            "c": 6, "old": [false, null], "listed": ["a", "c", "item/000", "item/001"],
            "items": [100, "item/000", 20, "item/119", null],
        })
    );
    assert_eq!(stored(&p).await, json!({ "old": "o" }));
    PALISADE.apply_kv(outcome.kv_writes.unwrap()).await.unwrap();
    let after = stored(&p).await;
    assert_eq!(
        after.as_object().unwrap().len(),
        123,
        "a, c, lock and 120 items"
    );
    assert_eq!(
        [&after["a"], &after["c"], &after["lock"], &after["item/119"]],
        [
            &json!("{\"n\":1}"),
            &json!("6"),
            &json!("done"),
            &json!("119")
        ]
    );
    assert_eq!(after.get("old"), None);
}

/// `[name, rule, fix]` of the error a kv body throws, caught in the script.
fn refusal_source(body: &str) -> String {
    format!(
        "export default async () => {{ try {{ {body}; return \"no error\"; }} \
         catch (e) {{ return [e.name, e.rule ?? null, e.fix ?? null]; }} }};"
    )
}

#[tokio::test]
async fn a_quota_overrun_in_a_transaction_is_refused_as_without_one() {
    let p = kv_policy("tx-quota", "max_keys = 2");
    let body = "await kv.set(\"a\", 1); await kv.set(\"b\", 2); await kv.set(\"a\", 3); \
                await kv.set(\"c\", 4)";
    let expected = json!(["PolicyDeniedError", "kv.max_keys", "kv.max_keys = 4"]);
    let in_transaction = dry(&p, &refusal_source(body)).await;
    assert_eq!(json_of(&in_transaction), expected);
    // Uncaught, the same code either way.
    let uncaught = format!("export default async () => {{ {body}; }};");
    assert_eq!(code(&dry(&p, &uncaught).await), "policy_denied");
    assert_eq!(stored(&p).await, json!({}));
    assert_eq!(json_of(&direct(&p, &refusal_source(body)).await), expected);
    let p2 = kv_policy("tx-quota-2", "max_keys = 2");
    assert_eq!(code(&direct(&p2, &uncaught).await), "policy_denied");
    assert_next_call_works().await;
}

#[tokio::test]
async fn an_apply_after_another_writer_adds_increments_and_refuses_a_moved_swap() {
    let p = kv_policy("tx-conflict", "");
    let seed =
        "export default async () => { await kv.set(\"n\", 5); await kv.set(\"lock\", \"free\"); };";
    output(&direct(&p, seed).await);
    // An increment applies as a delta over another writer's.
    let counted = dry(&p, INCREMENT.replace("visits", "n").as_str()).await;
    assert_eq!(output(&counted), "6");
    output(&direct(&p, "export default () => kv.increment(\"n\", 10);").await);
    PALISADE.apply_kv(counted.kv_writes.unwrap()).await.unwrap();
    assert_eq!(stored(&p).await, json!({ "lock": "free", "n": "16" }));
    // A swap whose value another writer moved fails the apply, which writes nothing.
    let swap = "export default async () => { await kv.increment(\"n\"); \
                return kv.compareAndSwap(\"lock\", \"free\", \"mine\"); };";
    let swapped = dry(&p, swap).await;
    assert_eq!(output(&swapped), "true");
    output(&direct(&p, "export default () => kv.set(\"lock\", \"theirs\");").await);
    let applied = PALISADE.apply_kv(swapped.kv_writes.unwrap()).await;
    assert_eq!(
        applied,
        Err(KvError::Conflict {
            bucket: "app".into(),
            key: "lock".into()
        })
    );
    assert_eq!(stored(&p).await, json!({ "lock": "theirs", "n": "16" }));
    assert_next_call_works().await;
}

#[tokio::test]
async fn calls_without_the_option_write_through_and_carry_no_writes() {
    let p = kv_policy("tx-plain", "");
    let outcome = direct(&p, INCREMENT).await;
    assert_eq!(output(&outcome), "1");
    assert!(outcome.kv_writes.is_none());
    assert_eq!(stored(&p).await, json!({ "visits": "1" }));
    // Serialised, an outcome under a transaction is the same as without one.
    let in_transaction = dry(&p, INCREMENT).await;
    let shown = serde_json::to_value(&in_transaction).unwrap();
    assert_eq!(shown["output"], json!(2));
    assert_eq!(shown.get("kv_writes"), None);
    // A policy without [kv] gets an empty set of writes.
    let plain = call(
        &Policy::builtin_default(),
        "export default () => 1;",
        &RunOptions::default().kv_transaction(),
    )
    .await;
    assert!(plain.kv_writes.unwrap().is_empty());
}

#[tokio::test]
async fn a_failed_call_hands_back_its_writes_and_stores_none() {
    let p = kv_policy("tx-failed", "");
    let source =
        "export default async () => { await kv.set(\"k\", \"v\"); throw new Error(\"no\"); };";
    let outcome = dry(&p, source).await;
    assert_eq!(code(&outcome), "guest_exception");
    let writes = outcome.kv_writes.unwrap();
    assert_eq!(writes.iter().count(), 1);
    assert_eq!(stored(&p).await, json!({}));
    assert_next_call_works().await;
}
