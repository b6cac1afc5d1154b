use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::oneshot;

/// A compile that ends as `end` sends it, with 7 fuel.
fn compile(end: oneshot::Receiver<Compiled>) -> impl FnOnce() -> Compile {
    move || async move { (end.await.expect("the test ends the compile"), 7) }.boxed()
}

fn no_compile() -> Compile {
    panic!("a lookup that finds a hit or a flight makes no compile")
}

/// A compile that never ends.
fn pending() -> Compile {
    std::future::pending().boxed()
}

fn code() -> Arc<[u8]> {
    Arc::from(&b"code"[..])
}

/// The flight of `compile` for key 1, which no one has looked up, and a call waiting for it.
fn first_and_waiter(cache: &BytecodeCache, compile: impl FnOnce() -> Compile) -> (Flight, Flight) {
    let Lookup::Compile(first) = cache.lookup(&[1; 32], compile) else {
        panic!("the first lookup compiles")
    };
    let Lookup::Wait(waiter) = cache.lookup(&[1; 32], no_compile) else {
        panic!("a lookup during the compile waits")
    };
    (first, waiter)
}

/// Whether a lookup of `key` now starts a compile (nothing cached, no flight under way).
fn compiles_anew(cache: &BytecodeCache, key: u8) -> bool {
    matches!(cache.lookup(&[key; 32], pending), Lookup::Compile(_))
}

#[tokio::test]
async fn calls_that_miss_during_a_compile_wait_for_its_end() {
    let cache = BytecodeCache::new(4).unwrap();
    let (end, ended) = oneshot::channel();
    let Lookup::Compile(first) = cache.lookup(&[1; 32], compile(ended)) else {
        panic!("the first lookup compiles")
    };
    let (Lookup::Wait(a), Lookup::Wait(b)) = (
        cache.lookup(&[1; 32], no_compile),
        cache.lookup(&[1; 32], no_compile),
    ) else {
        panic!("lookups during the compile wait")
    };
    assert!(compiles_anew(&cache, 2), "keys apart");
    end.send(Compiled::Bytecode(code())).unwrap();
    // The waiters alone drive the compile: the first call is polled only after its end.
    let ended = (Compiled::Bytecode(code()), 7);
    assert_eq!((a.await, b.await), (ended.clone(), ended.clone()));
    assert!(matches!(cache.lookup(&[1; 32], no_compile), Lookup::Hit(c) if c == code()));
    assert_eq!(first.await, ended);
}

#[tokio::test]
async fn a_flight_that_ends_without_bytecode_caches_nothing() {
    for end in [Compiled::Syntax, Compiled::Stopped] {
        let cache = BytecodeCache::new(4).unwrap();
        let (send, ended) = oneshot::channel();
        let (flight, _held) = first_and_waiter(&cache, compile(ended));
        send.send(end.clone()).unwrap();
        assert_eq!(flight.await, (end, 7));
        // Its entry went with its end, though a call still holds it.
        assert!(compiles_anew(&cache, 1));
    }
}

#[tokio::test]
async fn a_compile_that_panics_ends_as_stopped_for_every_call_holding_it() {
    let cache = BytecodeCache::new(4).unwrap();
    let (end, ended) = oneshot::channel::<()>();
    let panics = || {
        async move {
            ended.await.unwrap();
            panic!("a defect")
        }
        .boxed()
    };
    let (first, waiter) = first_and_waiter(&cache, panics);
    let (first, waiter) = (tokio::spawn(first), tokio::spawn(waiter));
    tokio::task::yield_now().await;
    end.send(()).unwrap();
    let within = |task| tokio::time::timeout(std::time::Duration::from_secs(60), task);
    let stopped = (Compiled::Stopped, 0);
    assert_eq!(within(first).await.unwrap().unwrap(), stopped);
    assert_eq!(within(waiter).await.unwrap().unwrap(), stopped);
    assert!(compiles_anew(&cache, 1));
}

#[test]
fn a_lookup_whose_compile_panics_in_the_making_leaves_the_cache_usable() {
    let cache = BytecodeCache::new(4).unwrap();
    let made = std::panic::catch_unwind(AssertUnwindSafe(|| cache.lookup(&[1; 32], no_compile)));
    assert!(made.is_err());
    assert!(compiles_anew(&cache, 1), "no flight was left behind");
}

#[test]
fn a_flight_no_call_holds_any_more_is_dropped_and_the_next_call_compiles() {
    let cache = BytecodeCache::new(4).unwrap();
    let made = AtomicUsize::new(0);
    let make = || {
        made.fetch_add(1, Ordering::Relaxed);
        pending()
    };
    let (first, waiter) = first_and_waiter(&cache, make);
    drop(first);
    assert!(
        matches!(cache.lookup(&[1; 32], no_compile), Lookup::Wait(_)),
        "a waiter polls it"
    );
    drop(waiter);
    assert!(
        lock(&cache.inner).flights.is_empty(),
        "the dropped compile took its entry"
    );
    let make = || {
        made.fetch_add(1, Ordering::Relaxed);
        pending()
    };
    assert!(matches!(cache.lookup(&[1; 32], make), Lookup::Compile(_)));
    assert_eq!(made.load(Ordering::Relaxed), 2);
}

#[test]
fn a_dropped_flight_leaves_a_newer_flight_of_its_key_in_place() {
    let cache = BytecodeCache::new(4).unwrap();
    let old = Landing {
        inner: cache.inner.clone(),
        key: [1; 32],
        number: 0,
    };
    lock(&cache.inner).next = 1;
    let Lookup::Compile(_newer) = cache.lookup(&[1; 32], pending) else {
        panic!("the first lookup compiles")
    };
    drop(old);
    assert!(matches!(
        cache.lookup(&[1; 32], no_compile),
        Lookup::Wait(_)
    ));
}

#[tokio::test]
async fn bytecode_too_large_to_cache_is_handed_over_and_compiled_again() {
    let cache = BytecodeCache::new(4).unwrap();
    let large: Arc<[u8]> = vec![0; MAX_BYTES / 4 + 1].into();
    let (end, ended) = oneshot::channel();
    let (_first, waiter) = first_and_waiter(&cache, compile(ended));
    end.send(Compiled::Bytecode(large.clone())).unwrap();
    assert_eq!(waiter.await, (Compiled::Bytecode(large), 7));
    assert!(compiles_anew(&cache, 1));
}

#[test]
fn the_cache_keeps_its_bytes_bound() {
    let cache = BytecodeCache::new(64).unwrap();
    for key in 0..8u8 {
        cache.insert([key; 32], vec![key; MAX_BYTES / 4].into());
    }
    assert!(lock(&cache.inner).bytes <= MAX_BYTES);
    assert!(
        matches!(cache.lookup(&[7; 32], no_compile), Lookup::Hit(_)),
        "the newest stays"
    );
    assert!(compiles_anew(&cache, 0), "oldest went");
}
