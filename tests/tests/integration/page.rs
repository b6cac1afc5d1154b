//! The page (`GET /`, `serve/page.rs`) in process: where it is served, the headers of its
//! files, and the two reads it adds to the API (a policy resolved, an app session's state).
//! The page itself, in a browser, is `make page` (web/test/e2e.mjs).

use crate::apps::{COUNTER, act, load};
use crate::serve::{Server, assert_error, config, start};
use http::StatusCode;
use palisade::serve::Config;
use serde_json::{Value, json};
use std::net::SocketAddr;

/// The `'nonce-…'` of a CSP's `style-src`.
fn style_nonce(csp: &str) -> String {
    let style = csp
        .split(';')
        .map(str::trim)
        .find(|d| d.starts_with("style-src"))
        .unwrap_or_else(|| panic!("no style-src in {csp}"));
    let nonce = style
        .split_whitespace()
        .find_map(|s| s.strip_prefix("'nonce-"))
        .unwrap_or_else(|| panic!("no nonce in {style}"));
    nonce.trim_end_matches('\'').to_owned()
}

fn header<'a>(answer: &'a crate::serve::Answer, name: &str) -> &'a str {
    answer
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

#[tokio::test]
async fn serve_page_is_served_with_a_csp_of_its_own_origin() {
    let server = start(config("page-served", true));
    let page = server.call("GET", "/", None, Value::Null).await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(header(&page, "content-type"), "text/html; charset=utf-8");
    let csp = header(&page, "content-security-policy");
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
    let html = page.body.as_str().unwrap();
    let nonce = style_nonce(csp);
    assert_eq!(nonce.len(), 32, "{nonce}");
    assert!(
        html.contains(&format!(
            "name=\"palisade-style-nonce\" content=\"{nonce}\""
        )),
        "{html}"
    );
    assert!(html.contains("<script type=\"module\" src=\"/page/app.js\">"));
    assert!(!html.contains("<script>"), "no inline script: {html}");
    // Each load of the page has its own nonce.
    let again = server.call("GET", "/", None, Value::Null).await;
    assert_ne!(
        style_nonce(header(&again, "content-security-policy")),
        nonce
    );
    for (path, kind) in [
        ("/page/app.js", "text/javascript; charset=utf-8"),
        ("/page/app.css", "text/css; charset=utf-8"),
    ] {
        let asset = server.call("GET", path, None, Value::Null).await;
        assert_eq!(asset.status, StatusCode::OK, "{path}");
        assert_eq!(header(&asset, "content-type"), kind);
        assert_eq!(
            header(&asset, "content-security-policy"),
            palisade::serve::page::CSP
        );
        assert_eq!(header(&asset, "x-content-type-options"), "nosniff");
    }
    // The page holds no data: the API behind it still wants the key.
    let refused = server.call("GET", "/v1/policies", None, Value::Null).await;
    assert_error(&refused, 401, "unauthorized");
}

#[tokio::test]
async fn serve_page_is_off_on_a_non_loopback_listener_unless_asked() {
    let mut open = config("page-public", true);
    open.listen = SocketAddr::from(([0, 0, 0, 0], 8787));
    let server = start(open.clone());
    for path in ["/", "/page/app.js"] {
        let missing = server.call("GET", path, None, Value::Null).await;
        assert_error(&missing, 404, "invalid_input");
    }
    let health = server.call("GET", "/healthz", None, Value::Null).await;
    assert_eq!(health.status, StatusCode::OK);
    open.playground = Some(true);
    let asked = start(Config {
        data: open.data.with_file_name("data-asked"),
        ..open
    });
    let page = asked.call("GET", "/", None, Value::Null).await;
    assert_eq!(page.status, StatusCode::OK);
    let mut loopback = config("page-off", true);
    loopback.playground = Some(false);
    let off = start(loopback);
    let missing = off.call("GET", "/", None, Value::Null).await;
    assert_error(&missing, 404, "invalid_input");
}

#[tokio::test]
async fn serve_policy_route_answers_the_resolved_policy() {
    let server = start(config("page-policy", true));
    let text = server
        .call("GET", "/v1/policies/box", Some("acme-key"), Value::Null)
        .await;
    assert_eq!(text.status, StatusCode::OK, "{}", text.body);
    assert_eq!(
        header(&text, "content-type"),
        "application/toml; charset=utf-8"
    );
    let body = text.body.as_str().unwrap();
    // Every default filled in, and itself a valid policy that resolves to the same one.
    assert!(
        body.contains("[fs.scratch]") && body.contains("fuel = "),
        "{body}"
    );
    let again = palisade::Policy::from_toml(body, None).unwrap();
    assert_eq!(again.to_string(), body);
    let unlisted = server
        .call("GET", "/v1/policies/box", Some("nobody-key"), Value::Null)
        .await;
    assert_error(&unlisted, 404, "policy_not_found");
    let anonymous = server
        .call("GET", "/v1/policies/box", None, Value::Null)
        .await;
    assert_error(&anonymous, 401, "unauthorized");
    server.assert_fine(Some("acme-key")).await;
}

#[tokio::test]
async fn serve_app_state_route_answers_the_committed_state() {
    let server: Server = start(config("page-app-state", false));
    let loaded = load(&server, "counter", COUNTER, "default").await;
    assert_eq!(loaded.status, StatusCode::CREATED, "{}", loaded.body);
    let state = |session: &'static str| {
        let server = &server;
        async move {
            let uri = format!("/v1/apps/counter/state?session_id={session}");
            server.call("GET", &uri, None, Value::Null).await
        }
    };
    let fresh = state("s1").await;
    assert_eq!(fresh.status, StatusCode::OK);
    assert_eq!(
        fresh.body,
        json!({"session_id": "s1", "seq": 0, "state": null})
    );
    let dry = act(
        &server,
        "counter",
        json!({"action": "inc", "params": {"by": 2}, "session_id": "s1", "dry_run": true}),
    )
    .await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.body);
    assert_eq!(state("s1").await.body["seq"], 0, "a dry run keeps nothing");
    let committed = act(
        &server,
        "counter",
        json!({"action": "inc", "params": {"by": 2}, "session_id": "s1"}),
    )
    .await;
    assert_eq!(committed.status, StatusCode::OK, "{}", committed.body);
    let after = state("s1").await;
    assert_eq!(after.body["seq"], 1);
    assert_eq!(after.body["state"], json!({"n": 2, "evil": ""}));
    assert_eq!(state("s2").await.body["state"], Value::Null);
    let bad = server
        .call(
            "GET",
            "/v1/apps/counter/state?session_id=a/b",
            None,
            Value::Null,
        )
        .await;
    assert_error(&bad, 400, "invalid_input");
    let missing = server
        .call("GET", "/v1/apps/nope/state", None, Value::Null)
        .await;
    assert_error(&missing, 404, "app_not_found");
    server.assert_fine(None).await;
}
