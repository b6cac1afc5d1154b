//! `GET /metrics`: Prometheus text. Calls by policy and code, call duration, fuel, sessions
//! active, the admission queue, policy reload errors, and apps' open event streams.

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
    TextEncoder,
};

/// The server's metrics, registered in their own registry.
pub struct Metrics {
    registry: Registry,
    /// Calls, by policy and outcome code (`ok` for a result).
    pub calls: IntCounterVec,
    /// Call duration (the sandbox's wall time), by policy.
    pub duration: HistogramVec,
    /// Fuel used, by policy.
    pub fuel: IntCounterVec,
    /// Live sessions.
    pub sessions: IntGauge,
    /// Calls waiting for an admission permit.
    pub queued: IntGauge,
    /// Calls refused after the admission wait.
    pub rejected: IntCounter,
    /// Policy files that failed to load, counted at each reload.
    pub reload_errors: IntCounter,
    /// Reloads of the policies folder.
    pub reloads: IntCounter,
    /// Connections held now.
    pub connections: IntGauge,
    /// Connections closed at once because `--max-connections` were held.
    pub connections_refused: IntCounter,
    /// Policy files that did not load at the last reload.
    pub policies_invalid: IntGauge,
    /// Apps' server-sent event streams open now.
    pub app_event_streams: IntGauge,
    /// Slots of each kind in the instance pool (`--pool-slots`), set once at start.
    pub pool_slots: IntGauge,
}

fn must<T>(r: prometheus::Result<T>) -> T {
    r.expect("metric definitions are static and valid")
}

/// Define a metric and register it in `registry`.
fn registered<M: prometheus::core::Collector + Clone + 'static>(
    registry: &Registry,
    metric: prometheus::Result<M>,
) -> M {
    let metric = must(metric);
    must(registry.register(Box::new(metric.clone())));
    metric
}

fn gauge(registry: &Registry, name: &str, help: &str) -> IntGauge {
    registered(registry, IntGauge::new(name, help))
}

fn counter(registry: &Registry, name: &str, help: &str) -> IntCounter {
    registered(registry, IntCounter::new(name, help))
}

impl Metrics {
    /// Define and register every metric.
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let r = &registry;
        let calls = registered(
            r,
            IntCounterVec::new(
                Opts::new("palisade_calls_total", "Calls, by policy and outcome code"),
                &["policy", "code"],
            ),
        );
        let buckets = vec![
            0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
            2.5, 5.0, 10.0,
        ];
        let duration = registered(
            r,
            HistogramVec::new(
                HistogramOpts::new(
                    "palisade_call_duration_seconds",
                    "Wall time of each call in its sandbox",
                )
                .buckets(buckets),
                &["policy"],
            ),
        );
        let fuel = registered(
            r,
            IntCounterVec::new(
                Opts::new("palisade_fuel_used_total", "Fuel used, by policy"),
                &["policy"],
            ),
        );
        Metrics {
            calls,
            duration,
            fuel,
            sessions: gauge(r, "palisade_sessions_active", "Live sessions"),
            queued: gauge(
                r,
                "palisade_admission_queue",
                "Calls waiting for an admission permit",
            ),
            rejected: counter(
                r,
                "palisade_admission_rejected_total",
                "Calls refused with capacity_exhausted after the admission wait",
            ),
            reload_errors: counter(
                r,
                "palisade_policy_reload_errors_total",
                "Policy files that failed to load, counted at each reload",
            ),
            reloads: counter(
                r,
                "palisade_policy_reloads_total",
                "Reloads of the policies folder after a change",
            ),
            connections: gauge(r, "palisade_connections", "Connections held now"),
            connections_refused: counter(
                r,
                "palisade_connections_refused_total",
                "Connections closed at once because --max-connections were held",
            ),
            policies_invalid: gauge(
                r,
                "palisade_policies_invalid",
                "Policy files that did not load at the last reload",
            ),
            app_event_streams: gauge(
                r,
                "palisade_app_event_streams",
                "Server-sent event streams of apps open now",
            ),
            pool_slots: gauge(
                r,
                "palisade_pool_slots",
                "Slots of each kind in the instance pool (--pool-slots, at least --max-concurrency)",
            ),
            registry,
        }
    }

    /// Record one call's outcome.
    pub fn call(&self, outcome: &crate::Outcome) {
        let policy = outcome.receipt.policy.as_str();
        let code = outcome.error().map_or("ok", crate::Error::code);
        self.calls.with_label_values(&[policy, code]).inc();
        self.duration
            .with_label_values(&[policy])
            .observe(outcome.receipt.wall_time_us as f64 / 1e6);
        self.fuel
            .with_label_values(&[policy])
            .inc_by(outcome.receipt.fuel_used);
    }

    /// The Prometheus text of every metric.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}
