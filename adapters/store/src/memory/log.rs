//! In-memory event streams and their live tails.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use super::{lock, make_room, MemoryStore};
use crate::config::check_size;
use crate::log::check_after;
use crate::{Event, EventId, EventLog, StoreError, StreamKey, Tail};

#[derive(Debug)]
pub(super) struct Stream {
    events: VecDeque<Event>,
    last: u64,
    expires: Instant,
    /// Woken on every append and when the stream goes away.
    notify: Arc<event_listener::Event>,
}

impl Stream {
    fn first(&self) -> u64 {
        self.events.front().map_or(0, |event| event.id.0)
    }

    /// Whether the stream has expired; an expired stream's tails are woken to see it go.
    fn expired(&self, now: Instant) -> bool {
        let expired = self.expires <= now;
        if expired {
            self.notify.notify(usize::MAX);
        }
        expired
    }

    /// The first event after `cursor`, if one is kept.
    fn after(&self, cursor: u64) -> Option<&Event> {
        let first = self.first();
        if first == 0 {
            return None;
        }
        let index = cursor.saturating_add(1).max(first) - first;
        self.events.get(usize::try_from(index).ok()?)
    }
}

type Streams = HashMap<StreamKey, Stream>;

impl MemoryStore {
    /// The live stream under `key`, dropping it if it expired.
    fn live_stream<'a>(
        table: &'a mut Streams,
        key: &StreamKey,
        now: Instant,
    ) -> Option<&'a mut Stream> {
        if table.get(key).is_some_and(|stream| stream.expired(now)) {
            table.remove(key);
        }
        table.get_mut(key)
    }

    /// The live stream under `key`, created empty if absent (within the table's limit).
    fn stream_or_new<'a>(
        &self,
        table: &'a mut Streams,
        key: &StreamKey,
        now: Instant,
    ) -> Result<&'a mut Stream, StoreError> {
        if Self::live_stream(table, key, now).is_none() {
            make_room(
                table,
                self.inner.limits.max_streams,
                "event streams",
                |stream| stream.expired(now),
            )?;
            table.insert(
                key.clone(),
                Stream {
                    events: VecDeque::new(),
                    last: 0,
                    expires: now + self.inner.config.stream_ttl,
                    notify: Arc::new(event_listener::Event::new()),
                },
            );
        }
        table.get_mut(key).ok_or(StoreError::NotFound)
    }
}

impl EventLog for MemoryStore {
    type Tail = MemoryTail;

    async fn append(&self, key: &StreamKey, data: &[u8]) -> Result<EventId, StoreError> {
        key.check()?;
        let config = self.inner.config;
        check_size(data.len(), config.max_event_bytes, "event")?;
        let now = Instant::now();
        let mut table = lock(&self.inner.streams);
        let stream = self.stream_or_new(&mut table, key, now)?;
        stream.last += 1;
        let id = EventId(stream.last);
        stream.events.push_back(Event {
            id,
            data: Bytes::copy_from_slice(data),
        });
        while stream.events.len() > config.max_events.max(1) {
            stream.events.pop_front();
        }
        stream.expires = now + config.stream_ttl;
        stream.notify.notify(usize::MAX);
        Ok(id)
    }

    async fn replay(
        &self,
        key: &StreamKey,
        after: Option<EventId>,
        max: usize,
    ) -> Result<Vec<Event>, StoreError> {
        key.check()?;
        let mut table = lock(&self.inner.streams);
        let Some(stream) = Self::live_stream(&mut table, key, Instant::now()) else {
            check_after(after.unwrap_or(EventId(0)), 0, 0)?;
            return Ok(Vec::new());
        };
        let cursor = match after {
            Some(after) => {
                check_after(after, stream.first(), stream.last)?;
                after.0
            }
            None => 0,
        };
        let Some(start) = stream.after(cursor) else {
            return Ok(Vec::new());
        };
        let skip = usize::try_from(start.id.0 - stream.first()).unwrap_or(usize::MAX);
        Ok(stream.events.iter().skip(skip).take(max).cloned().collect())
    }

    async fn tail(
        &self,
        key: &StreamKey,
        after: Option<EventId>,
    ) -> Result<MemoryTail, StoreError> {
        key.check()?;
        let mut table = lock(&self.inner.streams);
        let stream = self.stream_or_new(&mut table, key, Instant::now())?;
        let cursor = match after {
            Some(after) => {
                check_after(after, stream.first(), stream.last)?;
                after.0
            }
            None => stream.last,
        };
        Ok(MemoryTail {
            store: self.clone(),
            key: key.clone(),
            cursor,
        })
    }

    async fn delete_stream(&self, key: &StreamKey) -> Result<bool, StoreError> {
        key.check()?;
        let now = Instant::now();
        let mut table = lock(&self.inner.streams);
        Ok(table.remove(key).is_some_and(|stream| {
            stream.notify.notify(usize::MAX);
            !stream.expired(now)
        }))
    }
}

/// A live tail of an in-memory stream.
#[derive(Debug)]
pub struct MemoryTail {
    store: MemoryStore,
    key: StreamKey,
    cursor: u64,
}

impl MemoryTail {
    /// The next event, a trim it fell behind, or a listener to wait on.
    fn poll_event(&mut self) -> Result<Result<Event, event_listener::EventListener>, StoreError> {
        let mut table = lock(&self.store.inner.streams);
        let stream = self
            .store
            .stream_or_new(&mut table, &self.key, Instant::now())?;
        let first = stream.first();
        if first > 0 && self.cursor.saturating_add(1) < first {
            self.cursor = first - 1;
            return Err(StoreError::Trimmed {
                oldest: EventId(first),
            });
        }
        if let Some(event) = stream.after(self.cursor) {
            self.cursor = event.id.0;
            return Ok(Ok(event.clone()));
        }
        Ok(Err(stream.notify.listen()))
    }
}

impl Tail for MemoryTail {
    async fn next(&mut self) -> Result<Event, StoreError> {
        loop {
            match self.poll_event()? {
                Ok(event) => return Ok(event),
                Err(listener) => listener.await,
            }
        }
    }
}
