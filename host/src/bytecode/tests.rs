use super::*;
use std::time::{Duration, Instant};

/// A deadline no test reaches: a wait that ends by it ended for another reason.
fn far() -> Instant {
    Instant::now() + Duration::from_secs(600)
}

/// The flight of a key no one has looked up, and a call's wait for it.
fn flight_and_waiter(cache: &BytecodeCache, key: u8) -> (Flight, Landing) {
    let Lookup::Compile(flight) = cache.lookup(&[key; 32]) else {
        panic!("the first lookup compiles")
    };
    let Lookup::Wait(landing) = cache.lookup(&[key; 32]) else {
        panic!("a lookup during the compile waits")
    };
    (flight, landing)
}

/// `landing`'s end, which must come well before its deadline.
async fn ends(landing: Landing) -> Landed {
    let waited = tokio::spawn(landing.wait(far()));
    tokio::task::yield_now().await;
    tokio::time::timeout(Duration::from_secs(60), waited)
        .await
        .expect("the wait ends with the flight")
        .unwrap()
}

#[tokio::test]
async fn calls_that_miss_during_a_compile_wait_for_its_bytecode() {
    let cache = BytecodeCache::new(4).unwrap();
    let (flight, first) = flight_and_waiter(&cache, 1);
    let Lookup::Wait(second) = cache.lookup(&[1; 32]) else {
        panic!("every lookup during the compile waits")
    };
    assert!(
        matches!(cache.lookup(&[2; 32]), Lookup::Compile(_)),
        "keys are apart"
    );
    let waiters = tokio::spawn(async { (ends(first).await, ends(second).await) });
    tokio::task::yield_now().await;
    flight.land(Arc::from(&b"code"[..]));
    let code = Landed::Bytecode(Arc::from(&b"code"[..]));
    assert_eq!(waiters.await.unwrap(), (code.clone(), code));
    assert!(matches!(cache.lookup(&[1; 32]), Lookup::Hit(code) if &*code == b"code"));
}

#[tokio::test]
async fn a_script_that_does_not_compile_sends_its_waiters_to_the_source() {
    let cache = BytecodeCache::new(4).unwrap();
    let (flight, landing) = flight_and_waiter(&cache, 1);
    let waiter = tokio::spawn(ends(landing));
    tokio::task::yield_now().await;
    flight.not_compiled();
    assert_eq!(waiter.await.unwrap(), Landed::NotCompiled);
    assert!(
        matches!(cache.lookup(&[1; 32]), Lookup::Compile(_)),
        "nothing is cached"
    );
}

#[tokio::test]
async fn a_dropped_flight_sends_its_waiters_back_to_look_up() {
    let cache = BytecodeCache::new(4).unwrap();
    let (flight, landing) = flight_and_waiter(&cache, 1);
    let waiter = tokio::spawn(ends(landing));
    tokio::task::yield_now().await;
    drop(flight);
    assert_eq!(waiter.await.unwrap(), Landed::Dropped);
    assert!(
        matches!(cache.lookup(&[1; 32]), Lookup::Compile(_)),
        "the next call compiles"
    );
}

#[tokio::test]
async fn a_waiter_stops_at_its_deadline() {
    let cache = BytecodeCache::new(4).unwrap();
    let (_flight, landing) = flight_and_waiter(&cache, 1);
    let deadline = Instant::now() + Duration::from_millis(20);
    assert_eq!(landing.wait(deadline).await, Landed::Late);
    assert!(Instant::now() >= deadline);
}

#[tokio::test]
async fn bytecode_too_large_to_cache_is_handed_over_and_compiled_again() {
    let cache = BytecodeCache::new(4).unwrap();
    let (flight, landing) = flight_and_waiter(&cache, 1);
    flight.land(vec![0; MAX_BYTES / 4 + 1].into());
    let Landed::Bytecode(bytecode) = landing.wait(far()).await else {
        panic!("the waiter gets the bytecode")
    };
    assert_eq!(bytecode.len(), MAX_BYTES / 4 + 1);
    assert!(matches!(cache.lookup(&[1; 32]), Lookup::Compile(_)));
}

#[test]
fn the_cache_keeps_its_bytes_bound() {
    let cache = BytecodeCache::new(64).unwrap();
    for key in 0..8u8 {
        let Lookup::Compile(flight) = cache.lookup(&[key; 32]) else {
            panic!("a new key compiles")
        };
        flight.land(vec![key; MAX_BYTES / 4].into());
    }
    assert!(lock(&cache.inner).bytes <= MAX_BYTES);
    assert!(
        matches!(cache.lookup(&[7; 32]), Lookup::Hit(_)),
        "the newest stays"
    );
    assert!(
        matches!(cache.lookup(&[0; 32]), Lookup::Compile(_)),
        "the oldest went"
    );
}
