//! The shared connection of the Redis backend, opened again when it breaks: a command that
//! finds the server gone drops it, and the next command opens a new one. While the server
//! does not answer, a new connection is tried at most once per backoff delay (100 ms,
//! doubling up to 5 s, back to 100 ms once one opens); the commands in between fail at once.
//! So a Redis that is down when an instance starts, or restarts under it, is used again as
//! soon as it answers.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{AsyncConnectionConfig, Client, Cmd, Pipeline, RedisError, RedisFuture, Value};

use super::RedisConfig;
use crate::StoreError;

/// The first wait before trying again after a failed connect.
const FIRST_DELAY: Duration = Duration::from_millis(100);
/// The longest wait between two connects while the server does not answer.
const LAST_DELAY: Duration = Duration::from_secs(5);

/// One connection shared by every clone of a store, and when to try the next one.
#[derive(Debug)]
pub(crate) struct Reconnecting {
    client: Client,
    redis: RedisConfig,
    slot: Mutex<Slot>,
}

#[derive(Debug)]
struct Slot {
    /// The open connection and its generation.
    live: Option<(MultiplexedConnection, u64)>,
    /// Counts the connects begun, so a late failure drops only the connection it used.
    generation: u64,
    /// No connect before this (a connect is under way, or the last one failed).
    not_before: Option<Instant>,
    /// The wait after the next failed connect.
    delay: Duration,
}

impl Reconnecting {
    /// Nothing is opened until the first command.
    pub(crate) fn new(client: Client, redis: RedisConfig) -> Self {
        Reconnecting {
            client,
            redis,
            slot: Mutex::new(Slot {
                live: None,
                generation: 0,
                not_before: None,
                delay: FIRST_DELAY,
            }),
        }
    }

    fn slot(&self) -> MutexGuard<'_, Slot> {
        self.slot
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The open connection, or a new one; an error while the server does not answer.
    pub(crate) async fn get(self: &Arc<Self>) -> Result<Connection, StoreError> {
        let generation = {
            let mut slot = self.slot();
            if let Some((inner, generation)) = &slot.live {
                return Ok(self.wrap(inner.clone(), *generation));
            }
            let now = Instant::now();
            if slot.not_before.is_some_and(|at| now < at) {
                return Err(StoreError::Backend(
                    "the Redis server does not answer (trying again shortly)".to_owned(),
                ));
            }
            // Other commands fail at once while this connect is under way.
            slot.not_before = Some(now + self.redis.response_timeout);
            slot.generation += 1;
            slot.generation
        };
        // A caller that gives up during the connect lets the next one try at once.
        let mut abandoned = Abandoned(Some(self));
        let opened = open(&self.client, &self.redis, self.redis.response_timeout).await;
        abandoned.0 = None;
        let mut slot = self.slot();
        match opened {
            Ok(inner) => {
                slot.live = Some((inner.clone(), generation));
                slot.not_before = None;
                slot.delay = FIRST_DELAY;
                Ok(self.wrap(inner, generation))
            }
            Err(error) => {
                slot.not_before = Some(Instant::now() + slot.delay);
                slot.delay = (slot.delay * 2).min(LAST_DELAY);
                Err(error)
            }
        }
    }

    fn wrap(self: &Arc<Self>, inner: MultiplexedConnection, generation: u64) -> Connection {
        Connection {
            inner,
            generation,
            owner: self.clone(),
        }
    }

    /// Drops the connection of `generation` if it is still the open one.
    fn broken(&self, generation: u64) {
        let mut slot = self.slot();
        if slot.live.as_ref().is_some_and(|(_, g)| *g == generation) {
            slot.live = None;
        }
    }
}

/// Clears the wait a connect set when its caller drops it unfinished.
struct Abandoned<'a>(Option<&'a Reconnecting>);

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if let Some(owner) = self.0 {
            owner.slot().not_before = None;
        }
    }
}

/// A new multiplexed connection whose replies may take `response_timeout`.
pub(crate) async fn open(
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

/// The shared connection for one command or pipeline: an error saying the server is gone
/// drops it for every clone.
pub(crate) struct Connection {
    inner: MultiplexedConnection,
    generation: u64,
    owner: Arc<Reconnecting>,
}

impl Connection {
    fn settle<T>(&self, result: Result<T, RedisError>) -> Result<T, RedisError> {
        if let Err(error) = &result {
            // A slow reply (a timeout) keeps the connection: the server is still there.
            if !error.is_timeout()
                && (error.is_io_error()
                    || error.is_connection_dropped()
                    || error.is_connection_refusal()
                    || error.is_unrecoverable_error())
            {
                self.owner.broken(self.generation);
            }
        }
        result
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let result = self.inner.req_packed_command(cmd).await;
            self.settle(result)
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let result = self
                .inner
                .req_packed_commands(pipeline, offset, count)
                .await;
            self.settle(result)
        })
    }

    fn get_db(&self) -> i64 {
        self.inner.get_db()
    }
}
