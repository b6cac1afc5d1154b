//! The overlay alone, over a real store: what a call sees, what reaches the store, and how an
//! apply meets another writer.

use super::KvOverlay;
use crate::kv::{KvBackend, KvError, KvOp, KvWrites, RedbBackend, SqliteBackend};
use std::sync::Arc;

/// A fresh SQLite store, and its folder to remove.
fn store(name: &str) -> (Arc<SqliteBackend>, std::path::PathBuf) {
    let dir = crate::kv::tests::dir(&format!("overlay-{name}"));
    let store = SqliteBackend::open(dir.join("kv.sqlite3")).unwrap();
    (Arc::new(store), dir)
}

fn text(value: Option<Vec<u8>>) -> Option<String> {
    value.map(|v| String::from_utf8(v).unwrap())
}

#[test]
fn reads_see_the_calls_writes_and_the_store_sees_none() {
    let (base, dir) = store("reads");
    base.set("ns", "b", "kept", b"1", 10).unwrap();
    base.set("ns", "b", "gone", b"2", 10).unwrap();
    let view = KvOverlay::new(base.clone());
    assert_eq!(view.increment("ns", "b", "n", 1, 10), Ok(1));
    assert_eq!(view.increment("ns", "b", "n", 4, 10), Ok(5));
    view.set("ns", "b", "a", b"x", 10).unwrap();
    view.delete("ns", "b", "gone").unwrap();
    assert!(
        view.compare_and_swap("ns", "b", "a", Some(b"x"), b"y", 10)
            .unwrap()
    );
    assert!(
        !view
            .compare_and_swap("ns", "b", "kept", Some(b"9"), b"z", 10)
            .unwrap()
    );
    assert_eq!(
        text(view.get("ns", "b", "n").unwrap()).as_deref(),
        Some("5")
    );
    assert_eq!(
        text(view.get("ns", "b", "a").unwrap()).as_deref(),
        Some("y")
    );
    assert_eq!(view.get("ns", "b", "gone").unwrap(), None);
    assert_eq!(
        text(view.get("ns", "b", "kept").unwrap()).as_deref(),
        Some("1")
    );
    assert_eq!(view.list("ns", "b", 0, 10).unwrap(), ["a", "kept", "n"]);
    assert_eq!(view.list("ns", "b", 1, 1).unwrap(), ["kept"]);
    assert_eq!(view.list("ns", "b", 2, 10).unwrap(), ["n"]);
    assert!(view.list("ns", "other", 0, 10).unwrap().is_empty());
    assert_eq!(view.key_count("ns"), Ok(3));
    // The store is as it was.
    assert_eq!(base.list("ns", "b", 0, 10).unwrap(), ["gone", "kept"]);
    assert_eq!(base.get("ns", "b", "n").unwrap(), None);
    assert_eq!(base.key_count("ns"), Ok(2));
    let writes = view.finish();
    assert_eq!(
        view.get("ns", "b", "n"),
        Err(KvError::Backend("the call has ended".into()))
    );
    writes.apply(base.as_ref()).unwrap();
    assert_eq!(base.list("ns", "b", 0, 10).unwrap(), ["a", "kept", "n"]);
    assert_eq!(
        text(base.get("ns", "b", "n").unwrap()).as_deref(),
        Some("5")
    );
    assert_eq!(base.key_count("ns"), Ok(3));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn quotas_count_the_calls_keys_as_the_store_would() {
    let (base, dir) = store("quota");
    base.set("ns", "b", "old", b"1", 2).unwrap();
    let view = KvOverlay::new(base.clone());
    view.set("ns", "b", "new", b"1", 2).unwrap();
    view.set("ns", "b", "new", b"2", 2).unwrap();
    assert_eq!(
        view.set("ns", "b", "third", b"1", 2),
        Err(KvError::TooManyKeys { limit: 2 })
    );
    assert_eq!(
        view.increment("ns", "other", "c", 1, 2),
        Err(KvError::TooManyKeys { limit: 2 })
    );
    view.delete("ns", "b", "old").unwrap();
    view.set("ns", "b", "third", b"1", 2).unwrap();
    assert_eq!(view.list("ns", "b", 0, 10).unwrap(), ["new", "third"]);
    // The refused writes left nothing behind.
    let writes = view.finish();
    assert_eq!(writes.iter().count(), 3);
    writes.apply(base.as_ref()).unwrap();
    assert_eq!(base.list("ns", "b", 0, 10).unwrap(), ["new", "third"]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// An increment applies as a delta over another writer's; a compare-and-swap whose value
/// another writer moved fails the whole apply.
fn apply_meets_another_writer(base: Arc<dyn KvBackend>) {
    base.set("ns", "b", "n", b"5", 10).unwrap();
    base.set("ns", "b", "lock", b"free", 10).unwrap();
    let view = KvOverlay::new(base.clone());
    assert_eq!(view.increment("ns", "b", "n", 1, 10), Ok(6));
    let counted = view.finish();
    assert_eq!(base.increment("ns", "b", "n", 10, 10), Ok(15));
    counted.apply(base.as_ref()).unwrap();
    assert_eq!(
        base.get("ns", "b", "n").unwrap().as_deref(),
        Some(&b"16"[..])
    );

    let view = KvOverlay::new(base.clone());
    view.set("ns", "b", "also", b"1", 10).unwrap();
    assert!(
        view.compare_and_swap("ns", "b", "lock", Some(b"free"), b"me", 10)
            .unwrap()
    );
    let swapped = view.finish();
    base.set("ns", "b", "lock", b"you", 10).unwrap();
    let conflict = Err(KvError::Conflict {
        bucket: "b".into(),
        key: "lock".into(),
    });
    assert_eq!(swapped.apply(base.as_ref()), conflict);
    assert_eq!(
        base.get("ns", "b", "also").unwrap(),
        None,
        "nothing applied"
    );
    assert_eq!(
        base.get("ns", "b", "lock").unwrap().as_deref(),
        Some(&b"you"[..])
    );

    // A swap that did not happen must not happen at the apply either.
    let view = KvOverlay::new(base.clone());
    assert!(
        !view
            .compare_and_swap("ns", "b", "lock", Some(b"free"), b"me", 10)
            .unwrap()
    );
    let refused = view.finish();
    base.set("ns", "b", "lock", b"free", 10).unwrap();
    assert_eq!(refused.apply(base.as_ref()), conflict);
    assert_eq!(
        base.get("ns", "b", "lock").unwrap().as_deref(),
        Some(&b"free"[..])
    );

    // A new key that another writer's keys crowded out.
    let view = KvOverlay::new(base.clone());
    view.set("ns", "b", "late", b"1", 3).unwrap();
    let late = view.finish();
    base.set("ns", "b", "first", b"1", 3).unwrap();
    assert_eq!(
        late.apply(base.as_ref()),
        Err(KvError::TooManyKeys { limit: 3 })
    );
    assert_eq!(base.get("ns", "b", "late").unwrap(), None);
}

#[test]
fn sqlite_applies_as_documented_against_another_writer() {
    let (base, dir) = store("sqlite-apply");
    apply_meets_another_writer(base);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn redb_applies_as_documented_against_another_writer() {
    let dir = crate::kv::tests::dir("overlay-redb-apply");
    let base = Arc::new(RedbBackend::open(dir.join("kv.redb")).unwrap());
    apply_meets_another_writer(base);
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(feature = "redis")]
#[test]
fn redis_applies_as_documented_against_another_writer() {
    let server = crate::redis_pool::TestRedis::start("overlay-apply");
    let base = Arc::new(crate::kv::RedisKv::open(&server.url).unwrap());
    apply_meets_another_writer(base);
}

#[test]
fn repeated_writes_of_one_key_fold() {
    let (base, dir) = store("fold");
    let view = KvOverlay::new(base.clone());
    for _ in 0..1000 {
        view.increment("ns", "b", "n", 2, 10).unwrap();
    }
    view.set("ns", "b", "s", b"1", 10).unwrap();
    view.increment("ns", "b", "s", 1, 10).unwrap();
    view.delete("ns", "b", "s").unwrap();
    assert!(
        view.compare_and_swap("ns", "b", "s", None, b"7", 10)
            .unwrap()
    );
    assert!(
        !view
            .compare_and_swap("ns", "b", "s", None, b"8", 10)
            .unwrap()
    );
    let ops: Vec<_> = view.finish().iter().map(|w| w.op.clone()).collect();
    assert_eq!(ops, [KvOp::Increment(2000), KvOp::Set(b"7".to_vec())]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn pending_writes_stop_at_their_byte_limit() {
    let (base, dir) = store("limit");
    let view = KvOverlay::new(base.clone());
    let big = vec![b'x'; (crate::kv::MAX_TRANSACTION_BYTES / 2) as usize];
    view.set("ns", "b", "one", &big, 10).unwrap();
    assert_eq!(
        view.set("ns", "b", "two", &big, 10),
        Err(KvError::TransactionTooLarge {
            limit: crate::kv::MAX_TRANSACTION_BYTES
        })
    );
    // Rewriting the same key replaces its bytes rather than adding to them.
    view.set("ns", "b", "one", b"small", 10).unwrap();
    view.set("ns", "b", "two", &big, 10).unwrap();
    assert_eq!(view.list("ns", "b", 0, 10).unwrap(), ["one", "two"]);
    drop(view);
    assert_eq!(KvWrites::default().apply(base.as_ref()), Ok(()));
    std::fs::remove_dir_all(dir).unwrap();
}
