//! `cargo +nightly fuzz run component`: see `palisade_fuzz::component`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| palisade_fuzz::component::check(data));
