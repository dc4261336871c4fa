//! SSE keep-alive comments: a Streamable HTTP response stream in SSE (a POST's stream, the
//! standalone GET stream, a resumed one) that wrote nothing for
//! [`EndpointConfig::sse_keep_alive`](crate::http::EndpointConfig::sse_keep_alive) gets a
//! comment line, `: keep-alive`, so proxies and clients do not time out a silent stream.
//! A comment carries no event id and is not kept for replay: resumption never sees it.
//!
//! The schedule holds one entry per SSE response, filed when it is attached, ordered by when
//! it may next be due. A write does not touch it: the stream notes when it last handed out
//! bytes ([`LogicalStream::last_written`](crate::http::streams::LogicalStream)), and when an
//! entry comes due a stream that wrote meanwhile is filed again for the interval after that
//! write, one that did not gets the comment queued (so it is not quiet, and its session is
//! touched: `touched_streams` lists it). An entry is dropped when its response ends, or,
//! for the rarer endings, when it comes due and finds the response gone.
//!
//! The endpoint's clock is the last instant handed to it (`handle_request`, `handle_timeout`):
//! a write noted with it is noted no later than it happened, so a stream is never silent for
//! longer than the interval (a comment may come early, never late).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::{Endpoint, Owner};
use crate::framing::write_comment;
use crate::http::machine::{ExchangeMachine, SessionMachine};
use crate::http::streams::Mode;
use crate::http::types::StreamId;
use crate::session::idhash::IdMap;

/// The keep-alive schedule of the endpoint's SSE responses.
#[derive(Debug, Default)]
pub(super) struct KeepAlives {
    /// (when it may be due, response) of every tracked response.
    due: BTreeSet<(Instant, StreamId)>,
    /// The instant each tracked response is filed under.
    filed: IdMap<StreamId, Instant>,
}

impl KeepAlives {
    /// Files response `conn` for `at` (replacing its entry).
    fn file(&mut self, conn: StreamId, at: Instant) {
        if let Some(old) = self.filed.insert(conn, at) {
            self.due.remove(&(old, conn));
        }
        self.due.insert((at, conn));
    }

    /// Drops response `conn`'s entry.
    pub(super) fn forget(&mut self, conn: StreamId) {
        if let Some(at) = self.filed.remove(&conn) {
            self.due.remove(&(at, conn));
        }
    }

    /// The earliest entry's instant.
    pub(super) fn next(&self) -> Option<Instant> {
        self.due.first().map(|&(at, _)| at)
    }

    /// Takes out the earliest entry if it is due at `now`.
    fn pop_due(&mut self, now: Instant) -> Option<StreamId> {
        let &(at, conn) = self.due.first().filter(|(at, _)| *at <= now)?;
        self.due.remove(&(at, conn));
        self.filed.remove(&conn);
        Some(conn)
    }
}

/// What a due entry found.
enum Due {
    /// The response is gone or no longer SSE: nothing to track.
    Gone,
    /// It wrote since: due again at this instant.
    Later(Instant),
    /// It was silent for the interval: comment queued.
    Sent,
}

impl<M: SessionMachine + ExchangeMachine> Endpoint<M> {
    /// Starts the keep-alive of SSE response `conn`, attached just now.
    pub(super) fn track_keep_alive(&mut self, conn: StreamId) {
        let Some(every) = self.config.sse_keep_alive else {
            return;
        };
        let Some(now) = self.clock else {
            return;
        };
        let Some(stream) = self.attached_stream(conn) else {
            return;
        };
        stream.last_written = Some(now);
        self.keep_alives.file(conn, now + every);
    }

    /// Queues a comment on every SSE response silent for the interval at `now`, and files
    /// the others again.
    pub(super) fn fire_keep_alives(&mut self, now: Instant) {
        let Some(every) = self.config.sse_keep_alive else {
            return;
        };
        while let Some(conn) = self.keep_alives.pop_due(now) {
            match self.keep_alive_due(conn, now, every) {
                Due::Gone => {}
                Due::Later(at) => self.keep_alives.file(conn, at),
                Due::Sent => self.keep_alives.file(conn, now + every),
            }
        }
    }

    fn keep_alive_due(&mut self, conn: StreamId, now: Instant, every: Duration) -> Due {
        // Looked up without touching the session: only a comment touches it.
        let silent_since = match self.attached_stream_ref(conn) {
            Some((Mode::Sse, last_written)) => last_written,
            _ => return Due::Gone,
        };
        if let Some(at) = silent_since.and_then(|t| t.checked_add(every)) {
            if at > now {
                return Due::Later(at);
            }
        }
        let Some(stream) = self.attached_stream(conn) else {
            return Due::Gone;
        };
        stream.last_written = Some(now);
        // Bytes still queued: the connection has not taken them yet, a comment adds nothing.
        if stream.queue.is_empty() {
            let mut comment = Vec::with_capacity(16);
            write_comment(&mut comment, "keep-alive");
            comment.push(b'\n');
            stream.queue.push_back(comment.into());
        }
        Due::Sent
    }

    /// The logical stream response `conn` is attached to (its session or exchange marked
    /// touched).
    fn attached_stream(&mut self, conn: StreamId) -> Option<&mut super::LogicalStream> {
        let (owner, key) = self.conns.get(&conn)?;
        let state = match owner {
            Owner::Session(sid) => self.sessions.get_mut(sid.as_str())?,
            Owner::Exchange(xid) => self.exchanges.get_mut(xid)?,
        };
        let stream = state.streams.get_mut(key)?;
        (stream.conn == Some(conn)).then_some(stream)
    }

    /// The mode and last write of the logical stream response `conn` is attached to.
    fn attached_stream_ref(&self, conn: StreamId) -> Option<(Mode, Option<Instant>)> {
        let (owner, key) = self.conns.get(&conn)?;
        let state = match owner {
            Owner::Session(sid) => self.sessions.get(sid.as_str())?,
            Owner::Exchange(xid) => self.exchanges.get(xid)?,
        };
        let stream = state.streams.get(key)?;
        (stream.conn == Some(conn)).then_some((stream.mode, stream.last_written))
    }
}
