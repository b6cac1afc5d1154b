//! wit-bindgen's output for the `standalone-guest` world (`wit/standalone.wit`): standard WASI
//! imports only, and the `runner`, `wasi:cli/run` and `wasi:http/incoming-handler` exports.
//! The generated `export!` macro names this module by its path from the crate root.
#![allow(clippy::crate_in_macro_def)]

wit_bindgen::generate!({
    world: "standalone-guest",
    path: "../wit",
    generate_all,
    pub_export_macro: true,
    default_bindings_module: "crate::standalone::bindings",
});
