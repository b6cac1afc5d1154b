//! The module ABI. An app is either a script that sets `globalThis.jace = {manifest, init,
//! view, actions}` or an ES module that exports `manifest`, `init`, `view` and `actions`. It
//! runs as the module `app.js` of a small driver (`driver.js`) whose exports the host calls:
//! `describe` (manifest and action names), `view` and `act`. The driver takes the state as
//! JSON and returns the next one as JSON: no heap outlives a call. Driver and app are compiled
//! together once, into a component of their own (`Palisade::compile`), under the app's policy;
//! what its `[apps]` table turns off of the JavaScript runtime, the guest turns off in Rust
//! before any of the driver's or the app's JavaScript runs (the call's environment says what).

use super::super::errors::ApiError;
use super::super::journal::Who;
use super::super::runner::Runner;
use super::records::AppRecord;
use crate::policy::Schema;
use crate::{Error, Policy, RunOptions, Script};
use serde_json::Value;
use std::collections::BTreeMap;

/// The driver around every app.
pub const DRIVER: &str = include_str!("driver.js");

/// An app compiled for calls.
pub struct Loaded {
    /// What is kept of it.
    pub record: AppRecord,
    /// The compiled driver and app.
    pub script: Script,
    /// The SHA-256 of the policy it was compiled under; another one compiles it again.
    pub policy_sha256: String,
    /// The JSON Schema of each action's `params` the app declares (`manifest.params`).
    pub params: BTreeMap<String, Schema>,
}

impl Loaded {
    /// Check an action's `params` (`{}` when absent) against the schema the app declares for
    /// it, if any: 400 `invalid_input` naming the first mismatch, its path and its reason.
    pub fn check_params(&self, action: &str, params: Option<&Value>) -> Result<(), ApiError> {
        let Some(schema) = self.params.get(action) else {
            return Ok(());
        };
        let empty = Value::Object(serde_json::Map::new());
        let Some(why) = schema.check(params.unwrap_or(&empty)) else {
            return Ok(());
        };
        Err(ApiError::invalid(format!(
            "params of `{action}` do not match the app's schema: {why}"
        ))
        .note(format!(
            "send params that match manifest.params[\"{action}\"] (GET /v1/apps/{}): {}",
            self.record.name,
            schema.source()
        )))
    }
}

/// The schemas of `manifest.params`, one per action the app has; a schema that does not
/// compile, or one for no action, is `invalid_input`.
fn params_schemas(
    manifest: &Value,
    actions: &[String],
) -> Result<BTreeMap<String, Schema>, ApiError> {
    let Some(declared) = manifest.get("params").filter(|p| !p.is_null()) else {
        return Ok(BTreeMap::new());
    };
    let Some(declared) = declared.as_object() else {
        return Err(ApiError::invalid(
            "manifest.params maps action names to JSON Schemas of their params",
        ));
    };
    let mut schemas = BTreeMap::new();
    for (action, source) in declared {
        if !actions.contains(action) {
            return Err(ApiError::invalid(format!(
                "manifest.params names `{action}`, which is not one of the app's actions"
            )));
        }
        let schema = Schema::new(source.clone())
            .map_err(|e| ApiError::invalid(format!("manifest.params[\"{action}\"]: {e}")))?;
        schemas.insert(action.clone(), schema);
    }
    Ok(schemas)
}

/// Compile `record`'s source with the driver under `policy`, and read its manifest and action
/// names. A syntax error is `guest_syntax` with its line and column in `app.js`; a module that
/// is not an app (no `actions`, no `view`) is `invalid_input`.
pub async fn compile(
    runner: &Runner,
    policy: &Policy,
    mut record: AppRecord,
    tenant: &str,
) -> Result<Loaded, ApiError> {
    // What the policy's `[apps]` table turns off, the guest turns off before the driver's
    // top level runs (when the app is compiled) and again before each call.
    let runtime = policy.apps();
    let script = Script::new("driver.js", DRIVER)
        .with_modules([("app.js", record.source.as_str())])
        .map_err(ApiError::from)?
        .with_app_runtime(runtime);
    let script = runner
        .compile(policy, &script)
        .await?
        .with_app_runtime(runtime);
    let who = Who {
        tenant,
        session: None,
        app: Some(&record.name),
    };
    let options = RunOptions::default().export("describe");
    let outcome = runner.run(policy, &script, "null", options, &who).await?;
    let described: Value = match outcome.result {
        Ok(raw) => serde_json::from_str(raw.get()).map_err(|e| Error::Internal {
            detail: format!("the driver's description is not JSON: {e}"),
        })?,
        Err(error) => return Err(error.into()),
    };
    let actions: Vec<String> = described["actions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if actions.is_empty() || described["has_view"] != true {
        return Err(ApiError::invalid(
            "the module is not an app: set `globalThis.jace = {manifest, init, view, actions}` \
             or export `manifest`, `init`, `view` and `actions` (an object of functions)",
        ));
    }
    let params = params_schemas(&described["manifest"], &actions)?;
    record.manifest = described["manifest"].clone();
    record.actions = actions;
    Ok(Loaded {
        record,
        script,
        policy_sha256: policy.sha256().to_owned(),
        params,
    })
}
