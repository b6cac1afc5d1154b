//! The shared backend: the server's tables in one Redis (`palisade serve --store
//! redis://HOST:PORT/DB`), so that several replicas serve the same sessions, apps and keys.
//! Each [`Table`] is a hash of its records (`palisade:TABLE:v`) beside a sorted set of its keys
//! (`palisade:TABLE:k`, every score 0, so Redis keeps them in byte order, which is the
//! embedded file's order): [`Backend::scan`] reads a range of the set.
//!
//! Every step is one Lua script, which Redis runs alone: a reader never sees half of an
//! [`apply`](Backend::apply). Fences ([`Write::Fence`]) are checked before anything is written,
//! so a refused batch writes nothing. Durability is Redis's: with `appendonly yes` and
//! `appendfsync always` (docs/scaling.md) a write is on disk before Redis answers, and so
//! before the response that acknowledges it; with Redis's default `everysec`, up to a second of
//! acknowledged writes can be lost in a crash of the Redis machine. A script runs on one node:
//! Redis Cluster is not supported.

use super::{Backend, Scan, StoreError, Table, Write};
use crate::redis_pool::{Failure, Gcra, Pool};
use redis::Script;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The prefix of every key Palisade's server keeps in Redis.
const PREFIX: &str = "palisade:";

/// Apply a batch: `ARGV` is `op, table, key, value` four at a time (`P` put, `R` remove, `X`
/// remove a prefix, `F` fence: the lease `table` must still be held by `key`). Fences first:
/// a batch refused by one writes nothing and answers 0.
const APPLY: &str = r"
local p = KEYS[1]
for i = 1, #ARGV, 4 do
  if ARGV[i] == 'F' then
    if redis.call('GET', p .. 'lease:' .. ARGV[i + 1]) ~= ARGV[i + 2] then
      return 0
    end
  end
end
for i = 1, #ARGV, 4 do
  local op, v, k = ARGV[i], p .. ARGV[i + 1] .. ':v', p .. ARGV[i + 1] .. ':k'
  if op == 'P' then
    redis.call('HSET', v, ARGV[i + 2], ARGV[i + 3])
    redis.call('ZADD', k, 0, ARGV[i + 2])
  elseif op == 'R' then
    redis.call('HDEL', v, ARGV[i + 2])
    redis.call('ZREM', k, ARGV[i + 2])
  elseif op == 'X' then
    local from = '[' .. ARGV[i + 2]
    local to = '[' .. ARGV[i + 2] .. '\255'
    while true do
      local keys = redis.call('ZRANGEBYLEX', k, from, to, 'LIMIT', 0, 1000)
      if #keys == 0 then break end
      redis.call('HDEL', v, unpack(keys))
      redis.call('ZREM', k, unpack(keys))
    end
  end
end
return 1
";

/// A range: `KEYS` are the set and the hash; `ARGV` the range's bounds, the most entries and
/// the bytes of values after which it stops.
const SCAN: &str = r"
local keys = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local out, bytes, most = {}, 0, tonumber(ARGV[4])
for _, key in ipairs(keys) do
  if bytes >= most then break end
  local value = redis.call('HGET', KEYS[2], key)
  if value then
    out[#out + 1] = key
    out[#out + 1] = value
    bytes = bytes + #value
  end
end
return out
";

/// Remove each key of `ARGV` (`key, value` pairs) whose value is still the one given.
const REMOVE_IF: &str = r"
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[2], ARGV[i])
    redis.call('ZREM', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n
";

/// Take or extend the lease `KEYS[1]` for the holder `ARGV[1]` (of the replica `ARGV[3]`) for
/// `ARGV[2]` ms. A free lease goes to the replica that announced it is waiting (`KEYS[2]`,
/// refreshed by its every try, gone 50 ms after its last), if another did: a replica giving
/// a lease back cannot take it again at once while another waits, so replicas alternate on a
/// busy session instead of one starving.
const LEASE: &str = r"
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
local waiting = redis.call('GET', KEYS[2])
if holder == false and (waiting == false or waiting == ARGV[3]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if waiting then redis.call('DEL', KEYS[2]) end
  return 1
end
if waiting == false or waiting == ARGV[3] then
  redis.call('SET', KEYS[2], ARGV[3], 'PX', 50)
end
return 0
";

/// Give the lease `KEYS[1]` back, if `ARGV[1]` still holds it.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 1
";

/// The server's tables in Redis.
pub struct RedisBackend {
    pool: Pool,
    writable: AtomicBool,
    apply: Script,
    scan: Script,
    remove_if: Script,
    lease: Script,
    release: Script,
    gcra: Gcra,
}

fn keys(table: Table) -> (String, String) {
    (
        format!("{PREFIX}{}:k", table.name()),
        format!("{PREFIX}{}:v", table.name()),
    )
}

impl From<Failure> for StoreError {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Unavailable(detail) => StoreError::Unavailable(detail),
            Failure::Failed(detail) => StoreError::Failed(detail),
        }
    }
}

impl RedisBackend {
    /// The backend at `url` (`redis://HOST:PORT/DB`). It connects at once and fails when Redis
    /// does not answer, so that a server started with a wrong address says so at start; a
    /// Redis without `appendfsync always` is accepted with a warning.
    pub fn open(url: &str) -> Result<RedisBackend, String> {
        let backend = RedisBackend {
            pool: Pool::open(url)?,
            writable: AtomicBool::new(true),
            apply: Script::new(APPLY),
            scan: Script::new(SCAN),
            remove_if: Script::new(REMOVE_IF),
            lease: Script::new(LEASE),
            release: Script::new(RELEASE),
            gcra: Gcra::new(),
        };
        let fsync: Vec<String> = backend
            .pool
            .run(|c| redis::cmd("CONFIG").arg("GET").arg("appendfsync").query(c))
            .map_err(|e| format!("cannot reach the store: {e}"))?;
        if fsync.get(1).map(String::as_str) != Some("always") {
            tracing::warn!(
                "the store at {} does not fsync every write (appendfsync {:?}): a crash of \
                 Redis can lose acknowledged writes; see docs/scaling.md",
                backend.pool.shown(),
                fsync.get(1)
            );
        }
        Ok(backend)
    }

    /// Where it is: `host:port/db`.
    pub fn shown(&self) -> &str {
        self.pool.shown()
    }

    /// Note how a write ended: `/readyz` reports the server unready after a failed one.
    fn wrote<T>(&self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        match &result {
            Ok(_) => self.writable.store(true, Ordering::Release),
            Err(StoreError::Fenced) => {}
            Err(_) => self.writable.store(false, Ordering::Release),
        }
        result
    }

    /// Note how a read ended: a store that did not answer is not writable either.
    fn read<T>(&self, result: Result<T, Failure>) -> Result<T, StoreError> {
        if let Err(Failure::Unavailable(_)) = &result {
            self.writable.store(false, Ordering::Release);
        }
        result.map_err(StoreError::from)
    }
}

/// `ARGV` of [`APPLY`] for `writes`.
fn apply_args(writes: &[Write]) -> Vec<&str> {
    let mut args = Vec::with_capacity(writes.len() * 4);
    for write in writes {
        let four = match write {
            Write::Put { table, key, value } => ["P", table.name(), key, value],
            Write::Remove { table, key } => ["R", table.name(), key, ""],
            Write::RemovePrefix { table, prefix } => ["X", table.name(), prefix, ""],
            Write::Fence { lease, holder } => ["F", lease, holder, ""],
        };
        args.extend(four);
    }
    args
}

/// The bounds of `scan` in `ZRANGEBYLEX`'s terms. UTF-8 never has the byte 0xFF, so every key
/// that starts with the prefix sorts below the prefix followed by it.
fn bounds(scan: &Scan<'_>) -> (Vec<u8>, Vec<u8>) {
    let min = match scan.after {
        Some(after) if after >= scan.prefix => [b"(", after.as_bytes()].concat(),
        _ if scan.prefix.is_empty() => b"-".to_vec(),
        _ => [b"[", scan.prefix.as_bytes()].concat(),
    };
    let max = if scan.prefix.is_empty() {
        b"+".to_vec()
    } else {
        [b"[", scan.prefix.as_bytes(), b"\xff"].concat()
    };
    (min, max)
}

impl Backend for RedisBackend {
    fn get(&self, table: Table, key: &str) -> Result<Option<String>, StoreError> {
        let (_, values) = keys(table);
        self.read(
            self.pool
                .run(|c| redis::cmd("HGET").arg(&values).arg(key).query(c)),
        )
    }

    fn scan(&self, table: Table, scan: Scan<'_>) -> Result<Vec<(String, String)>, StoreError> {
        let (set, values) = keys(table);
        let (min, max) = bounds(&scan);
        // -1: no limit. Byte counts past 2^53 are all "no limit" to Lua's numbers.
        let limit = i64::try_from(scan.limit).unwrap_or(-1);
        let max_bytes = scan.max_bytes.min(1 << 53);
        let flat: Vec<String> = self.read(self.pool.run(|c| {
            self.scan
                .key(&set)
                .key(&values)
                .arg(&min)
                .arg(&max)
                .arg(limit)
                .arg(max_bytes)
                .invoke(c)
        }))?;
        let mut out = Vec::with_capacity(flat.len() / 2);
        let mut flat = flat.into_iter();
        while let (Some(k), Some(v)) = (flat.next(), flat.next()) {
            out.push((k, v));
        }
        Ok(out)
    }

    fn apply(&self, writes: &[Write]) -> Result<(), StoreError> {
        if writes.is_empty() {
            return Ok(());
        }
        let args = apply_args(writes);
        let result = match self
            .pool
            .run(|c| self.apply.key(PREFIX).arg(&args).invoke::<i64>(c))
        {
            Ok(1) => Ok(()),
            Ok(_) => Err(StoreError::Fenced),
            Err(failure) => Err(failure.into()),
        };
        self.wrote(result)
    }

    fn remove_if(
        &self,
        table: Table,
        keys_: &[String],
        still: &dyn Fn(&str) -> bool,
    ) -> Result<usize, StoreError> {
        if keys_.is_empty() {
            return Ok(0);
        }
        let (set, values) = keys(table);
        let found: Vec<Option<String>> = self.read(
            self.pool
                .run(|c| redis::cmd("HMGET").arg(&values).arg(keys_).query(c)),
        )?;
        let mut args = Vec::new();
        for (key, value) in keys_.iter().zip(found) {
            if let Some(value) = value.filter(|v| still(v)) {
                args.push(key.clone());
                args.push(value);
            }
        }
        if args.is_empty() {
            return Ok(0);
        }
        let result = self
            .pool
            .run(|c| self.remove_if.key(&set).key(&values).arg(&args).invoke(c))
            .map_err(StoreError::from);
        self.wrote(result)
    }

    fn writable(&self) -> bool {
        self.writable.load(Ordering::Acquire)
    }

    fn probe(&self) -> Result<(), StoreError> {
        let key = format!("{PREFIX}probe");
        let result = self
            .pool
            .run(|c| {
                redis::pipe()
                    .atomic()
                    .cmd("SET")
                    .arg(&key)
                    .arg("x")
                    .ignore()
                    .cmd("DEL")
                    .arg(&key)
                    .ignore()
                    .query::<()>(c)
            })
            .map_err(StoreError::from);
        self.wrote(result)
    }

    fn shared(&self) -> bool {
        true
    }

    fn try_lease(&self, name: &str, holder: &str, ttl: Duration) -> Result<bool, StoreError> {
        let key = format!("{PREFIX}lease:{name}");
        let waiting = format!("{PREFIX}waiting:{name}");
        let ms = ttl.as_millis().max(1) as u64;
        // A holder is `REPLICA#ID` (`Store::lease`).
        let replica = holder
            .rsplit_once('#')
            .map_or(holder, |(replica, _)| replica);
        let taken: i64 = self.read(self.pool.run(|c| {
            self.lease
                .key(&key)
                .key(&waiting)
                .arg(holder)
                .arg(ms)
                .arg(replica)
                .invoke(c)
        }))?;
        Ok(taken == 1)
    }

    fn release(&self, name: &str, holder: &str) -> Result<(), StoreError> {
        let key = format!("{PREFIX}lease:{name}");
        self.pool
            .run(|c| self.release.key(&key).arg(holder).invoke::<i64>(c))?;
        Ok(())
    }

    fn take_rate(
        &self,
        name: &str,
        interval: Duration,
        burst: u32,
    ) -> Result<Option<Duration>, StoreError> {
        let key = format!("{PREFIX}rate:{name}");
        self.read(self.gcra.take(&self.pool, &key, interval, burst))
    }
}
