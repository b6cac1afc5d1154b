//! Requests the HTTP client cannot make on purpose: a body that stalls part way, and one cut
//! off, written on a plain TCP connection.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The `--body-timeout` of a server the soak starts: a stalled body is answered 408 after it.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(2);

/// A body one byte over the server's 32 MiB limit.
pub const OVERSIZED: usize = (32 << 20) + 1;

/// Longest wait for the 408 of a stalled body (the server's body timeout, with room for a
/// loaded machine).
const ANSWER_WAIT: Duration = Duration::from_secs(60);

/// Connect, and send the head of a `POST /v1/run` with `key` that announces `length` bytes of
/// body, and the first 10 of them.
async fn start(authority: &str, key: &str, length: usize) -> Result<TcpStream, String> {
    let mut stream = TcpStream::connect(authority)
        .await
        .map_err(|e| format!("cannot reach {authority}: {e}"))?;
    let request = format!(
        "POST /v1/run HTTP/1.1\r\nhost: {authority}\r\nauthorization: Bearer {key}\r\n\
         content-type: application/json\r\ncontent-length: {length}\r\n\r\n{{\"policy\":"
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("writing: {e}"))?;
    Ok(stream)
}

/// Announce 64 bytes of body, send 10, and wait: the status the server answers with, and its
/// error's code.
pub async fn stalled_body(authority: &str, key: &str) -> Result<(u16, String), String> {
    let mut stream = start(authority, key, 64).await?;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(ANSWER_WAIT, async {
        let mut buf = [0u8; 4096];
        // Until the head and a body of the length it gives have arrived, or the server closes.
        while !complete(&answer) {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    if read.is_err() {
        return Err(format!("no answer within {} s", ANSWER_WAIT.as_secs()));
    }
    parse(&answer)
}

/// Announce 1,000 bytes of body, send 10 and close the connection: nothing to answer.
pub async fn cut_body(authority: &str, key: &str) -> Result<(), String> {
    let stream = start(authority, key, 1000).await?;
    let _ = stream.set_zero_linger();
    Ok(())
}

/// The head's end and the body's length, once the head has arrived.
fn split(answer: &[u8]) -> Option<(usize, usize)> {
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    Some((end, length))
}

fn complete(answer: &[u8]) -> bool {
    split(answer).is_some_and(|(end, length)| answer.len() >= end + length)
}

/// The status of an HTTP/1.1 answer and its error's code.
fn parse(answer: &[u8]) -> Result<(u16, String), String> {
    let (end, length) = split(answer).ok_or("the answer has no complete head")?;
    let text = String::from_utf8_lossy(answer);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("the answer has no status")?;
    let body = &answer[end..answer.len().min(end + length)];
    let code = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["error"]["code"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "not_json".to_owned());
    Ok((status, code))
}
