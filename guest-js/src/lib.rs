//! The Palisade guest: a QuickJS runtime (built with `javy`) exported as a WASI component.
//!
//! The host instantiates a fresh copy of this component for every call. The QuickJS runtime and
//! the JS globals are created once, in `wizer-initialize`, and captured in the snapshot the host
//! loads, so a call only evaluates the user's module and invokes its export.

mod errors;
mod globals;
mod json;
mod modules;
mod run;
#[cfg(feature = "standalone")]
mod standalone;
mod stringify;

use exports::palisade::sandbox::runner::{Environment, Error, Guest as Runner, Module, ModuleFile};

#[cfg(not(feature = "standalone"))]
wit_bindgen::generate!({
    world: "guest",
    path: "../wit",
    generate_all,
});
#[cfg(feature = "standalone")]
use standalone::bindings::Guest;
#[cfg(feature = "standalone")]
pub use standalone::{exports, palisade, wasi};

struct Component;

impl Guest for Component {
    fn wizer_initialize() {
        run::init();
    }
}

impl Runner for Component {
    fn compile(name: String, source: String, modules: Vec<ModuleFile>) -> Result<Vec<u8>, Error> {
        modules::set(&name, modules);
        run::compile(&name, &source)
    }

    fn preload(
        name: String,
        source: String,
        modules: Vec<ModuleFile>,
        env: Environment,
    ) -> Result<(), Error> {
        #[cfg(feature = "standalone")]
        let modules = standalone::settings::take(modules);
        modules::set(&name, modules);
        run::preload(&name, &source, &env)?;
        #[cfg(feature = "standalone")]
        standalone::settings::remember(&name, &env);
        Ok(())
    }

    fn run(
        name: String,
        module: Module,
        modules: Vec<ModuleFile>,
        entry: String,
        input: String,
        env: Environment,
    ) -> Result<String, Error> {
        // A preloaded module keeps the files it was compiled with, held in the snapshot.
        if !matches!(module, Module::Preloaded) {
            modules::set(&name, modules);
        }
        run::run(&name, module, &entry, &input, &env)
    }

    fn evaluate(
        name: String,
        source: String,
        input: String,
        env: Environment,
    ) -> Result<String, Error> {
        run::evaluate_script(&name, &source, &input, &env)
    }
}

#[cfg(not(feature = "standalone"))]
export!(Component);
#[cfg(feature = "standalone")]
standalone::bindings::export!(Component with_types_in standalone::bindings);
