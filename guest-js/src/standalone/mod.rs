//! The standalone build of the guest (`--features standalone`): the same QuickJS runtime and
//! globals, linked against standard WASI only, so that a script built into it
//! (`palisade build`) runs under the stock `wasmtime run` and `wasmtime serve`.
//!
//! The rest of the guest names its imports by the paths the full guest's bindings give them
//! (`crate::palisade::sandbox::console`, `crate::wasi::http::outgoing_handler`, …); here those
//! paths lead to this folder: the Palisade interfaces are made in the guest (`console` writes
//! stderr, `capability` refuses, `kv` compares and swaps over `wasi:keyvalue`), and two
//! standard imports are wrapped (`fetch` refused in the guest when the build's policy has no
//! `[http]`; a bucket the stock host does not know opens its one store).

pub mod bindings;
pub mod capability;
mod cli;
pub mod console;
mod http;
pub mod kv;
pub mod settings;
mod stdio;

pub use bindings::exports;
pub use http::register;

/// The Palisade interfaces, made in the guest.
pub mod palisade {
    pub mod sandbox {
        pub use crate::standalone::{capability, console, kv};
    }
}

/// The standard WASI imports, two of them wrapped.
pub mod wasi {
    pub use super::bindings::wasi::{cli, clocks, config, io, random};

    pub mod http {
        pub use crate::standalone::bindings::wasi::http::types;

        /// `wasi:http/outgoing-handler`, refused in the guest without `[http]`.
        pub mod outgoing_handler {
            use crate::standalone::bindings::wasi::http::outgoing_handler as standard;
            pub use standard::*;

            /// Send `request`, unless the build's policy grants no HTTP (then the request
            /// never leaves the guest, and `fetch` throws `PolicyDeniedError`).
            pub fn handle(
                request: OutgoingRequest,
                options: Option<RequestOptions>,
            ) -> Result<FutureIncomingResponse, ErrorCode> {
                if !crate::standalone::settings::http_granted() {
                    return Err(ErrorCode::HttpRequestDenied);
                }
                standard::handle(request, options)
            }
        }
    }

    pub mod keyvalue {
        pub use crate::standalone::bindings::wasi::keyvalue::atomics;

        /// `wasi:keyvalue/store`, whose `open` falls back to the host's default store.
        pub mod store {
            use crate::standalone::bindings::wasi::keyvalue::store as standard;
            pub use standard::*;

            /// Open the bucket `identifier`; a host that knows no such store (the stock CLI has
            /// one, named `""`) gives its default store instead.
            pub fn open(identifier: &str) -> Result<Bucket, Error> {
                match standard::open(identifier) {
                    Err(Error::NoSuchStore) if !identifier.is_empty() => standard::open(""),
                    other => other,
                }
            }
        }
    }
}
