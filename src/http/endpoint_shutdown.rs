//! Graceful shutdown of the Streamable HTTP endpoint: the requests still being handled run
//! only in this process, so no other instance can answer them. When the driver says the
//! server is shutting down, every one of them is answered at once with a `-32603` error
//! carrying its id, on its stream after what that stream already has; each stream then ends
//! once drained. Streams with nothing pending (GET streams, 2026-07-28 listen streams,
//! finished ones) end at their next pull, as when the client goes away: a 2025-11-25 client
//! may resume elsewhere. A request arriving after that gets 503.

use std::time::Instant;

use super::{Endpoint, Owner};
use crate::http::machine::{ExchangeMachine, SessionMachine};
use crate::http::reply::SHUTTING_DOWN;
use crate::http::streams::StreamChunk;
use crate::http::types::StreamId;
use crate::jsonrpc::ErrorObject;

impl<M: SessionMachine + ExchangeMachine> Endpoint<M> {
    /// The server is shutting down (call once; later calls change nothing). Every request
    /// still waiting for its response, in a session or a stateless exchange, is answered
    /// `-32603` with its id, after what its stream already has; a handler that finishes
    /// later has its response dropped (one answer per request). Every response stream ends
    /// at its next [`Endpoint::poll_stream`] once what it has is pulled: the driver pulls
    /// every open body until it ends. Requests arriving from now on get 503. Returns how
    /// many requests were answered.
    pub fn begin_shutdown(&mut self, now: Instant) -> usize {
        self.clock = Some(now);
        if self.shutting_down {
            return 0;
        }
        self.shutting_down = true;
        let error = ErrorObject::internal(SHUTTING_DOWN);
        let mut answered = 0;
        for sid in self.sessions.ids_where(|s| !s.request_streams.is_empty()) {
            if let Some(session) = self.sessions.get_mut(sid.as_str()) {
                // What the machine already sent goes first.
                session.pump();
                answered += session.answer_open_requests(&error);
            }
        }
        let listeners = std::mem::take(&mut self.listeners);
        for xid in self.exchanges.ids_where(|s| !s.request_streams.is_empty()) {
            if listeners.contains(xid) {
                // A listen stream is never answered: it just ends.
                continue;
            }
            if let Some(exchange) = self.exchanges.get_mut(&xid) {
                exchange.pump();
                answered += exchange.answer_open_requests(&error);
            }
        }
        self.listeners = listeners;
        self.flush();
        answered
    }

    /// Whether [`Endpoint::begin_shutdown`] was called.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// Once shutting down: ends response `conn` when it has nothing left to pull (a stream
    /// whose requests were all answered ends by itself; one still open, a GET or listen
    /// stream, is let go of as if its client went away). `None` otherwise.
    pub(super) fn end_at_shutdown(&mut self, conn: StreamId) -> Option<StreamChunk> {
        if !self.shutting_down {
            return None;
        }
        let (owner, key) = self.conns.get(&conn)?.clone();
        let state = match &owner {
            Owner::Session(sid) => self.sessions.get(sid.as_str()),
            Owner::Exchange(xid) => self.exchanges.get(xid),
        }?;
        let stream = state.streams.get(&key)?;
        if stream.conn != Some(conn) || !stream.queue.is_empty() || stream.finished {
            return None;
        }
        self.detach(conn);
        self.flush();
        Some(StreamChunk::End)
    }
}
