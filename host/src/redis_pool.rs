//! Connections to a Redis server (Valkey speaks the same protocol), for the stores that keep
//! their data there when several servers share it: the key-value store
//! ([`crate::kv::RedisKv`]) and `palisade serve --store redis://…`. A small pool of blocking
//! connections (the stores' callers already run on blocking threads), with every wait bounded:
//! connecting by [`CONNECT_TIMEOUT`], each reply by [`REPLY_TIMEOUT`]. A Redis that is down or
//! does not answer in time is [`Failure::Unavailable`], which a caller may retry; nothing
//! waits longer. Only the address (`host:port/db`) is ever shown, never a password in the URL.

use redis::ConnectionLike;
use std::sync::Mutex;
use std::time::Duration;

/// How long connecting may take: a Redis that does not accept within it is unavailable. Bounds
/// how long a request waits on a Redis that is down or unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long one reply may take. Every command and script the stores send touches a bounded
/// number of entries, so a reply later than this means the server is stuck or gone.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// Idle connections kept for reuse; a connection given back past this is closed. Bounds the
/// sockets a burst leaves open (Redis's own `maxclients` is 10,000 by default). Above the
/// store steps a busy replica has in flight (64 concurrent app commits keep about 64 open):
/// at 32, each of those past it opened a new connection, one per three actions, and a replica
/// committed 1,678 actions/s where two (32 each) committed 2,918 (docs/bench.md).
const IDLE: usize = 256;

/// Why a Redis operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Redis is down, unreachable, loading, read-only, or did not answer in time: the same
    /// operation may succeed later, and nothing of it was applied unless Redis said so.
    Unavailable(String),
    /// Redis answered with an error (a bug, or data that is not Palisade's).
    Failed(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Unavailable(d) => write!(f, "redis unavailable: {d}"),
            Failure::Failed(d) => write!(f, "redis: {d}"),
        }
    }
}

/// GCRA (the generic cell rate algorithm) on Redis's own clock, so that every replica reads
/// one time: `KEYS[1]` holds the theoretical arrival time in microseconds; `ARGV` are the
/// interval and the burst's tolerance in microseconds. Answers -1 when the request is taken,
/// else the microseconds until one is.
const GCRA_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local wait = tat - tonumber(ARGV[2]) - now
if wait > 0 then return wait end
local next_tat = tat + tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%d', next_tat), 'PX', math.ceil((next_tat - now) / 1000) + 1)
return -1
";

/// A rate shared by every process on one Redis, taken by [`GCRA_SCRIPT`].
pub struct Gcra(redis::Script);

impl Gcra {
    /// The script, loaded into Redis on first use.
    pub fn new() -> Gcra {
        Gcra(redis::Script::new(GCRA_SCRIPT))
    }

    /// Take one request from the rate at `key` (one every `interval`, `burst` at once): `None`
    /// when taken, else how long until one is free.
    pub fn take(
        &self,
        pool: &Pool,
        key: &str,
        interval: Duration,
        burst: u32,
    ) -> Result<Option<Duration>, Failure> {
        let every = interval.as_micros().max(1) as u64;
        let tolerance = every.saturating_mul(u64::from(burst.saturating_sub(1)));
        let wait: i64 = pool.run(|c| self.0.key(key).arg(every).arg(tolerance).invoke(c))?;
        Ok(u64::try_from(wait).ok().map(Duration::from_micros))
    }
}

/// Whether `e` says that Redis could not be reached or could not take the command now.
pub fn is_unavailable(e: &redis::RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind};
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_refusal()
        || e.is_connection_dropped()
        || matches!(
            e.kind(),
            ErrorKind::Server(
                ServerErrorKind::BusyLoading
                    | ServerErrorKind::MasterDown
                    | ServerErrorKind::ReadOnly
                    | ServerErrorKind::TryAgain
                    | ServerErrorKind::ClusterDown
            )
        )
        // A failed AOF write or snapshot: Redis refuses writes until its disk works again.
        || e.code() == Some("MISCONF")
}

/// A pool of connections to one Redis.
pub struct Pool {
    client: redis::Client,
    idle: Mutex<Vec<redis::Connection>>,
    shown: String,
}

impl Pool {
    /// A pool for `url` (`redis://HOST:PORT/DB`); nothing is connected yet.
    pub fn open(url: &str) -> Result<Pool, String> {
        let client = redis::Client::open(url)
            .map_err(|e| format!("`{}` is not a Redis URL: {e}", redact(url)))?;
        let info = client.get_connection_info();
        let shown = format!("{}/{}", info.addr(), info.redis_settings().db());
        Ok(Pool {
            client,
            idle: Mutex::new(Vec::new()),
            shown,
        })
    }

    /// Where it connects: `host:port/db`.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    fn connect(&self) -> redis::RedisResult<redis::Connection> {
        let conn = self.client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
        conn.set_read_timeout(Some(REPLY_TIMEOUT))?;
        conn.set_write_timeout(Some(REPLY_TIMEOUT))?;
        Ok(conn)
    }

    /// Run `f` on a connection. A connection that failed is closed (a reply may be pending on
    /// it), and so are the idle ones, which were opened before the failure (after a restart of
    /// Redis every one of them is dead); one that worked, or got an error reply, goes back to
    /// the pool. When a pooled connection fails so, `f` runs once more on a new connection:
    /// for operations that are idempotent (the same values set, the same keys removed, a lease
    /// taken by the same holder) or harmless to repeat (a rate's request counted twice, which
    /// errs on the side of refusing). A dead pooled connection fails on sending, before Redis
    /// ran anything; only a Redis that ran the step and restarted before its reply sees it twice.
    pub fn run<T>(
        &self,
        mut f: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Failure> {
        let pooled = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        if let Some(conn) = pooled {
            match self.on(conn, &mut f) {
                Err(e) if is_unavailable(&e) => {}
                done => return done.map_err(|e| self.failure(&e)),
            }
        }
        let conn = self.connect().map_err(|e| self.failure(&e))?;
        self.on(conn, &mut f).map_err(|e| self.failure(&e))
    }

    /// Run `f` once, on a pooled connection or a new one: for a step that is not safe to send
    /// twice (a `MULTI` … `EXEC` whose reply may be lost after Redis applied it).
    pub fn run_once<T>(
        &self,
        mut f: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Failure> {
        let pooled = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match pooled {
            Some(conn) => conn,
            None => self.connect().map_err(|e| self.failure(&e))?,
        };
        self.on(conn, &mut f).map_err(|e| self.failure(&e))
    }

    /// Run `f` on `conn`, then keep or close it.
    fn on<T>(
        &self,
        mut conn: redis::Connection,
        f: &mut impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> redis::RedisResult<T> {
        let result = f(&mut conn);
        let keep = match &result {
            Ok(_) => true,
            Err(e) => !is_unavailable(e) && conn.is_open(),
        };
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if !keep {
            idle.clear();
        } else if idle.len() < IDLE {
            idle.push(conn);
        }
        result
    }

    fn failure(&self, e: &redis::RedisError) -> Failure {
        let detail = format!("{}: {e}", self.shown);
        if is_unavailable(e) {
            Failure::Unavailable(detail)
        } else {
            Failure::Failed(detail)
        }
    }
}

/// `url` without a password (`redis://user:secret@host` → `redis://user:***@host`).
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

/// A `redis-server` of the tests' own, on 127.0.0.1 on a free port, with append-only
/// persistence in a temporary folder; killed and removed when dropped. `scripts/setup.sh`
/// installs Debian's `redis-server`.
#[cfg(test)]
pub(crate) struct TestRedis {
    child: std::process::Child,
    dir: std::path::PathBuf,
    /// `redis://127.0.0.1:PORT/0`.
    pub url: String,
}

#[cfg(test)]
impl TestRedis {
    pub(crate) fn start(name: &str) -> TestRedis {
        let dir =
            std::env::temp_dir().join(format!("palisade-redis-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("redis-server")
            .args([
                "--bind",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--save",
                "",
            ])
            .args(["--appendonly", "yes", "--appendfsync", "always"])
            .arg("--dir")
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server runs (scripts/setup.sh installs it)");
        let redis = TestRedis {
            child,
            dir,
            url: format!("redis://127.0.0.1:{port}/0"),
        };
        let pool = Pool::open(&redis.url).unwrap();
        for _ in 0..400 {
            if pool.run(|c| redis::cmd("PING").query::<String>(c)).is_ok() {
                return redis;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("redis-server did not answer within 10 s");
    }

    /// Send the server a signal (`-STOP` stalls it, `-CONT` resumes it); the server's lease
    /// tests use it.
    #[cfg(feature = "serve")]
    pub(crate) fn signal(&self, signal: &str) {
        let sent = std::process::Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill {signal}");
    }
}

#[cfg(test)]
impl Drop for TestRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::{Failure, Pool, redact};

    #[test]
    fn passwords_are_never_shown() {
        assert_eq!(redact("redis://u:pw@h:1/0"), "redis://u:***@h:1/0");
        assert_eq!(redact("redis://h:1/0"), "redis://h:1/0");
        let pool = Pool::open("redis://u:pw@127.0.0.1:1/3").unwrap();
        assert_eq!(pool.shown(), "127.0.0.1:1/3");
    }

    /// Nothing listens on port 1: the pool answers `Unavailable` within its connect timeout,
    /// and again on the next call (nothing is left broken).
    #[test]
    fn a_redis_that_is_down_is_unavailable() {
        let pool = Pool::open("redis://127.0.0.1:1/0").unwrap();
        for _ in 0..2 {
            let e = pool
                .run(|c| redis::cmd("PING").query::<String>(c))
                .unwrap_err();
            assert!(matches!(e, Failure::Unavailable(_)), "{e}");
        }
    }
}
