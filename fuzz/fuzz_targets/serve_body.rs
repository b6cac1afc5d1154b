//! `cargo +nightly fuzz run serve_body`: see `palisade_fuzz::serve_body`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| palisade_fuzz::serve_body::check(data));
