//! Run tenant scripts from an axum service: a Rust capability that reads who is calling, a
//! policy built in code, per-call options and cancel.
//!
//! ```sh
//! cargo run -p palisade --features serve --example embed_axum          # serves on 127.0.0.1:3000
//! curl -s 127.0.0.1:3000/tenants/acme/run -H 'content-type: application/json' \
//!   -d '{"source": "export default async (x) => host.lookup_actor(x.actor)", "input": {"actor": "ada"}}'
//! ```
//!
//! docs/embedding.md walks through it.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use palisade::policy::CapabilityBuilder;
use palisade::{CallContext, CapabilityError, Event, Palisade, Policy, RunOptions, Script};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// What every request shares: one `Palisade` for the process, and the tenants' policy.
struct App {
    palisade: Palisade,
    policy: Policy,
}

/// The capability tenants' scripts call as `host.lookup_actor(id)`. It reads the caller's
/// context: the tenant the server attached to the call, the call id for its own logs.
async fn lookup_actor(context: CallContext, id: Value) -> Result<Value, CapabilityError> {
    let tenant = context
        .metadata
        .as_ref()
        .and_then(|m| m["tenant"].as_str().map(str::to_owned))
        .ok_or_else(|| CapabilityError::new("no_tenant", "the call has no tenant"))?;
    match id.as_str() {
        Some("ada") => Ok(json!({ "id": "ada", "tenant": tenant, "call": context.call_id })),
        Some(other) => Err(CapabilityError::new(
            "not_found",
            format!("{tenant} has no actor {other}"),
        )),
        None => Err(CapabilityError::new("bad_id", "an actor id is a string")),
    }
}

/// The policy of every tenant script, built in code (the same checks as a policy file).
fn tenant_policy() -> Result<Policy, palisade::PolicyError> {
    Policy::builder("tenant-scripts")
        .timeout(Duration::from_secs(2))
        .fuel(2_000_000_000)
        .capability(
            "lookup_actor",
            CapabilityBuilder::new()
                .max_calls(10)
                .schema(json!({ "type": "string", "maxLength": 64 })),
        )
        .build()
}

/// `POST /tenants/{tenant}/run` with `{"source": …, "input": …, "timeout_ms": …}`.
async fn run(
    State(app): State<Arc<App>>,
    Path(tenant): Path<String>,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    let source = body["source"].as_str().unwrap_or_default().to_owned();
    let script = Script::new(format!("{tenant}.js"), source);
    let input = body
        .get("input")
        .cloned()
        .unwrap_or(Value::Null)
        .to_string();
    // Per-call options: who is calling (for the capability), a shorter deadline if asked, and
    // the console lines as the script writes them.
    let mut options = RunOptions::default()
        .metadata(json!({ "tenant": tenant }))
        .on_event(|event| {
            if let Event::Console(line) = event {
                println!("console: {}", line.message);
            }
        });
    if let Some(ms) = body["timeout_ms"].as_u64() {
        options = options.timeout(Duration::from_millis(ms));
    }
    // The call runs on its own task. If this request is dropped (the client went away), the
    // handle is dropped with it and the call is cancelled; `canceller` stops it explicitly,
    // here when it has been running for longer than the service wants to wait.
    let handle = app.palisade.start(&app.policy, &script, &input, options);
    let canceller = handle.canceller();
    let watchdog = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        canceller.cancel();
    });
    let outcome = handle.outcome().await;
    watchdog.abort();
    let status = match outcome.error() {
        None => StatusCode::OK,
        Some(error) => {
            StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        }
    };
    (
        status,
        Json(serde_json::to_value(&outcome).unwrap_or(Value::Null)),
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let palisade = Palisade::builder()
        .max_concurrency(16)
        .typed_capability("lookup_actor", lookup_actor)
        .build()?;
    let app = Arc::new(App {
        palisade,
        policy: tenant_policy()?,
    });
    let router = Router::new()
        .route("/tenants/{tenant}/run", post(run))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, router).await?;
    Ok(())
}
