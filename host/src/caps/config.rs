//! `wasi:config/store`: the policy's `[config]` table, read-only. Secrets are never config.

use crate::bindings::wasi::config::store::{self, Error};
use std::collections::BTreeMap;
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};

/// A call's read-only configuration: the policy's `[config]` table, if it has one.
#[derive(Default)]
pub(crate) struct Config(pub Option<Arc<BTreeMap<String, String>>>);

impl store::Host for Config {
    fn get(&mut self, key: String) -> Result<Option<String>, Error> {
        Ok(self.0.as_ref().and_then(|c| c.get(&key).cloned()))
    }

    fn get_all(&mut self) -> Result<Vec<(String, String)>, Error> {
        Ok(self
            .0
            .iter()
            .flat_map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())))
            .collect())
    }
}

/// Link `wasi:config/store` to the call's [`Config`], which `config` finds in the store's state.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    config: fn(&mut T) -> &mut Config,
) -> wasmtime::Result<()> {
    store::add_to_linker::<T, HasSelf<Config>>(linker, config)
}
