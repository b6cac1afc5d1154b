//! Admission: at most `--max-concurrency` calls run at once; a call waits at most the
//! admission wait for a permit, then is refused with 503 `capacity_exhausted` and
//! `Retry-After`. Sessions past `--max-sessions` (the server's or the tenant's) are refused
//! with 429 `capacity_exhausted` (in `sessions.rs`).

use super::errors::ApiError;
use super::metrics::Metrics;
use axum::http::StatusCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The run permits.
pub struct Admission {
    permits: Arc<Semaphore>,
    max: usize,
    wait: Duration,
}

/// Seconds a refused caller is told to wait.
pub const RETRY_AFTER_SECONDS: u64 = 1;

impl Admission {
    /// `max` calls at once, each waiting at most `wait` for its turn.
    pub fn new(max: usize, wait: Duration) -> Admission {
        Admission {
            permits: Arc::new(Semaphore::new(max.max(1))),
            max: max.max(1),
            wait,
        }
    }

    /// A permit to run one call, or `capacity_exhausted` after the wait.
    pub async fn enter(&self, metrics: &Metrics) -> Result<OwnedSemaphorePermit, ApiError> {
        if let Ok(permit) = self.permits.clone().try_acquire_owned() {
            return Ok(permit);
        }
        let started = Instant::now();
        metrics.queued.inc();
        let permit = tokio::time::timeout(self.wait, self.permits.clone().acquire_owned()).await;
        metrics.queued.dec();
        match permit {
            Ok(Ok(permit)) => Ok(permit),
            _ => {
                metrics.rejected.inc();
                Err(ApiError::capacity(
                    StatusCode::SERVICE_UNAVAILABLE,
                    started.elapsed().as_millis() as u64,
                    RETRY_AFTER_SECONDS,
                    "every run slot stayed busy; retry after Retry-After seconds",
                ))
            }
        }
    }

    /// Calls running now.
    pub fn running(&self) -> usize {
        self.max - self.permits.available_permits()
    }
}
