//! The Palisade guest: a QuickJS runtime (built with `javy`) exported as a WASI component.
//!
//! The host instantiates a fresh copy of this component for every call. The QuickJS runtime and
//! the JS globals are created once, in `wizer-initialize`, and captured in the snapshot the host
//! loads, so a call only evaluates the user's module and invokes its export.

mod errors;
mod globals;
mod json;
mod run;
mod stringify;

use exports::palisade::sandbox::runner::{Environment, Error, Guest as Runner, Module};

wit_bindgen::generate!({
    world: "guest",
    path: "../wit",
    generate_all,
});

struct Component;

impl Guest for Component {
    fn wizer_initialize() {
        run::init();
    }
}

impl Runner for Component {
    fn compile(name: String, source: String) -> Result<Vec<u8>, Error> {
        run::compile(&name, &source)
    }

    fn preload(name: String, source: String, env: Environment) -> Result<(), Error> {
        run::preload(&name, &source, &env)
    }

    fn run(
        name: String,
        module: Module,
        entry: String,
        input: String,
        env: Environment,
    ) -> Result<String, Error> {
        run::run(&name, module, &entry, &input, &env)
    }
}

export!(Component);
