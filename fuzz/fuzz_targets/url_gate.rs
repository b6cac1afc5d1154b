//! `cargo +nightly fuzz run url_gate`: see `palisade_fuzz::url_gate`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| palisade_fuzz::url_gate::check(data));
