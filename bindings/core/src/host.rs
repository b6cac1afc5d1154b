//! A `Palisade` for a binding: its settings, its capability handlers (which the binding answers
//! in its own language, as JSON text), and the JSON its handlers and event callbacks get.

use crate::request::Refused;
use palisade::policy::HumanDuration;
use palisade::{CallContext, CapabilityError, CapabilityFuture, Event, Palisade};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;

/// The settings of a `Palisade`, as the binding's caller gives them: snake_case keys, or the
/// camelCase spelling JavaScript callers write. An unknown key is refused.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Calls at once, and the instance pool's slots (`Builder::max_concurrency`).
    #[serde(alias = "maxConcurrency")]
    pub max_concurrency: Option<u32>,
    /// How long a call waits for a free slot before `capacity_exhausted` (`"10s"`).
    #[serde(alias = "queueTimeout")]
    pub queue_timeout: Option<HumanDuration>,
    /// Append every gated decision to this file, one JSON object per line.
    #[serde(alias = "auditLog")]
    pub audit_log: Option<PathBuf>,
    /// The key-value store's SQLite file (`[kv]` policies).
    #[serde(alias = "kvPath")]
    pub kv_path: Option<PathBuf>,
}

impl Settings {
    /// Read settings from their JSON text (`{}` for the defaults).
    pub fn parse(text: &str) -> Result<Settings, Refused> {
        serde_json::from_str(text).map_err(|e| Refused::Usage(format!("Palisade(): {e}")))
    }
}

/// A capability handler of the binding: the call's context and payload in, its answer later.
pub type Handler = Box<dyn Fn(CallContext, Value) -> CapabilityFuture + Send + Sync>;

/// Build a `Palisade` from the settings' JSON text and the capabilities `names`, each answered
/// by the handler `handler` makes for it: settings that are not [`Settings`] are
/// [`Refused::Usage`], what the library refuses (an audit log it cannot open) is
/// [`Refused::Call`].
pub fn build_with(
    settings: &str,
    names: Vec<String>,
    handler: impl Fn(&str) -> Handler,
) -> Result<Palisade, Refused> {
    let settings = Settings::parse(settings)?;
    let handlers = names
        .into_iter()
        .map(|name| {
            let made = handler(&name);
            (name, made)
        })
        .collect();
    build(settings, handlers).map_err(|e| Refused::call(e, None))
}

/// Build a `Palisade` with `settings` and the binding's `handlers`, by capability name. Each
/// handler is registered with `Builder::typed_capability`: the policy's checks run first, and a
/// failure it reports reaches the script as a `CapabilityError` with its code.
pub fn build(
    settings: Settings,
    handlers: Vec<(String, Handler)>,
) -> Result<Palisade, palisade::Error> {
    let mut builder = Palisade::builder();
    if crate::forks() > 0 {
        // rayon's pool, which compiles on every CPU, has no threads in a child.
        builder = builder.parallel_compilation(false);
    }
    if let Some(n) = settings.max_concurrency {
        builder = builder.max_concurrency(n);
    }
    if let Some(wait) = settings.queue_timeout {
        builder = builder.queue_timeout(wait.0);
    }
    if let Some(path) = settings.audit_log {
        builder = builder.audit_log(path);
    }
    if let Some(path) = settings.kv_path {
        builder = builder.kv_path(path);
    }
    for (name, handler) in handlers {
        builder = builder.typed_capability(name, handler);
    }
    builder.build()
}

/// What a handler in the binding's language answered, as JSON text: `{"ok": value}`, or
/// `{"error": {"code", "message", "retryable"}}` for a failure the script catches. Anything
/// else is the handler's fault and reaches the script as `handler_error`.
pub fn answer(text: &str) -> Result<Value, CapabilityError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "lowercase")]
    enum Answer {
        Ok(Value),
        Error(CapabilityError),
    }
    match serde_json::from_str(text) {
        Ok(Answer::Ok(value)) => Ok(value),
        Ok(Answer::Error(error)) => Err(error),
        Err(e) => Err(CapabilityError::from(format!(
            "the handler's answer is not JSON: {e}"
        ))),
    }
}

/// A handler's context as JSON: `{call_id, capability, policy, policy_sha256, metadata,
/// argument_list}`.
pub fn context_json(context: &CallContext) -> String {
    json!({
        "call_id": context.call_id,
        "capability": context.capability,
        "policy": context.policy,
        "policy_sha256": context.policy_sha256,
        "metadata": context.metadata.as_deref(),
        "argument_list": context.argument_list,
    })
    .to_string()
}

/// An event as JSON: `{"type": "console", "level", "message"}` or `{"type": "audit", …}` with
/// the audit record's fields.
pub fn event_json(event: &Event) -> String {
    let (kind, mut value) = match event {
        Event::Console(line) => ("console", serde_json::to_value(line)),
        Event::Audit(record) => ("audit", serde_json::to_value(record)),
        _ => return json!({ "type": "other" }).to_string(),
    };
    match value.as_mut().ok().and_then(Value::as_object_mut) {
        Some(fields) => {
            fields.insert("type".into(), kind.into());
        }
        None => return json!({ "type": kind }).to_string(),
    }
    value.expect("checked above").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_values_or_typed_failures() {
        assert_eq!(answer(r#"{"ok": {"a": 1}}"#).unwrap(), json!({"a": 1}));
        let error =
            answer(r#"{"error": {"code": "not_found", "message": "no", "retryable": true}}"#)
                .unwrap_err();
        assert_eq!((error.code.as_str(), error.retryable), ("not_found", true));
        let error = answer("{\"ok\": 1, \"more\": 2}").unwrap_err();
        assert_eq!(error.code, "handler_error");
    }

    #[test]
    fn settings_take_either_spelling_and_refuse_unknown_keys() {
        let settings =
            Settings::parse(r#"{"maxConcurrency": 2, "queue_timeout": "50ms"}"#).unwrap();
        assert_eq!(settings.max_concurrency, Some(2));
        assert!(matches!(
            Settings::parse(r#"{"max": 2}"#),
            Err(Refused::Usage(_))
        ));
    }

    #[test]
    fn events_carry_their_type() {
        let line = palisade::LogLine {
            level: palisade::Level::Log,
            message: "hi".into(),
        };
        let value: Value = serde_json::from_str(&event_json(&Event::Console(line))).unwrap();
        assert_eq!(
            value,
            json!({"type": "console", "level": "log", "message": "hi"})
        );
    }
}
