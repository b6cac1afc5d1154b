//! Every sandbox call the server makes goes through the [`Runner`]: it admits the call (one
//! admission: at most `--max-concurrency` calls at once, each waiting at most the admission
//! wait, then 503 `capacity_exhausted` with `Retry-After`), calls the library, counts the call
//! in the metrics and tags its audit lines with who called. `POST /v1/run`, a session's run,
//! an app's `describe`, `init`, `view` and actions, and an app's compile all come here.
//!
//! The library's own `max_concurrency` is the same number: it sizes the instance pool, and
//! since every call is admitted here first, its queue never holds one.

use super::admission::Admission;
use super::errors::ApiError;
use super::journal::Who;
use super::metrics::Metrics;
use crate::{Error, Outcome, Palisade, Policy, RunOptions, Script};
use std::sync::Arc;

/// The one way from the server into the sandbox.
pub struct Runner {
    palisade: Palisade,
    admission: Admission,
    metrics: Arc<Metrics>,
}

impl Runner {
    /// Calls on `palisade`, admitted by `admission`, counted in `metrics`.
    pub fn new(palisade: Palisade, admission: Admission, metrics: Arc<Metrics>) -> Runner {
        Runner {
            palisade,
            admission,
            metrics,
        }
    }

    /// Run `script` with `input` (JSON text) under `policy` for `who`. A call that ran gives
    /// its Outcome, failed or not; a call refused for capacity (here or in the library) is 503
    /// `capacity_exhausted` with `Retry-After`.
    pub async fn run(
        &self,
        policy: &Policy,
        script: &Script,
        input: &str,
        options: RunOptions,
        who: &Who<'_>,
    ) -> Result<Outcome, ApiError> {
        let options = options.audit_tags(who.tags());
        let permit = self.admission.enter(&self.metrics).await?;
        let outcome = self
            .palisade
            .run_with(policy, script, input, &options)
            .await;
        drop(permit);
        self.metrics.call(&outcome);
        match outcome.error() {
            Some(Error::CapacityExhausted { waited_ms }) => Err(ApiError::capacity(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                *waited_ms,
                super::admission::RETRY_AFTER_SECONDS,
                "every run slot stayed busy; retry after Retry-After seconds",
            )),
            _ => Ok(outcome),
        }
    }

    /// Compile `script` under `policy` into a component and load it for calls (an app:
    /// compiled once, called many times). Admitted like a call: it takes a CPU.
    pub async fn compile(&self, policy: &Policy, script: &Script) -> Result<Script, ApiError> {
        let permit = self.admission.enter(&self.metrics).await?;
        let compiled = async {
            let wasm = self.palisade.compile(policy, script).await?;
            let script = Script::from_component(wasm)?;
            self.palisade.precompile(policy, &script).await
        }
        .await;
        drop(permit);
        compiled.map_err(ApiError::from)
    }

    /// A run slot for work that is not a sandbox call but takes a CPU and memory as one does
    /// (a session's file operation), held until dropped; `capacity_exhausted` after the wait.
    pub async fn admit(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        self.admission.enter(&self.metrics).await
    }

    /// Apply the key-value writes a call held ([`RunOptions::kv_transaction`]) in one
    /// transaction: all of them, or none and 409 `kv_conflict` (retryable) when another writer
    /// moved a value a compare-and-swap of the call read or filled its namespace since,
    /// 503 `store_unavailable` when the store did not answer, or `internal` when it failed.
    pub async fn apply_kv(&self, writes: crate::kv::KvWrites) -> Result<(), ApiError> {
        use crate::kv::KvError;
        self.palisade.apply_kv(writes).await.map_err(|e| match e {
            KvError::Conflict { .. } | KvError::TooManyKeys { .. } => {
                ApiError::from(Error::KvConflict {
                    detail: e.to_string(),
                })
            }
            KvError::Unavailable(detail) => {
                tracing::warn!("a call's key-value writes were not applied: {detail}");
                ApiError::from(Error::StoreUnavailable)
            }
            e => ApiError::from(Error::Internal {
                detail: format!("a call's key-value writes were not applied: {e}"),
            }),
        })
    }

    /// The calls running now.
    pub fn running(&self) -> usize {
        self.admission.running()
    }
}

#[cfg(test)]
mod tests {
    use super::{Admission, Metrics, Runner, Who};
    use crate::{Palisade, Policy, RunOptions, Script};
    use std::sync::Arc;
    use std::time::Duration;

    fn runner(audit_log: &std::path::Path) -> (Runner, Arc<Metrics>) {
        let palisade = Palisade::builder().audit_log(audit_log).build().unwrap();
        let metrics = Arc::new(Metrics::new());
        let admission = Admission::new(1, Duration::from_millis(20));
        (Runner::new(palisade, admission, metrics.clone()), metrics)
    }

    /// With the one permit held, a call waits out the admission wait and is 503
    /// `capacity_exhausted` with `Retry-After`; once it is free, a call runs, is counted once,
    /// and its one audit record is written once, tagged with its caller.
    #[tokio::test]
    async fn admits_counts_and_journals_each_call_once() {
        let dir = std::env::temp_dir().join(format!("palisade-runner-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("audit.jsonl");
        let (runner, metrics) = runner(&log);
        let policy = Policy::builtin_default();
        let script = Script::new(
            "probe.js",
            "export default async () => { try { await fetch('http://127.0.0.1:9/') } catch {} \
             return 1 }",
        );
        let who = Who {
            tenant: "acme",
            session: Some("s1"),
            app: None,
        };
        let held = runner.admission.enter(&metrics).await.unwrap();
        let refused = runner
            .run(&policy, &script, "null", RunOptions::default(), &who)
            .await
            .unwrap_err();
        assert_eq!(refused.code(), "capacity_exhausted");
        assert_eq!(refused.status(), 503);
        let response = axum::response::IntoResponse::into_response(refused);
        assert_eq!(response.headers()["retry-after"], "1");
        drop(held);
        let outcome = runner
            .run(&policy, &script, "null", RunOptions::default(), &who)
            .await
            .unwrap();
        assert_eq!(outcome.output().unwrap().get(), "1");
        let text = metrics.render();
        assert!(
            text.contains("palisade_calls_total{code=\"ok\",policy=\"default\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("palisade_admission_rejected_total 1"),
            "{text}"
        );
        let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0]["tenant"], "acme");
        assert_eq!(lines[0]["session"], "s1");
        assert_eq!(lines[0]["decision"], "deny");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A call's held writes whose compared value another writer moved are not applied: 409
    /// `kv_conflict`, retryable, the store as the other writer left it; then a write applies.
    #[tokio::test]
    async fn a_moved_swap_is_a_retryable_kv_conflict() {
        let dir = std::env::temp_dir().join(format!("palisade-runner-kv-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let palisade = Palisade::builder()
            .kv_path(dir.join("kv.sqlite3"))
            .build()
            .unwrap();
        let runner = Runner::new(
            palisade,
            Admission::new(2, Duration::from_secs(5)),
            Arc::new(Metrics::new()),
        );
        let policy = Policy::from_toml(
            "[kv]\nnamespace = \"runner-conflict\"\n[kv.buckets]\napp = \"rw\"\n",
            None,
        )
        .unwrap();
        let who = Who {
            tenant: "acme",
            session: None,
            app: None,
        };
        let run = |source: &'static str, options: RunOptions| {
            let (runner, policy, who) = (&runner, &policy, &who);
            async move {
                let script = Script::new("kv.js", source);
                runner
                    .run(policy, &script, "null", options, who)
                    .await
                    .unwrap()
            }
        };
        run(
            "export default () => kv.set('lock', 'free')",
            RunOptions::default(),
        )
        .await;
        let swapped = run(
            "export default () => kv.compareAndSwap('lock', 'free', 'mine')",
            RunOptions::default().kv_transaction(),
        )
        .await;
        assert_eq!(swapped.output().unwrap().get(), "true");
        run(
            "export default () => kv.set('lock', 'theirs')",
            RunOptions::default(),
        )
        .await;
        let refused = runner
            .apply_kv(swapped.kv_writes.unwrap())
            .await
            .unwrap_err();
        assert_eq!(refused.code(), "kv_conflict");
        assert_eq!(refused.status(), 409);
        assert_eq!(refused.body()["error"]["retryable"], true);
        let read = run("export default () => kv.get('lock')", RunOptions::default()).await;
        assert_eq!(read.output().unwrap().get(), "\"theirs\"");
        let set = run(
            "export default () => kv.set('lock', 'again')",
            RunOptions::default().kv_transaction(),
        )
        .await;
        runner.apply_kv(set.kv_writes.unwrap()).await.unwrap();
        let read = run("export default () => kv.get('lock')", RunOptions::default()).await;
        assert_eq!(read.output().unwrap().get(), "\"again\"");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
