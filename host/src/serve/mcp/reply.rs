//! Answers as MCP content: the body the HTTP route would answer is the structured content, and
//! the text an agent reads first: a run's output as JSON and its console lines; a failure's
//! code, message, `fix` and `fix_note`, with `isError`.

use crate::serve::errors::ApiError;
use crate::serve::reply::Stored;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// A service's answer that is not a run's (a session, a file operation, a view).
pub fn value(body: &Value) -> CallToolResult {
    CallToolResult::structured(body.clone())
}

/// A run's or an action's answer, as the route would answer it.
pub fn stored(stored: &Stored) -> CallToolResult {
    let body: Value = serde_json::from_str(&stored.body).unwrap_or(Value::Null);
    let failed = stored.status >= 400;
    let mut content = Vec::new();
    if failed {
        content.push(ContentBlock::text(error_text(&body["error"])));
    } else if let Some(output) = body.get("output") {
        content.push(ContentBlock::text(output.to_string()));
    } else {
        content.push(ContentBlock::text(body.to_string()));
    }
    if let Some(lines) = console(&body) {
        content.push(ContentBlock::text(lines));
    }
    let mut result = if failed {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = Some(body);
    result
}

/// A refusal before anything ran (the request, the policy's name, a session's state).
pub fn refused(error: &ApiError) -> CallToolResult {
    let body = error.body();
    let mut result = CallToolResult::error(vec![ContentBlock::text(error_text(&body["error"]))]);
    result.structured_content = Some(body);
    result
}

/// `code: message`, then the fix and what to do, for an agent to act on.
fn error_text(error: &Value) -> String {
    let text = |key: &str| error.get(key).and_then(Value::as_str).unwrap_or("");
    let mut lines = vec![format!("{}: {}", text("code"), text("message"))];
    if let Some(fix) = error.get("fix").filter(|f| !f.is_null()) {
        lines.push(format!("fix: {fix}"));
    }
    if !text("fix_note").is_empty() {
        lines.push(format!("fix_note: {}", text("fix_note")));
    }
    if !text("docs_url").is_empty() {
        lines.push(format!("docs: {}", text("docs_url")));
    }
    lines.join("\n")
}

/// The console lines of a run, `level: message` each, or `None` when it printed none.
fn console(body: &Value) -> Option<String> {
    let logs = body.get("logs")?.as_array().filter(|l| !l.is_empty())?;
    let lines: Vec<String> = logs
        .iter()
        .map(|line| {
            let level = line["level"].as_str().unwrap_or("log");
            let message = line["message"].as_str().unwrap_or("");
            format!("console.{level}: {message}")
        })
        .collect();
    Some(lines.join("\n"))
}
