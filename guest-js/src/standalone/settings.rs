//! What `palisade build` fixed in the snapshot: the module, the environment a call under the
//! build's policy gets, and the settings the standard imports cannot carry (whether the policy
//! grants HTTP, the input and output limits).
//!
//! The host hands the settings to `runner.preload` as one extra JSON module named
//! [`SETTINGS_MODULE`], which no script can import (its name is not a relative path).

use crate::exports::palisade::sandbox::runner::{Environment, ModuleFile};
use std::cell::RefCell;

/// The module file that carries the build's settings.
pub const SETTINGS_MODULE: &str = "palisade:standalone";

/// The build's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The policy has an `[http]` table: `fetch` goes to `wasi:http`.
    pub http: bool,
    /// `limits.input`: the most bytes of input (stdin, or a request body) read.
    pub input_limit: u64,
    /// `limits.output`: the most bytes of output written.
    pub output_limit: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            http: false,
            input_limit: 1 << 20,
            output_limit: 1 << 20,
        }
    }
}

/// The preloaded script as a run finds it.
#[derive(Clone)]
pub struct Built {
    pub name: String,
    pub env: Environment,
    pub settings: Settings,
}

thread_local! {
    static SETTINGS: RefCell<Settings> = RefCell::new(Settings::default());
    static BUILT: RefCell<Option<Built>> = const { RefCell::new(None) };
}

/// Take the settings module out of `modules` and keep what it says.
pub fn take(modules: Vec<ModuleFile>) -> Vec<ModuleFile> {
    let mut rest = Vec::with_capacity(modules.len());
    for file in modules {
        if file.name == SETTINGS_MODULE {
            SETTINGS.with(|s| *s.borrow_mut() = parse(&file.source));
        } else {
            rest.push(file);
        }
    }
    rest
}

fn parse(text: &str) -> Settings {
    let value: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let default = Settings::default();
    Settings {
        http: value["http"].as_bool().unwrap_or(default.http),
        input_limit: value["input_limit"].as_u64().unwrap_or(default.input_limit),
        output_limit: value["output_limit"]
            .as_u64()
            .unwrap_or(default.output_limit),
    }
}

/// Keep the module `preload` evaluated and the environment it was evaluated for.
pub fn remember(name: &str, env: &Environment) {
    let settings = SETTINGS.with(|s| s.borrow().clone());
    BUILT.with(|b| {
        *b.borrow_mut() = Some(Built {
            name: name.to_owned(),
            env: env.clone(),
            settings,
        })
    });
}

/// The built script, or `None` for the bare guest.
pub fn built() -> Option<Built> {
    BUILT.with(|b| b.borrow().clone())
}

/// Whether the build's policy grants HTTP.
pub fn http_granted() -> bool {
    SETTINGS.with(|s| s.borrow().http)
}
