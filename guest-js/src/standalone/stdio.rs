//! Reading stdin and writing stdout and stderr through `wasi:cli`.

use crate::wasi::io::streams::{InputStream, OutputStream, StreamError};

/// `wasi:io` takes at most 4096 bytes per blocking write.
const CHUNK: usize = 4096;

/// Write `bytes` whole (a closed stream drops the rest).
pub fn write_all(stream: &OutputStream, bytes: &[u8]) {
    for chunk in bytes.chunks(CHUNK) {
        if stream.blocking_write_and_flush(chunk).is_err() {
            return;
        }
    }
}

/// Read `stream` to its end; `Err` with the bytes read so far once they pass `limit`.
pub fn read_to_end(stream: &InputStream, limit: u64) -> Result<Vec<u8>, ()> {
    let mut out = Vec::new();
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => {
                out.extend_from_slice(&chunk);
                if out.len() as u64 > limit {
                    return Err(());
                }
            }
            Err(StreamError::Closed) => return Ok(out),
            Err(StreamError::LastOperationFailed(_)) => return Ok(out),
        }
    }
}
