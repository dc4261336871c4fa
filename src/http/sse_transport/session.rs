//! One HTTP+SSE (2024-11-05 HTTP+SSE) session as the server holds it: its machine and the one
//! SSE stream every message it transmits goes on, as `message` events, in order.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::Bytes;

use crate::framing::{write_event, write_keep_alive};
use crate::http::chunk_queue::ChunkQueue;
use crate::http::machine::SessionMachine;
use crate::http::types::StreamId;
use crate::jsonrpc::{encode_error, ErrorObject, MissingId, RequestId};
use crate::session::idhash::IdMap;
use crate::session::TransmitKind;

/// Requests of one session whose answers are awaited, at most: the session machine answers
/// far fewer at once (`max_inflight_inbound`); one past it is not tracked, and gets no
/// answer at shutdown.
const MAX_OPEN: usize = 4096;

/// One HTTP+SSE session: a machine and the stream its messages travel on.
pub(crate) struct SseTransportSession<M> {
    pub(crate) machine: M,
    /// The GET response carrying this session's events; `None` once it went away.
    pub(crate) conn: Option<StreamId>,
    /// Encoded SSE events waiting to be pulled.
    pub(crate) queue: ChunkQueue,
    pub(crate) last_activity: Instant,
    /// When the GET opened it (the handshake grace runs from here).
    pub(crate) created: Instant,
    /// The session is over (reader too slow, or the machine was closed): the stream ends once
    /// its queue is drained (it is cleared when the reader was too slow).
    pub(crate) ended: bool,
    /// Messages that could not be delivered (stream gone or reader too slow).
    pub(crate) dropped: u64,
    /// When the next keep-alive comment is due (`None`: keep-alives are off).
    pub(crate) next_keep_alive: Option<Instant>,
    /// The client's requests not answered yet (answered `-32603` at shutdown).
    open: IdMap<RequestId, ()>,
}

impl<M: SessionMachine> SseTransportSession<M> {
    /// A session whose stream `conn` starts with the `endpoint` event naming `post_uri`.
    pub(crate) fn new(machine: M, now: Instant, conn: StreamId, post_uri: &str) -> Self {
        let mut buf = Vec::with_capacity(post_uri.len() + 32);
        write_event(&mut buf, None, Some("endpoint"), post_uri.as_bytes(), None);
        SseTransportSession {
            machine,
            conn: Some(conn),
            queue: VecDeque::from([Bytes::from(buf)]).into(),
            last_activity: now,
            created: now,
            ended: false,
            dropped: 0,
            next_keep_alive: None,
            open: IdMap::default(),
        }
    }

    /// When its handshake grace runs out, while its handshake is not done and it is not over.
    pub(crate) fn handshake_deadline(&self, grace: std::time::Duration) -> Option<Instant> {
        if self.ended || self.machine.handshake_done() {
            return None;
        }
        self.created.checked_add(grace)
    }

    /// Queues a keep-alive comment, unless the reader is already behind (then the queued
    /// events keep the connection busy anyway).
    pub(crate) fn keep_alive(&mut self) {
        if self.conn.is_some() && !self.ended && self.queue.is_empty() {
            let mut buf = Vec::with_capacity(3);
            write_keep_alive(&mut buf);
            self.queue.push_back(Bytes::from(buf));
        }
    }

    /// Moves everything the machine has to send onto the stream, as `message` events.
    pub(crate) fn pump(&mut self) {
        let mut buf = Vec::new();
        while let Some(transmit) = self.machine.poll_transmit(&mut buf) {
            if let (TransmitKind::Response, Some(id)) = (transmit.kind, &transmit.related) {
                self.open.remove(id);
            }
            if self.ended || self.conn.is_none() {
                self.dropped += 1;
            } else if !self.queue.has_room(buf.len() + 24) {
                // Too slow a reader (see `chunk_queue`): no way to resume an HTTP+SSE stream,
                // so end the session rather than grow without bound or silently lose messages
                // mid-stream.
                self.dropped += 1 + self.queue.len() as u64;
                self.queue.clear();
                self.ended = true;
            } else {
                let mut event = Vec::with_capacity(buf.len() + 24);
                write_event(&mut event, None, Some("message"), &buf, None);
                self.queue.push_back(Bytes::from(event));
            }
            buf.clear();
        }
    }

    /// The client sent request `id`: its answer is awaited (up to [`MAX_OPEN`] of them).
    pub(crate) fn request_opened(&mut self, id: &RequestId) {
        if self.open.len() < MAX_OPEN {
            self.open.insert(id.clone(), ());
        }
    }

    /// The client cancelled request `id`: no answer is awaited.
    pub(crate) fn request_cancelled(&mut self, id: &RequestId) {
        self.open.remove(id);
    }

    /// The server is shutting down: what the machine already sent, then one `error` (with
    /// its id) per request not answered yet, go on the stream, which then ends; what the
    /// machine sends later is dropped (one answer per request). Returns how many requests
    /// were answered.
    pub(crate) fn shut_down(&mut self, error: &ErrorObject) -> usize {
        self.pump();
        let mut open: Vec<RequestId> = self.open.drain().map(|(id, ())| id).collect();
        open.sort();
        let answered = if self.ended || self.conn.is_none() {
            0
        } else {
            open.len()
        };
        if answered > 0 {
            let mut message = Vec::new();
            for id in &open {
                message.clear();
                encode_error(&mut message, Some(id), error, MissingId::Null);
                let mut event = Vec::with_capacity(message.len() + 24);
                write_event(&mut event, None, Some("message"), &message, None);
                // Past the queue's limit: bounded by `MAX_OPEN`, and the last it carries.
                self.queue.push_back(Bytes::from(event));
            }
        }
        self.ended = true;
        answered
    }
}
