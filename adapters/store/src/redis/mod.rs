//! The Redis backend: the `redis` crate's multiplexed connection on smol. Records are
//! hashes written by Lua scripts (create-if-absent and compare-and-swap are atomic), event
//! logs are Redis Streams trimmed to [`StoreConfig::max_events`](crate::StoreConfig), the
//! bus is PUBLISH/SUBSCRIBE and the guard is `SET NX PX`.

mod bus;
mod guard;
mod log;
mod record;

use std::sync::OnceLock;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, RedisError, Script};

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

/// Every store trait, in Redis. Clones share one multiplexed connection; live tails and
/// subscriptions open their own.
#[derive(Clone)]
pub struct RedisStore {
    client: Client,
    connection: MultiplexedConnection,
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
    /// Connects to the server at `url` (`redis://HOST:PORT[/DB]`, `redis+unix:///PATH`).
    /// Must run on smol (or another executor with smol's global reactor).
    pub async fn connect(
        url: &str,
        config: StoreConfig,
        redis: RedisConfig,
    ) -> Result<Self, StoreError> {
        let client = Client::open(url)?;
        let connection = Self::open(&client, &redis, redis.response_timeout).await?;
        Ok(RedisStore {
            client,
            connection,
            config,
            redis,
        })
    }

    /// A new multiplexed connection whose replies may take `response_timeout`.
    async fn open(
        client: &Client,
        redis: &RedisConfig,
        response_timeout: Duration,
    ) -> Result<MultiplexedConnection, StoreError> {
        let options = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(redis.response_timeout))
            .set_response_timeout(Some(response_timeout));
        Ok(client
            .get_multiplexed_async_connection_with_config(&options)
            .await?)
    }

    /// The shared connection, for one command or pipeline.
    fn connection(&self) -> MultiplexedConnection {
        self.connection.clone()
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
