//! The frame feed: a [`TraceSink`] that keeps the latest frames (and HTTP heads, SSE fields
//! and inspector events) as JSON records numbered in order, for the page's live log. The
//! buffer is bounded by count and by bytes; a listener that falls behind is told how many
//! records it missed.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mcp_sansio::trace::{Direction, FrameTrace, TraceSink};
use serde_json::{json, Map, Value};

/// Records kept at most.
const MAX_RECORDS: usize = 2_000;
/// Bytes of JSON kept at most (the oldest records go first).
const MAX_BYTES: usize = 16 << 20;

/// What a listener gets next: records after the one it saw last.
pub(crate) struct Batch {
    /// `(seq, JSON record)`, oldest first.
    pub(crate) records: Vec<(u64, Arc<str>)>,
    /// Records the listener missed because the buffer dropped them.
    pub(crate) missed: u64,
}

/// The shared feed; cloning shares it.
#[derive(Clone)]
pub(crate) struct Feed(Arc<Shared>);

struct Shared {
    start: Instant,
    ring: Mutex<Ring>,
    changed: Condvar,
}

#[derive(Default)]
struct Ring {
    records: VecDeque<(u64, Arc<str>)>,
    bytes: usize,
    next_seq: u64,
}

impl Feed {
    pub(crate) fn new() -> Self {
        Feed(Arc::new(Shared {
            start: Instant::now(),
            ring: Mutex::new(Ring::default()),
            changed: Condvar::new(),
        }))
    }

    fn ring(&self) -> MutexGuard<'_, Ring> {
        self.0.ring.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn millis(&self, at: Instant) -> f64 {
        let ms = at.saturating_duration_since(self.0.start).as_secs_f64() * 1000.0;
        (ms * 1000.0).round() / 1000.0
    }

    /// Adds one record (an object; `seq` and `t_ms` are set here) and wakes the listeners.
    fn push(&self, at: Instant, mut record: Map<String, Value>) {
        let mut ring = self.ring();
        let seq = ring.next_seq;
        ring.next_seq += 1;
        record.insert("seq".into(), seq.into());
        record.insert("t_ms".into(), self.millis(at).into());
        let text: Arc<str> = Value::Object(record).to_string().into();
        ring.bytes += text.len();
        ring.records.push_back((seq, text));
        while ring.records.len() > MAX_RECORDS || (ring.bytes > MAX_BYTES && ring.records.len() > 1)
        {
            if let Some((_, old)) = ring.records.pop_front() {
                ring.bytes -= old.len();
            }
        }
        drop(ring);
        self.0.changed.notify_all();
    }

    /// An inspector event for the page (`kind` such as `pending` or `state`), not a frame.
    pub(crate) fn event(&self, kind: &str, data: Value) {
        let mut record = Map::new();
        record.insert("event".into(), kind.into());
        record.insert("data".into(), data);
        self.push(Instant::now(), record);
    }

    /// The records after `after` (all kept records with `None`), waiting up to `wait` for one.
    pub(crate) fn next(&self, after: Option<u64>, wait: Duration) -> Batch {
        let first = after.map_or(0, |seq| seq.saturating_add(1));
        let ring = self.ring();
        let (ring, _) = self
            .0
            .changed
            .wait_timeout_while(ring, wait, |ring| ring.next_seq <= first)
            .unwrap_or_else(|p| p.into_inner());
        let oldest = ring.records.front().map_or(ring.next_seq, |(seq, _)| *seq);
        Batch {
            records: ring
                .records
                .iter()
                .filter(|(seq, _)| *seq >= first)
                .cloned()
                .collect(),
            missed: oldest.saturating_sub(first),
        }
    }
}

fn dir_record(dir: Direction, transport: &str) -> Map<String, Value> {
    let mut record = Map::new();
    record.insert("dir".into(), dir.as_str().into());
    record.insert("transport".into(), transport.into());
    record
}

/// The feed as the sink of one transport (`stdio` or `http`).
#[derive(Clone)]
pub(crate) struct FeedSink {
    pub(crate) feed: Feed,
    pub(crate) transport: &'static str,
}

impl TraceSink for FeedSink {
    fn frame(&mut self, trace: &FrameTrace, raw: &[u8]) {
        let message = serde_json::from_slice::<Value>(raw)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(raw).into_owned()));
        let mut record = dir_record(trace.dir, self.transport);
        record.insert("bytes".into(), trace.bytes.into());
        record.insert("kind".into(), trace.kind.as_str().into());
        record.insert("method".into(), json!(trace.method.as_deref()));
        record.insert("id".into(), json!(trace.id.as_deref()));
        record.insert("error_code".into(), json!(trace.error_code));
        record.insert("message".into(), message);
        self.feed.push(trace.at, record);
    }

    fn http(&mut self, at: Instant, dir: Direction, start: &str, headers: &[(&str, &str)]) {
        let fields: Map<String, Value> = headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), Value::from(*v)))
            .collect();
        let mut record = dir_record(dir, "http");
        record.insert("http".into(), json!({"start": start, "headers": fields}));
        self.feed.push(at, record);
    }

    fn sse(&mut self, at: Instant, dir: Direction, id: Option<&str>, retry: Option<u64>) {
        let mut record = dir_record(dir, "sse");
        record.insert("sse".into(), json!({"id": id, "retry": retry}));
        self.feed.push(at, record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listeners_get_records_in_order_and_learn_what_they_missed() {
        let feed = Feed::new();
        for n in 0..MAX_RECORDS + 5 {
            feed.event("state", json!(n));
        }
        let batch = feed.next(None, Duration::ZERO);
        assert_eq!(batch.missed, 5);
        assert_eq!(batch.records.len(), MAX_RECORDS);
        assert_eq!(batch.records[0].0, 5);
        let last = batch.records.last().map(|r| r.0);
        let idle = feed.next(last, Duration::from_millis(10));
        assert!(idle.records.is_empty() && idle.missed == 0);
    }
}
