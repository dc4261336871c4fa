//! Event logs in Redis Streams: one stream per session stream, entry ids `0-<position>`
//! (`XADD … 0-*`), trimmed with `MAXLEN`, read with `XRANGE` and followed with `XREAD BLOCK`.

use std::collections::VecDeque;
use std::sync::OnceLock;

use bytes::Bytes;
use redis::aio::MultiplexedConnection;
use redis::streams::{StreamId, StreamRangeReply, StreamReadReply};
use redis::Script;

use super::{script, unexpected, RedisStore};
use crate::config::check_size;
use crate::log::check_after;
use crate::record::ttl_millis;
use crate::{Event, EventId, EventLog, StoreError, StreamKey, Tail};

/// Appends ARGV[1] keeping ARGV[2] entries, sets the stream's TTL to ARGV[3] ms and returns
/// the entry's id.
const APPEND: &str = r"
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[2], '0-*', 'd', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return id
";

/// Events read per `XREAD` of a live tail.
const TAIL_BATCH: usize = 64;

static APPEND_SCRIPT: OnceLock<Script> = OnceLock::new();

/// `0-<n>` → `n`.
fn parse_id(id: &str) -> Result<u64, StoreError> {
    id.strip_prefix("0-")
        .and_then(|position| position.parse().ok())
        .ok_or_else(|| unexpected("a stream read (entry id)"))
}

fn parse_event(entry: &StreamId) -> Result<Event, StoreError> {
    let data: Vec<u8> = entry
        .get("d")
        .ok_or_else(|| unexpected("a stream read (entry data)"))?;
    Ok(Event {
        id: EventId(parse_id(&entry.id)?),
        data: Bytes::from(data),
    })
}

/// The position of a one-entry range reply, 0 when the stream holds nothing.
fn edge(reply: &StreamRangeReply) -> Result<u64, StoreError> {
    reply.ids.first().map_or(Ok(0), |entry| parse_id(&entry.id))
}

impl RedisStore {
    /// The oldest kept and last position of a stream, and up to `max` (at least one)
    /// entries from `start`, read in one transaction.
    async fn window(
        &self,
        key: &str,
        start: &str,
        max: usize,
    ) -> Result<(u64, u64, StreamRangeReply), StoreError> {
        let (first, last, range): (StreamRangeReply, StreamRangeReply, StreamRangeReply) =
            redis::pipe()
                .atomic()
                .cmd("XRANGE")
                .arg(key)
                .arg("-")
                .arg("+")
                .arg("COUNT")
                .arg(1)
                .cmd("XREVRANGE")
                .arg(key)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(1)
                .cmd("XRANGE")
                .arg(key)
                .arg(start)
                .arg("+")
                .arg("COUNT")
                .arg(max.max(1))
                .query_async(&mut self.connection().await?)
                .await?;
        Ok((edge(&first)?, edge(&last)?, range))
    }
}

impl EventLog for RedisStore {
    type Tail = RedisTail;

    async fn append(&self, stream: &StreamKey, data: &[u8]) -> Result<EventId, StoreError> {
        stream.check()?;
        check_size(data.len(), self.config.max_event_bytes, "event")?;
        let id: String = script(&APPEND_SCRIPT, APPEND)
            .key(stream.redis_key())
            .arg(data)
            .arg(self.config.max_events.max(1))
            .arg(ttl_millis(self.config.stream_ttl))
            .invoke_async(&mut self.connection().await?)
            .await?;
        Ok(EventId(parse_id(&id)?))
    }

    async fn replay(
        &self,
        stream: &StreamKey,
        after: Option<EventId>,
        max: usize,
    ) -> Result<Vec<Event>, StoreError> {
        stream.check()?;
        let start = match after {
            // No entry id follows the largest; an exclusive range from it is malformed.
            Some(EventId(u64::MAX)) => return Err(StoreError::UnknownEvent),
            Some(after) => format!("(0-{}", after.0),
            None => "-".to_owned(),
        };
        let (first, last, range) = self.window(&stream.redis_key(), &start, max).await?;
        if let Some(after) = after {
            check_after(after, first, last)?;
        }
        range.ids.iter().take(max).map(parse_event).collect()
    }

    async fn tail(
        &self,
        stream: &StreamKey,
        after: Option<EventId>,
    ) -> Result<RedisTail, StoreError> {
        stream.check()?;
        let key = stream.redis_key();
        let (first, last, _) = self.window(&key, "-", 1).await?;
        let cursor = match after {
            Some(after) => {
                check_after(after, first, last)?;
                after.0
            }
            None => last,
        };
        let block = self.redis.tail_block;
        let connection = super::connection::open(
            &self.client,
            &self.redis,
            block + self.redis.response_timeout,
        )
        .await?;
        Ok(RedisTail {
            connection,
            key,
            cursor,
            block_ms: ttl_millis(block),
            buffer: VecDeque::new(),
        })
    }

    async fn delete_stream(&self, stream: &StreamKey) -> Result<bool, StoreError> {
        stream.check()?;
        let deleted: i64 = redis::cmd("DEL")
            .arg(stream.redis_key())
            .query_async(&mut self.connection().await?)
            .await?;
        Ok(deleted == 1)
    }
}

/// A live tail of a Redis stream, on its own connection (its blocking reads hold it).
pub struct RedisTail {
    connection: MultiplexedConnection,
    key: String,
    cursor: u64,
    block_ms: u64,
    buffer: VecDeque<Event>,
}

impl std::fmt::Debug for RedisTail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTail")
            .field("key", &self.key)
            .field("cursor", &self.cursor)
            .finish_non_exhaustive()
    }
}

impl RedisTail {
    /// Waits (one blocking read) for events after the cursor and buffers them.
    async fn fill(&mut self) -> Result<(), StoreError> {
        let reply: Option<StreamReadReply> = redis::cmd("XREAD")
            .arg("COUNT")
            .arg(TAIL_BATCH)
            .arg("BLOCK")
            .arg(self.block_ms)
            .arg("STREAMS")
            .arg(&self.key)
            .arg(format!("0-{}", self.cursor))
            .query_async(&mut self.connection)
            .await?;
        for stream in reply.into_iter().flat_map(|reply| reply.keys) {
            for entry in &stream.ids {
                self.buffer.push_back(parse_event(entry)?);
            }
        }
        Ok(())
    }
}

impl Tail for RedisTail {
    async fn next(&mut self) -> Result<Event, StoreError> {
        loop {
            if let Some(event) = self.buffer.pop_front() {
                if event.id.0 > self.cursor.saturating_add(1) {
                    let oldest = event.id;
                    self.cursor = oldest.0 - 1;
                    self.buffer.push_front(event);
                    return Err(StoreError::Trimmed { oldest });
                }
                self.cursor = event.id.0;
                return Ok(event);
            }
            self.fill().await?;
        }
    }
}
