//! `cargo +nightly fuzz run replay`: see `palisade_fuzz::replay`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| palisade_fuzz::replay::check(data));
