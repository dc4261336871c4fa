//! Where several server instances keep the sessions they share ([`SessionStore`], see
//! `HttpServerOptions::store`): one `mcp-sansio-store` backend, in this process's memory (for
//! servers of one process) or in Redis (feature `redis`), behind the few operations the
//! server needs.

use std::time::Duration;

use bytes::Bytes;
use mcp_sansio_store::{
    Bus, Event, EventId, EventLog, Guard, MemoryStore, MemorySubscription, RecordKey, RecordStore,
    StoreError, StreamKey, Subscription, Version, Versioned,
};
#[cfg(feature = "redis")]
use mcp_sansio_store::{RedisConfig, RedisStore, RedisSubscription, StoreConfig};

/// The store sessions are shared through.
#[derive(Clone, Debug)]
pub enum SessionStore {
    /// This process's memory: servers in one process sharing a `MemoryStore` clone share
    /// their sessions.
    Memory(MemoryStore),
    /// A Redis server (feature `redis`).
    #[cfg(feature = "redis")]
    Redis(Box<RedisStore>),
}

/// Runs `$body` with `$s` bound to the backend of `$store`.
macro_rules! each {
    ($store:expr, $s:ident => $body:expr) => {
        match $store {
            SessionStore::Memory($s) => $body,
            #[cfg(feature = "redis")]
            SessionStore::Redis($s) => $body,
        }
    };
}

impl SessionStore {
    /// A new in-memory store with the default limits.
    pub fn memory() -> Self {
        SessionStore::Memory(MemoryStore::default())
    }

    /// Connects to the Redis server at `url` (`redis://HOST:PORT`) with the default limits.
    /// Must run on smol (e.g. inside `smol::block_on`).
    #[cfg(feature = "redis")]
    pub async fn redis(url: &str) -> Result<Self, StoreError> {
        let store =
            RedisStore::connect(url, StoreConfig::default(), RedisConfig::default()).await?;
        Ok(SessionStore::Redis(Box::new(store)))
    }

    /// The Redis server at `url` (`redis://HOST:PORT`) with the default limits, without
    /// connecting: the first use connects, and a server that does not answer then (or goes
    /// away later) is tried again at the next use, at most once per backoff delay. Only a
    /// malformed `url` is an error here. An `HttpServer` with this store answers `503` until
    /// the server answers.
    #[cfg(feature = "redis")]
    pub fn redis_lazy(url: &str) -> Result<Self, StoreError> {
        let store = RedisStore::lazy(url, StoreConfig::default(), RedisConfig::default())?;
        Ok(SessionStore::Redis(Box::new(store)))
    }

    /// The secret named `name` (letters, digits and `-`) shared by every instance using this
    /// store: 32 random bytes, created by the first instance that asks for it and read by
    /// the others (record `mcp:{secret.<name>}:record`, a year's time to live, reset on each
    /// ask). For keys the application shares among its instances, e.g. the
    /// `RequestStateKey` of 2026-07-28 input rounds. Must run on smol.
    pub async fn shared_secret(&self, name: &str) -> Result<Vec<u8>, StoreError> {
        super::sharing::shared_secret(self, &super::sharing::secret_record(name)).await
    }

    pub(crate) async fn create(
        &self,
        key: &RecordKey,
        bytes: &[u8],
        ttl: Duration,
    ) -> Result<Version, StoreError> {
        each!(self, s => s.create(key, bytes, ttl).await)
    }

    pub(crate) async fn load(&self, key: &RecordKey) -> Result<Option<Versioned>, StoreError> {
        each!(self, s => s.load(key).await)
    }

    pub(crate) async fn compare_and_swap(
        &self,
        key: &RecordKey,
        expected: Version,
        bytes: &[u8],
        ttl: Duration,
    ) -> Result<Version, StoreError> {
        each!(self, s => s.compare_and_swap(key, expected, bytes, ttl).await)
    }

    pub(crate) async fn touch(&self, key: &RecordKey, ttl: Duration) -> Result<bool, StoreError> {
        each!(self, s => s.touch(key, ttl).await)
    }

    pub(crate) async fn delete(&self, key: &RecordKey) -> Result<bool, StoreError> {
        each!(self, s => s.delete(key).await)
    }

    pub(crate) async fn append(
        &self,
        stream: &StreamKey,
        data: &[u8],
    ) -> Result<EventId, StoreError> {
        each!(self, s => s.append(stream, data).await)
    }

    pub(crate) async fn replay(
        &self,
        stream: &StreamKey,
        after: Option<EventId>,
        max: usize,
    ) -> Result<Vec<Event>, StoreError> {
        each!(self, s => s.replay(stream, after, max).await)
    }

    pub(crate) async fn claim(&self, token: &[u8], ttl: Duration) -> Result<bool, StoreError> {
        each!(self, s => s.claim(token, ttl).await)
    }

    pub(crate) async fn publish(&self, channel: &str, payload: &[u8]) -> Result<usize, StoreError> {
        each!(self, s => s.publish(channel, payload).await)
    }

    pub(crate) async fn subscribe(&self, channel: &str) -> Result<AnySubscription, StoreError> {
        Ok(match self {
            SessionStore::Memory(s) => AnySubscription::Memory(s.subscribe(channel).await?),
            #[cfg(feature = "redis")]
            SessionStore::Redis(s) => AnySubscription::Redis(s.subscribe(channel).await?),
        })
    }
}

/// A bus subscription of either backend.
pub(crate) enum AnySubscription {
    Memory(MemorySubscription),
    #[cfg(feature = "redis")]
    Redis(RedisSubscription),
}

impl AnySubscription {
    pub(crate) async fn next(&mut self) -> Result<Bytes, StoreError> {
        match self {
            AnySubscription::Memory(s) => s.next().await,
            #[cfg(feature = "redis")]
            AnySubscription::Redis(s) => s.next().await,
        }
    }
}
