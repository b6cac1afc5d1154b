//! `cargo +nightly fuzz run policy`: see `palisade_fuzz::policy`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| palisade_fuzz::policy::check(data));
