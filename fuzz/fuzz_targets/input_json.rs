//! `cargo +nightly fuzz run input_json`: see `palisade_fuzz::input_json`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| palisade_fuzz::input_json::check(data));
