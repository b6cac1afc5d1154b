//! `GET /`: the page people use to write a script, pick or edit a policy, run, read the
//! refusal's `fix`, look at a session's files and drive an action app (docs/server.md, "The
//! page"). Its three files are built from `web/` (CodeMirror bundled by esbuild, `make page`)
//! into `host/page/` and served from the binary: no CDN, no network at run time. The page
//! calls the same API as every client, with the key the person typed (kept in the browser's
//! session storage, sent as `Authorization`, never in a URL); it runs no user script (a script
//! runs in the sandbox, never in the page), and its Content-Security-Policy forbids inline
//! script and every origin but the server's own.
//!
//! On by default on a loopback listener; a non-loopback one serves it only with
//! `--playground` ([`Config::playground`](super::state::Config::playground)).

use super::state::AppState;
use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// What the page and its assets may load and run: scripts, styles, images and requests from
/// the server itself, nothing inline (no `unsafe-inline`), no other origin, no frames, no
/// form posts elsewhere. The views of apps the page shows are the server's escaped HTML,
/// parsed as inert nodes: under this policy even a `<script>` that got through could not run.
/// `GET /` adds the nonce of the one kind of inline content it allows: the style elements the
/// editor (CodeMirror) makes, which carry the nonce the page hands it.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                       img-src 'self'; connect-src 'self'; base-uri 'none'; \
                       form-action 'none'; frame-ancestors 'none'";

/// Where `index.html` holds the style nonce (`<meta name="palisade-style-nonce">`).
const NONCE_SLOT: &str = "STYLE-NONCE";

const INDEX_HTML: &[u8] = include_bytes!("../../page/index.html");
const APP_JS: &[u8] = include_bytes!("../../page/app.js");
const APP_CSS: &[u8] = include_bytes!("../../page/app.css");

/// The page's routes (`/`, `/page/app.js`, `/page/app.css`) when the configuration turns it
/// on; none otherwise (then `/` is the API's 404).
pub fn router(state: &AppState) -> Router<AppState> {
    if !state.config.playground_on() {
        return Router::new();
    }
    Router::new()
        .route("/", get(|| async { index() }))
        .route(
            "/page/app.js",
            get(|| async { asset(APP_JS, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/page/app.css",
            get(|| async { asset(APP_CSS, "text/css; charset=utf-8") }),
        )
}

/// The page, with a fresh style nonce in its text and in its CSP's `style-src`.
fn index() -> Response {
    let nonce = super::reply::new_id();
    let html = String::from_utf8_lossy(INDEX_HTML).replace(NONCE_SLOT, &nonce);
    let csp = CSP.replace(
        "style-src 'self'",
        &format!("style-src 'self' 'nonce-{nonce}'"),
    );
    let mut response = asset(html, "text/html; charset=utf-8");
    if let Ok(value) = HeaderValue::from_str(&csp) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// One of the page's files, with the headers every one of them carries.
fn asset(body: impl IntoResponse, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
