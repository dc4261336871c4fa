//! One session's streams: routing every message its machine transmits to exactly one stream
//! (by the inbound request it relates to), SSE event ids, the replay buffer, and the bytes
//! waiting to be pulled by the adapter for each attached connection.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::Bytes;

use super::body_budget::BodyCharge;
use super::chunk_queue::ChunkQueue;
use super::event_id::{EventId, EventSigner};
use super::listen_relay::Relay;
use super::machine::SessionMachine;
use super::replay::ReplayBuffer;
use super::stream_log::PendingLog;
use super::types::StreamId;
use crate::framing::write_event;
use crate::jsonrpc::{encode_error, ErrorObject, MissingId, RequestId};
use crate::model::ProtocolVersion;
use crate::session::idhash::IdMap;
use crate::session::TransmitKind;

/// What `Endpoint::poll_stream` hands out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamChunk {
    /// `len` bytes were appended to the caller's buffer: write them on that response.
    Data {
        /// Bytes appended.
        len: usize,
    },
    /// The body is complete: finish the response.
    End,
}

/// The logical stream id of the standalone GET stream.
pub(crate) const STANDALONE: u64 = 0;
/// Messages held for the standalone stream while no GET is open, at most.
const MAX_HELD: usize = 1024;
/// Capacity of a session's encoding buffer kept between messages, at most: a message that
/// outgrows it is handed on as the buffer itself, and the next one starts a new buffer.
const SCRATCH_KEEP: usize = 4096;
/// Capacity of the encoding buffer kept once a pump has routed everything: room for a small
/// message, so an idle session holds little and the next answer does not regrow it.
const SCRATCH_IDLE: usize = 256;

/// How a stream's body is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The response head is not decided yet: messages are kept raw.
    Undecided,
    /// `text/event-stream`.
    Sse,
    /// One JSON object (the response); other messages on it are dropped and counted.
    Json,
}

/// One logical stream: a POST's response stream, or the standalone GET stream.
#[derive(Debug)]
pub(crate) struct LogicalStream {
    pub(crate) mode: Mode,
    /// The connection currently writing it, if any.
    pub(crate) conn: Option<StreamId>,
    pub(crate) queue: ChunkQueue,
    /// Raw messages routed while `Undecided`.
    pub(crate) raw: Undecided,
    /// Requests of the POST still waiting for their response.
    pub(crate) open_requests: usize,
    /// All responses sent: the body ends once the queue is drained.
    pub(crate) finished: bool,
    /// The handler asked to end the response early (SEP-1699): nothing new is queued on the
    /// current connection, which ends once its queue is drained; events still go to replay.
    pub(crate) close_requested: bool,
    /// When its connection last took bytes (as the endpoint's clock knew it), for SSE
    /// keep-alive comments; set when a connection is attached and its keep-alive tracked.
    pub(crate) last_written: Option<Instant>,
    /// The POST body's share of the endpoint's bytes in flight, given back once every
    /// request is answered (or with the stream).
    charge: Option<BodyCharge>,
}

impl LogicalStream {
    pub(crate) fn new(mode: Mode, open_requests: usize) -> Self {
        LogicalStream {
            mode,
            conn: None,
            queue: ChunkQueue::default(),
            raw: Undecided::default(),
            open_requests,
            finished: false,
            close_requested: false,
            last_written: None,
            charge: None,
        }
    }

    /// The stream with `charge` held until its requests are answered.
    pub(crate) fn charged(mut self, charge: BodyCharge) -> Self {
        self.charge = Some(charge);
        self
    }

    /// Attaches `conn`; returns the other connection it replaces, whose body must be polled
    /// once more to end (see [`SessionState::release`]).
    pub(crate) fn attach(&mut self, conn: StreamId) -> Option<StreamId> {
        self.conn.replace(conn).filter(|&old| old != conn)
    }
}

/// The messages routed to a stream while its mode is undecided, in order. The first (for a
/// POST of one request, the only one) is held inline: a POST's stream allocates nothing.
#[derive(Debug, Default)]
pub(crate) struct Undecided {
    first: Option<(TransmitKind, Bytes)>,
    rest: Vec<(TransmitKind, Bytes)>,
}

impl Undecided {
    /// Appends one message.
    pub(crate) fn push(&mut self, message: (TransmitKind, Bytes)) {
        if self.first.is_none() {
            self.first = Some(message);
        } else {
            self.rest.push(message);
        }
    }

    /// How many messages wait.
    pub(crate) fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }
}

impl IntoIterator for Undecided {
    type Item = (TransmitKind, Bytes);
    type IntoIter = std::iter::Chain<
        std::option::IntoIter<(TransmitKind, Bytes)>,
        std::vec::IntoIter<(TransmitKind, Bytes)>,
    >;

    /// The messages in the order they were pushed.
    fn into_iter(self) -> Self::IntoIter {
        self.first.into_iter().chain(self.rest)
    }
}

/// One MCP session as the endpoint holds it.
pub(crate) struct SessionState<M> {
    pub(crate) machine: M,
    pub(crate) streams: IdMap<u64, LogicalStream>,
    /// The stream of each request in flight, by the client's id. Hashed with the id hasher,
    /// not SipHash, like the session's own in-flight table: entries live only while their
    /// request is in flight, which the session bounds (`max_inflight_inbound`; a request past
    /// it is answered at once, and its entry goes with the answer), so no chain of colliding
    /// ids can grow past that bound.
    pub(crate) request_streams: IdMap<RequestId, u64>,
    pub(crate) next_stream: u64,
    next_seq: u64,
    pub(crate) replay: ReplayBuffer,
    /// Standalone messages waiting for a GET stream, each with its place among the
    /// session's messages for the GET stream (in that order).
    pub(crate) held: VecDeque<(u64, Bytes)>,
    /// The place the next message for the GET stream takes when it is held or relayed.
    standalone_seq: u64,
    /// A message for the GET stream was dropped because [`MAX_HELD`] were already held: a
    /// resume of that stream could not be complete, so it is refused until a GET without
    /// `Last-Event-ID` opens the stream afresh.
    pub(crate) held_dropped: bool,
    pub(crate) last_activity: Instant,
    /// Messages that had no stream to go on (dropped and counted).
    pub(crate) dropped: u64,
    /// SSE `retry` sent with priming events (2025-11-25 sessions).
    pub(crate) retry_ms: u64,
    /// The machine encodes each message here; a message that fits is copied out at its
    /// exact size, and the buffer keeps [`SCRATCH_IDLE`] bytes between pumps, so a small
    /// message costs no growth.
    scratch: Vec<u8>,
    /// Connections that stopped being attached to a stream of this session (replaced by a
    /// newer GET or resume, cut loose as too slow, detached) since the driver last asked:
    /// their bodies must be woken to end (see `Endpoint::touched_streams`).
    pub(crate) released: Released<64>,
    /// Signs the event ids (with an `EndpointConfig::event_key`).
    pub(crate) signer: Option<EventSigner>,
    /// What the POST streams wrote, for the shared store (sharing with an event key).
    pub(crate) log: Option<PendingLog>,
    /// Another instance holds the client's GET stream (it resumed this one's there): the
    /// messages for that stream go to it.
    pub(crate) relay: Option<Relay>,
    /// Messages relayed from here that the driver has handed out and not reported on yet
    /// (received by another instance, or come back): while any is out, a GET stream open
    /// here holds what arises after it, so the stream writes the session's messages in their
    /// order (see [`SessionState::hold_lost`]).
    pub(crate) relays_out: usize,
}

/// Connections let go of since the driver last asked (see `Endpoint::touched_streams`):
/// at most `MAX`; past that the list only says it is incomplete.
#[derive(Debug, Default)]
pub(crate) struct Released<const MAX: usize> {
    conns: Vec<StreamId>,
    lost: bool,
}

impl<const MAX: usize> Released<MAX> {
    /// Notes that `conn` no longer serves its stream.
    pub(crate) fn push(&mut self, conn: StreamId) {
        if self.conns.len() < MAX {
            self.conns.push(conn);
        } else {
            self.lost = true;
        }
    }

    /// Moves the connections to `out`; `false` when some were not kept.
    pub(crate) fn drain_into(&mut self, out: &mut Vec<StreamId>) -> bool {
        out.append(&mut self.conns);
        !std::mem::take(&mut self.lost)
    }
}

impl<M: SessionMachine> SessionState<M> {
    pub(crate) fn new(machine: M, now: Instant, replay_budget: usize, retry_ms: u64) -> Self {
        SessionState {
            machine,
            streams: IdMap::default(),
            request_streams: IdMap::default(),
            next_stream: STANDALONE + 1,
            next_seq: 1,
            replay: ReplayBuffer::new(replay_budget),
            held: VecDeque::new(),
            standalone_seq: 0,
            held_dropped: false,
            last_activity: now,
            dropped: 0,
            retry_ms,
            scratch: Vec::new(),
            released: Released::default(),
            signer: None,
            log: None,
            relay: None,
            relays_out: 0,
        }
    }

    /// Notes that `conn` no longer serves a stream of this session (its body ends at its
    /// next poll, which the driver must make happen).
    pub(crate) fn release(&mut self, conn: StreamId) {
        self.released.push(conn);
    }

    /// Whether this session speaks 2025-11-25 (priming events, early close allowed).
    pub(crate) fn primes(&self) -> bool {
        self.machine.protocol_version() == Some(ProtocolVersion::V2025_11_25)
    }

    /// Routes everything the machine has to send. Close requests are applied before the
    /// message that followed them out of the machine, so a handler that asks to close and
    /// then answers gets its answer on the resumed stream, not on the closing one.
    pub(crate) fn pump(&mut self) {
        loop {
            self.scratch.clear();
            let transmit = self.machine.poll_transmit(&mut self.scratch);
            while let Some(id) = self.machine.poll_stream_close() {
                self.request_close(&id);
            }
            let Some(t) = transmit else {
                break;
            };
            let data = self.take_encoded();
            self.route(t.related, t.kind, data);
        }
        // Everything was copied out: an idle session keeps a small encoding buffer and little
        // spare queue capacity in its machine.
        self.scratch.clear();
        if self.scratch.capacity() > SCRATCH_IDLE {
            self.scratch.shrink_to(SCRATCH_IDLE);
        }
        self.machine.release_spare_capacity();
    }

    /// The message just encoded into the scratch buffer: copied out at its size (one
    /// allocation, no spare capacity) if the buffer stays within [`SCRATCH_KEEP`], else the
    /// buffer itself (a large message is not copied; the buffer is not kept).
    fn take_encoded(&mut self) -> Bytes {
        if self.scratch.capacity() <= SCRATCH_KEEP {
            Bytes::copy_from_slice(&self.scratch)
        } else {
            Bytes::from(std::mem::take(&mut self.scratch))
        }
    }

    /// Files the request ids of one POST under stream `key` (a key no entry holds yet) in one
    /// walk, and returns how many distinct ids there were. `None`, with nothing filed, if an id is already
    /// in flight on another stream: the entries holding `key` (this walk's) are taken out
    /// again, which only that error path pays for. An id repeated within the body is not "in flight"
    /// (its earlier entry has this same key), as when the ids were checked before filing.
    pub(crate) fn claim_request_ids<'a>(
        &mut self,
        key: u64,
        ids: impl Iterator<Item = &'a RequestId>,
    ) -> Option<usize> {
        let mut count = 0;
        for id in ids {
            match self.request_streams.get(id) {
                Some(&held) if held != key => {
                    self.request_streams.retain(|_, k| *k != key);
                    return None;
                }
                // Repeated within the body: answered once (the session refuses the repeat
                // with an id-less error), so the stream waits for it once.
                Some(_) => {}
                None => {
                    self.request_streams.insert(id.clone(), key);
                    count += 1;
                }
            }
        }
        Some(count)
    }

    /// A handler asked to end request `id`'s response stream early: only 2025-11-25 sessions,
    /// whose streams open with a priming event (id + retry) the client can resume from.
    fn request_close(&mut self, id: &RequestId) {
        if !self.primes() {
            return;
        }
        let Some(key) = self.request_streams.get(id).copied() else {
            return;
        };
        if let Some(stream) = self.streams.get_mut(&key) {
            stream.close_requested = true;
        }
    }

    /// Puts one message on exactly one stream (or holds or drops it).
    fn route(&mut self, related: Option<RequestId>, kind: TransmitKind, data: Bytes) {
        // A response ends its request's entry: taken out in the same lookup.
        let key = related.as_ref().and_then(|id| match kind {
            TransmitKind::Response => self.request_streams.remove(id),
            _ => self.request_streams.get(id).copied(),
        });
        match key {
            Some(key) if self.streams.contains_key(&key) => {
                self.emit(key, kind, data);
                if kind == TransmitKind::Response {
                    self.log_answered(key, related.as_ref());
                    self.response_sent(key);
                }
            }
            // A response must never go on the standalone stream.
            _ if kind == TransmitKind::Response => self.dropped += 1,
            _ => self.emit_standalone(data),
        }
    }

    /// Whether a POST stream here waits for the response to request `id`.
    pub(crate) fn serves_request(&self, id: &RequestId) -> bool {
        self.request_streams.contains_key(id)
    }

    /// The client cancelled request `id`: its response will never come, so its stream must
    /// not wait for it (otherwise a cancelled POST's SSE stream would stay open forever).
    pub(crate) fn request_cancelled(&mut self, id: &RequestId) {
        if let Some(key) = self.request_streams.remove(id) {
            self.response_sent(key);
        }
    }

    fn response_sent(&mut self, key: u64) {
        let Some(stream) = self.streams.get_mut(&key) else {
            return;
        };
        stream.open_requests = stream.open_requests.saturating_sub(1);
        if stream.open_requests == 0 {
            stream.finished = true;
            stream.charge = None;
            if let (Some(log), Mode::Sse) = (&mut self.log, stream.mode) {
                log.ended(key);
            }
            if stream.conn.is_none() && stream.mode != Mode::Undecided {
                // Nobody is reading: what it carried is in the replay buffer.
                self.streams.remove(&key);
            }
        }
    }

    /// Answers every request still waiting for its response on a stream here with `error`
    /// (carrying its id), after what the stream already has: the server is shutting down and
    /// no other process can answer it. The ids count as answered, so a handler finishing later
    /// has its response dropped; each stream answered in full ends once drained. Returns how
    /// many requests were answered.
    pub(crate) fn answer_open_requests(&mut self, error: &ErrorObject) -> usize {
        let mut open: Vec<(u64, RequestId)> = self
            .request_streams
            .iter()
            .filter(|(_, key)| self.streams.contains_key(*key))
            .map(|(id, &key)| (key, id.clone()))
            .collect();
        open.sort();
        for (key, id) in &open {
            self.request_streams.remove(id);
            let mut message = Vec::new();
            encode_error(&mut message, Some(id), error, MissingId::Null);
            self.emit(*key, TransmitKind::Response, Bytes::from(message));
            self.log_answered(*key, Some(id));
            self.response_sent(*key);
        }
        open.len()
    }

    /// Puts one message for the GET stream on it (attached here, and no older message
    /// relayed from here is still out), on the relay to the instance that holds it, or holds
    /// it (or drops it past the bounds).
    pub(crate) fn emit_standalone(&mut self, data: Bytes) {
        if self.relays_out == 0 && self.standalone_attached() {
            self.emit(STANDALONE, TransmitKind::Notification, data);
        } else if let Some(relay) = &mut self.relay {
            self.standalone_seq += 1;
            if !relay.push(self.standalone_seq, data) {
                self.dropped += 1;
            }
        } else if self.held.len() < MAX_HELD {
            self.standalone_seq += 1;
            self.held.push_back((self.standalone_seq, data));
        } else {
            self.dropped += 1;
            self.held_dropped = true;
        }
    }

    /// Whether a connection is attached to the GET stream here.
    fn standalone_attached(&self) -> bool {
        self.streams
            .get(&STANDALONE)
            .is_some_and(|s| s.conn.is_some())
    }

    /// A message relayed from here that no instance received (`seq`: its place): held in
    /// that place, with what still waited to be relayed, for the session's next GET stream
    /// (the session relays no more). A GET stream open here writes the held messages, in
    /// their places, once no other message relayed from here is out (the ones that arose
    /// meanwhile waited behind them).
    pub(crate) fn hold_lost(&mut self, seq: u64, data: Bytes) {
        self.relays_out = self.relays_out.saturating_sub(1);
        self.take_listener_back();
        if self.held.len() < MAX_HELD {
            let at = self.held.partition_point(|(held, _)| *held < seq);
            self.held.insert(at, (seq, data));
        } else {
            self.dropped += 1;
            self.held_dropped = true;
        }
        if self.standalone_attached() {
            self.flush_held();
        }
    }

    /// A message relayed from here reached another instance: a GET stream open here writes
    /// what it held behind it once no other one is out.
    pub(crate) fn relay_received(&mut self) {
        self.relays_out = self.relays_out.saturating_sub(1);
        if self.standalone_attached() {
            self.flush_held();
        }
    }

    /// Writes one message on stream `key` according to its mode.
    pub(crate) fn emit(&mut self, key: u64, kind: TransmitKind, data: Bytes) {
        let Some(stream) = self.streams.get_mut(&key) else {
            self.dropped += 1;
            return;
        };
        match stream.mode {
            Mode::Undecided => stream.raw.push((kind, data)),
            Mode::Json if kind == TransmitKind::Response => stream.queue.push_back(data),
            Mode::Json => self.dropped += 1,
            Mode::Sse => {
                let event = self.sse_event(key, &data, None);
                self.deliver(key, event);
            }
        }
    }

    /// Encodes one SSE event with the next id and records it for replay.
    fn sse_event(&mut self, key: u64, data: &[u8], retry: Option<u64>) -> (EventId, Bytes) {
        let id = EventId {
            stream: key,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        let mut text = String::new();
        match &self.signer {
            Some(signer) => signer.write(id, &mut text),
            None => id.write(&mut text),
        }
        let mut buf = Vec::with_capacity(data.len() + 40);
        let event = if data.is_empty() {
            None
        } else {
            Some("message")
        };
        write_event(&mut buf, Some(&text), event, data, retry);
        (id, Bytes::from(buf))
    }

    /// Records event `id` for replay here and, on a logged stream (a POST's or the GET
    /// stream), for the store.
    fn record(&mut self, key: u64, id: EventId, event: &Bytes) {
        self.replay.push(id, event.clone());
        if let Some(log) = &mut self.log {
            log.event(key, id.seq, event);
        }
    }

    /// Logs that the response to `id` was written on stream `key` (an SSE one: a stream
    /// still undecided logs, when it opens, only the requests not answered yet).
    fn log_answered(&mut self, key: u64, id: Option<&RequestId>) {
        let sse = self.streams.get(&key).is_some_and(|s| s.mode == Mode::Sse);
        if let (Some(log), Some(id), true) = (&mut self.log, id, sse && key != STANDALONE) {
            log.answered(key, id);
        }
    }

    fn deliver(&mut self, key: u64, (id, event): (EventId, Bytes)) {
        self.record(key, id, &event);
        let mut cut = None;
        if let Some(stream) = self.streams.get_mut(&key) {
            if stream.conn.is_some() && !stream.close_requested {
                if stream.queue.has_room(event.len()) {
                    stream.queue.push_back(event);
                } else {
                    // The reader is too slow (see `chunk_queue`): cut it loose; it resumes
                    // from the replay buffer.
                    cut = stream.conn.take();
                    stream.queue.clear();
                }
            }
        }
        if let Some(conn) = cut {
            self.release(conn);
        }
    }

    /// Turns an undecided stream into SSE: the priming event (2025-11-25 only), then the raw
    /// messages routed so far (all of them, whatever their number).
    pub(crate) fn start_sse(&mut self, key: u64) {
        let primes = self.primes();
        let Some(stream) = self.streams.get_mut(&key) else {
            return;
        };
        stream.mode = Mode::Sse;
        let raw = std::mem::take(&mut stream.raw);
        let finished = stream.finished;
        if let (Some(log), true) = (&mut self.log, key != STANDALONE) {
            let open = self.request_streams.iter().filter(|(_, k)| **k == key);
            log.opened(key, open.map(|(id, _)| id));
        }
        if primes {
            let priming = self.sse_event(key, &[], Some(self.retry_ms));
            // Empty data: never worth replaying.
            if let Some(stream) = self.streams.get_mut(&key) {
                stream.queue.push_whole(priming.1);
            }
        }
        // What was routed before the stream opened is queued whole, past the queue's limits: it is
        // bounded by the POST body (a batch of any size up to `max_body` gets every answer).
        for (_, data) in raw {
            let (id, event) = self.sse_event(key, &data, None);
            self.record(key, id, &event);
            if let Some(stream) = self.streams.get_mut(&key) {
                stream.queue.push_whole(event);
            }
        }
        if let (Some(log), true) = (&mut self.log, finished && key != STANDALONE) {
            log.ended(key);
        }
    }

    /// Whether a logged POST stream may still write (one not finished): its session is
    /// pumped for the log at every collection, so what a handler sends with no client
    /// attached is logged too. The GET stream's events are logged as the connection
    /// attached to it pulls them (what arises with none attached is held), and collected
    /// from sessions with entries waiting ([`SessionState::log_waiting`]).
    pub(crate) fn logs_open_stream(&self) -> bool {
        self.log.is_some()
            && self
                .streams
                .iter()
                .any(|(&key, s)| key != STANDALONE && s.mode == Mode::Sse && !s.finished)
    }

    /// Whether log entries wait to be collected.
    pub(crate) fn log_waiting(&self) -> bool {
        self.log.as_ref().is_some_and(PendingLog::has_entries)
    }

    /// Opens (or reopens) the standalone stream on `conn`: `first` (events another copy of
    /// the session wrote on its GET stream, already encoded), then the priming event, then
    /// the held messages.
    pub(crate) fn open_standalone(&mut self, conn: StreamId, first: VecDeque<Bytes>) {
        self.take_listener_back();
        let stream = self
            .streams
            .entry(STANDALONE)
            .or_insert_with(|| LogicalStream::new(Mode::Undecided, 0));
        let replaced = stream.attach(conn);
        stream.queue = first.into();
        if let Some(old) = replaced {
            self.release(old);
        }
        self.held_dropped = false;
        self.start_sse(STANDALONE);
        self.flush_held();
    }

    /// The GET stream opens here again: what waited to be relayed to another instance is
    /// held for it instead (sent next, before what arises).
    pub(crate) fn take_listener_back(&mut self) {
        if let Some(relay) = self.relay.take() {
            self.held.extend(relay.out);
        }
    }

    /// Instance `to` holds the client's GET stream from now on: the one here ends, and what
    /// it wrote after `trailing` began (events the client did not get through the other
    /// instance), then the held messages, then what arises, are relayed to `to`. Returns the
    /// connection that was attached to the GET stream here, if any.
    pub(crate) fn move_listener(&mut self, to: String, trailing: Vec<Bytes>) -> Option<StreamId> {
        let conn = self.streams.remove(&STANDALONE).and_then(|s| s.conn);
        if let Some(conn) = conn {
            self.release(conn);
        }
        let mut relay = Relay::new(to);
        let messages = trailing
            .iter()
            .filter_map(|e| super::listen_relay::event_data(e));
        let held = std::mem::take(&mut self.held).into_iter().map(|(_, d)| d);
        // Numbered anew, in the order they are relayed.
        for data in messages.chain(held) {
            self.standalone_seq += 1;
            if !relay.push(self.standalone_seq, data) {
                self.dropped += 1;
            }
        }
        self.relay = Some(relay);
        conn
    }

    /// Writes the held messages on the GET stream (attached here), unless a message relayed
    /// from here is still out: they wait behind it.
    pub(crate) fn flush_held(&mut self) {
        if self.relays_out > 0 {
            return;
        }
        while let Some((_, data)) = self.held.pop_front() {
            self.emit(STANDALONE, TransmitKind::Notification, data);
        }
    }

    /// Whether any connection is attached (an attached stream keeps the session alive).
    pub(crate) fn has_attached(&self) -> bool {
        self.streams.values().any(|s| s.conn.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Job;
    use crate::session::Transmit;

    /// A machine that sends the given notifications, one per `poll_transmit`.
    struct Scripted(VecDeque<Vec<u8>>);

    impl SessionMachine for Scripted {
        fn handle_input(&mut self, _now: Instant, _frame: Bytes) {}
        fn handle_timeout(&mut self, _now: Instant) {}
        fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
            let message = self.0.pop_front()?;
            buf.extend_from_slice(&message);
            Some(Transmit {
                len: message.len(),
                kind: TransmitKind::Notification,
                related: None,
            })
        }
        fn poll_timeout(&self) -> Option<Instant> {
            None
        }
        fn poll_job(&mut self) -> Option<Job> {
            None
        }
        fn close(&mut self, _now: Instant) {}
        fn protocol_version(&self) -> Option<ProtocolVersion> {
            None
        }
    }

    /// Every message comes out whole and alone, whether it fits the kept encoding buffer or
    /// outgrows it (then the buffer is handed on and the next message starts a new one); the
    /// drained buffer is shrunk to its floor.
    #[test]
    fn pump_hands_out_each_message_exactly() {
        let sizes = [3, SCRATCH_KEEP + 904, 7, 1, SCRATCH_KEEP, 2];
        let messages: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| vec![b'a' + i as u8; n])
            .collect();
        let machine = Scripted(messages.iter().cloned().collect());
        let mut state = SessionState::new(machine, Instant::now(), 0, 0);
        state.pump();
        let held: Vec<Vec<u8>> = state.held.iter().map(|(_, b)| b.to_vec()).collect();
        assert_eq!(held, messages);
        // Drained: the buffer keeps its small floor for the next answer.
        assert_eq!(state.scratch.capacity(), SCRATCH_IDLE);
    }

    /// Messages routed while a stream is undecided come out in the order they went in,
    /// whether one (held inline) or several, and are counted.
    #[test]
    fn undecided_messages_keep_their_order() {
        let mut raw = Undecided::default();
        assert_eq!(raw.len(), 0);
        assert_eq!(raw.into_iter().count(), 0);
        let message = |kind, text: &'static str| (kind, Bytes::from_static(text.as_bytes()));
        let mut one = Undecided::default();
        one.push(message(TransmitKind::Response, "r"));
        assert_eq!(one.len(), 1);
        let out: Vec<_> = one.into_iter().collect();
        assert_eq!(out, vec![message(TransmitKind::Response, "r")]);
        raw = Undecided::default();
        let sent = [
            message(TransmitKind::Notification, "n"),
            message(TransmitKind::Request, "q"),
            message(TransmitKind::Response, "r"),
        ];
        for m in sent.iter().cloned() {
            raw.push(m);
        }
        assert_eq!(raw.len(), 3);
        assert_eq!(raw.into_iter().collect::<Vec<_>>(), sent.to_vec());
    }

    /// The released list keeps at most its bound and then says it is incomplete, once; a
    /// drain empties it.
    #[test]
    fn released_connections_are_bounded_and_say_when_some_were_lost() {
        let mut released = Released::<2>::default();
        released.push(StreamId(1));
        released.push(StreamId(2));
        let mut out = Vec::new();
        assert!(released.drain_into(&mut out), "nothing lost yet");
        assert_eq!(out, [StreamId(1), StreamId(2)]);
        (3..6).for_each(|n| released.push(StreamId(n)));
        out.clear();
        assert!(
            !released.drain_into(&mut out),
            "one past the bound was lost"
        );
        assert_eq!(out, [StreamId(3), StreamId(4)]);
        out.clear();
        assert!(released.drain_into(&mut out) && out.is_empty(), "drained");
    }
}
