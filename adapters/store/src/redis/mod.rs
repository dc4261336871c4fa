//! The Redis backend: the `redis` crate's multiplexed connection on smol. Records are
//! hashes written by Lua scripts (create-if-absent and compare-and-swap are atomic), event
//! logs are Redis Streams trimmed to [`StoreConfig::max_events`](crate::StoreConfig), the
//! bus is PUBLISH/SUBSCRIBE and the guard is `SET NX PX`.

mod bus;
mod connection;
mod guard;
mod log;
mod record;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use redis::{Client, RedisError, Script};

pub use bus::RedisSubscription;
pub use log::RedisTail;

use crate::config::StoreConfig;
use crate::StoreError;

/// How the Redis backend talks to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedisConfig {
    /// The longest wait for one reply (and for connecting).
    pub response_timeout: Duration,
    /// How long one blocking read of a live tail waits before it asks again.
    pub tail_block: Duration,
}

impl Default for RedisConfig {
    fn default() -> Self {
        RedisConfig {
            response_timeout: Duration::from_secs(5),
            tail_block: Duration::from_secs(1),
        }
    }
}

/// Every store trait, in Redis. Clones share one multiplexed connection, opened again when
/// it breaks (at most once per backoff delay, 100 ms doubling up to 5 s, while the server
/// does not answer); live tails and subscriptions open their own.
#[derive(Clone)]
pub struct RedisStore {
    client: Client,
    connection: Arc<connection::Reconnecting>,
    config: StoreConfig,
    redis: RedisConfig,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("server", &self.client.get_connection_info().addr())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// Connects to the server at `url` (`redis://HOST:PORT[/DB]`, `redis+unix:///PATH`):
    /// [`lazy`](Self::lazy), then one connection opened, so an unreachable server is an error
    /// here. Must run on smol (or another executor with smol's global reactor).
    pub async fn connect(
        url: &str,
        config: StoreConfig,
        redis: RedisConfig,
    ) -> Result<Self, StoreError> {
        let store = Self::lazy(url, config, redis)?;
        store.connection().await?;
        Ok(store)
    }

    /// The store of the server at `url` without connecting: the first command connects, and
    /// fails while the server does not answer (only a malformed `url` is an error here).
    pub fn lazy(url: &str, config: StoreConfig, redis: RedisConfig) -> Result<Self, StoreError> {
        let client = Client::open(url)?;
        Ok(RedisStore {
            connection: Arc::new(connection::Reconnecting::new(client.clone(), redis)),
            client,
            config,
            redis,
        })
    }

    /// The shared connection, for one command or pipeline.
    async fn connection(&self) -> Result<connection::Connection, StoreError> {
        self.connection.get().await
    }

    /// `cmd`, which may safely run twice (a read, a time-to-live reset): tried once more on
    /// a new connection when the shared one was found closed (the server restarted since
    /// its last command), so the first request after a restart is served, not refused.
    async fn query_twice<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
    ) -> Result<T, StoreError> {
        match cmd.query_async(&mut self.connection().await?).await {
            Err(e) if !e.is_timeout() && (e.is_connection_dropped() || e.is_io_error()) => {
                Ok(cmd.query_async(&mut self.connection().await?).await?)
            }
            reply => Ok(reply?),
        }
    }
}

impl From<RedisError> for StoreError {
    fn from(error: RedisError) -> Self {
        StoreError::Backend(error.to_string())
    }
}

/// A script's reply that does not have the expected shape.
fn unexpected(what: &str) -> StoreError {
    StoreError::Backend(format!("unexpected reply to {what}"))
}

/// A script built once per process (its SHA-1 computed then); the server loads it on first
/// use.
fn script<'a>(cell: &'a OnceLock<Script>, source: &str) -> &'a Script {
    cell.get_or_init(|| Script::new(source))
}
