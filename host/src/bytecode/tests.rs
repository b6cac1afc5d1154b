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

fn code() -> Arc<[u8]> {
    Arc::from(&b"code"[..])
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
    let (_end, other) = oneshot::channel();
    assert!(
        matches!(cache.lookup(&[2; 32], compile(other)), Lookup::Compile(_)),
        "keys apart"
    );
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
        let Lookup::Compile(flight) = cache.lookup(&[1; 32], compile(ended)) else {
            panic!("the first lookup compiles")
        };
        let Lookup::Wait(_held) = cache.lookup(&[1; 32], no_compile) else {
            panic!("a lookup during the compile waits")
        };
        send.send(end.clone()).unwrap();
        assert_eq!(flight.await, (end, 7));
        // Its entry went with its end, though a call still holds it.
        let (_send, again) = oneshot::channel();
        assert!(matches!(
            cache.lookup(&[1; 32], compile(again)),
            Lookup::Compile(_)
        ));
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
    let Lookup::Compile(first) = cache.lookup(&[1; 32], panics) else {
        panic!("the first lookup compiles")
    };
    let Lookup::Wait(waiter) = cache.lookup(&[1; 32], no_compile) else {
        panic!("a lookup during the compile waits")
    };
    let (first, waiter) = (tokio::spawn(first), tokio::spawn(waiter));
    tokio::task::yield_now().await;
    end.send(()).unwrap();
    let within = |task| tokio::time::timeout(std::time::Duration::from_secs(60), task);
    let stopped = (Compiled::Stopped, 0);
    assert_eq!(within(first).await.unwrap().unwrap(), stopped);
    assert_eq!(within(waiter).await.unwrap().unwrap(), stopped);
    let (_end, again) = oneshot::channel();
    assert!(matches!(
        cache.lookup(&[1; 32], compile(again)),
        Lookup::Compile(_)
    ));
}

#[test]
fn a_lookup_whose_compile_panics_in_the_making_leaves_the_cache_usable() {
    let cache = BytecodeCache::new(4).unwrap();
    let made = std::panic::catch_unwind(AssertUnwindSafe(|| cache.lookup(&[1; 32], no_compile)));
    assert!(made.is_err());
    let Lookup::Compile(_flight) = cache.lookup(&[1; 32], || std::future::pending().boxed()) else {
        panic!("no flight was left behind")
    };
}

#[test]
fn a_flight_no_call_holds_any_more_is_dropped_and_the_next_call_compiles() {
    let cache = BytecodeCache::new(4).unwrap();
    let made = AtomicUsize::new(0);
    let make = || {
        made.fetch_add(1, Ordering::Relaxed);
        std::future::pending().boxed()
    };
    let Lookup::Compile(first) = cache.lookup(&[1; 32], make) else {
        panic!("the first lookup compiles")
    };
    let Lookup::Wait(waiter) = cache.lookup(&[1; 32], no_compile) else {
        panic!("a lookup during the compile waits")
    };
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
        std::future::pending().boxed()
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
    let Lookup::Compile(_newer) = cache.lookup(&[1; 32], || std::future::pending().boxed()) else {
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
    let Lookup::Compile(_first) = cache.lookup(&[1; 32], compile(ended)) else {
        panic!("the first lookup compiles")
    };
    let Lookup::Wait(waiter) = cache.lookup(&[1; 32], no_compile) else {
        panic!("a lookup during the compile waits")
    };
    end.send(Compiled::Bytecode(large.clone())).unwrap();
    assert_eq!(waiter.await, (Compiled::Bytecode(large), 7));
    let (_end, again) = oneshot::channel();
    assert!(matches!(
        cache.lookup(&[1; 32], compile(again)),
        Lookup::Compile(_)
    ));
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
    let (_end, again) = oneshot::channel();
    assert!(
        matches!(cache.lookup(&[0; 32], compile(again)), Lookup::Compile(_)),
        "oldest went"
    );
}
