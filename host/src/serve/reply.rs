//! A response already made ([`Stored`]: status and JSON body), as kept for idempotent replays
//! and answered to the caller, and the server's fresh ids. A leaf: every service answers with
//! it, and it imports none of them.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A response already made: status and JSON body, kept as sent for idempotent replays.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Stored {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body.
    pub body: String,
}

impl Stored {
    /// The response, marked `Idempotent-Replayed: true` when an earlier request made it.
    pub fn respond(self, replayed: bool) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::OK);
        let mut response = (status, self.body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if replayed {
            headers.insert("idempotent-replayed", HeaderValue::from_static("true"));
        }
        response
    }
}

/// A fresh random id (sessions, error ids): 32 hex digits.
pub fn new_id() -> String {
    format!(
        "{:016x}{:016x}",
        rand::random::<u64>(),
        rand::random::<u64>()
    )
}
