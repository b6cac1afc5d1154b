//! `wasi:config/store`: the policy's `[config]` table, read-only. Secrets are never config.

use crate::call::CallState;
use crate::engine::bindings::wasi::config::store::{self, Error};

impl store::Host for CallState {
    fn get(&mut self, key: String) -> Result<Option<String>, Error> {
        Ok(self.config.as_ref().and_then(|c| c.get(&key).cloned()))
    }

    fn get_all(&mut self) -> Result<Vec<(String, String)>, Error> {
        Ok(self
            .config
            .iter()
            .flat_map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())))
            .collect())
    }
}
