//! The endpoint's GET (standalone stream, resumption), DELETE and sessionless POST paths.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::Bytes;

use super::{Endpoint, Owner, BODIES_IN_FLIGHT, SESSION_NOT_FOUND, SSE};
use crate::http::accepts;
use crate::http::admission::KnownFields;
use crate::http::machine::{ExchangeMachine, SessionMachine};
use crate::http::reply::{error, handshake, method_not_allowed, rpc_error};
use crate::http::streams::{LogicalStream, Mode, SessionState, STANDALONE};
use crate::http::types::{Body, HttpResponse, StreamId};
use crate::http::EventId;
use crate::http::ResponseMode;
use crate::jsonrpc::{decode, Incoming, Message, RequestId};

impl<M: SessionMachine + ExchangeMachine> Endpoint<M> {
    pub(super) fn handle_sessionless(
        &mut self,
        now: Instant,
        fields: &KnownFields<'_>,
        body: Bytes,
        requests: Vec<RequestId>,
        is_batch: bool,
    ) -> HttpResponse {
        if is_batch {
            return rpc_error(400, -32600, "Invalid Request: batches are not supported");
        }
        let id = requests.first().filter(|_| requests.len() == 1);
        let version = match self.check_version(fields) {
            Ok(v) => v,
            Err(refusal) => return refusal.answer(id),
        };
        if !requests.is_empty() && !self.bodies.admits(body.len()) {
            self.stats.bodies_refused += 1;
            return BODIES_IN_FLIGHT.answer(id);
        }
        let xid = match self.claim_exchange() {
            Ok(xid) => xid,
            Err(refusal) => return refusal.answer(id),
        };
        let mut machine = (self.factory)(now);
        let is_init = requests.is_empty()
            || decode(&body).is_ok_and(
                |i| matches!(i, Incoming::Single(Message::Request(r)) if r.method == "initialize"),
            );
        if !is_init {
            // No handshake in sessionless mode: stand one in for the client.
            handshake(&mut machine, now, version);
        }
        let mut state = SessionState::new(machine, now, 0, self.config.retry_ms);
        if requests.is_empty() {
            state.machine.handle_input(now, body);
            return HttpResponse::status(202);
        }
        let charge = self.bodies.charge(body.len());
        state.streams.insert(
            1,
            LogicalStream::new(Mode::Undecided, requests.len()).charged(charge),
        );
        for id in requests {
            state.request_streams.insert(id, 1);
        }
        state.machine.handle_input(now, body);
        state.pump();
        self.exchanges.insert(xid, state);
        let conn = self.new_conn();
        let resp = self.open_response(xid, 1, conn, ResponseMode::AlwaysJson, false);
        if matches!(resp.body, Body::Full(_)) {
            self.exchanges.remove(&xid);
        }
        resp
    }

    pub(super) fn handle_get(&mut self, now: Instant, fields: &KnownFields<'_>) -> HttpResponse {
        if self.config.sessionless || !self.config.allow_get {
            return method_not_allowed();
        }
        if !accepts(fields.accept.unwrap_or(""), SSE) {
            return error(406, "Not Acceptable: Accept must allow text/event-stream");
        }
        let sid = match self.lookup(fields) {
            Ok(sid) => sid,
            Err(refusal) => return refusal.answer(None),
        };
        if let Err(refusal) = self.check_version(fields) {
            return refusal.answer(None);
        }
        let session = self.sessions.get_mut(sid).expect("looked up");
        session.last_activity = now;
        session.pump();
        let cursor = match fields
            .last_event_id
            .map(|text| cursor(session, text.trim()))
        {
            Some(Err(())) => return error(400, "Bad Request: invalid Last-Event-ID"),
            Some(Ok(cursor)) => cursor,
            None => None,
        };
        let Some(cursor) = cursor else {
            let resp = self.open_listen(sid, VecDeque::new());
            if fields.last_event_id.is_none() && resp.status == 200 {
                self.listen_opened_here(sid);
            }
            return resp;
        };
        if cursor.stream >= session.next_stream {
            return error(400, "Bad Request: unknown Last-Event-ID");
        }
        if cursor.stream == STANDALONE && session.held_dropped {
            return error(
                409,
                "Conflict: messages for the GET stream were dropped while it was away; \
                 open it again without Last-Event-ID",
            );
        }
        let Ok(events) = session.replay.replay_after(cursor) else {
            return error(
                409,
                "Conflict: Last-Event-ID is older than the replay buffer holds",
            );
        };
        let conn = self.new_conn();
        let session = self.sessions.get_mut(sid).expect("looked up");
        resume(session, cursor.stream, conn, events);
        self.attached(sid, cursor.stream, conn)
    }

    /// Opens session `sid`'s GET stream (a session held here) on a new connection: `first`,
    /// then the held messages, then what arises.
    pub(super) fn open_listen(&mut self, sid: &str, first: VecDeque<Bytes>) -> HttpResponse {
        if !self.sessions.contains_key(sid) {
            return SESSION_NOT_FOUND.answer(None);
        }
        let conn = self.new_conn();
        let session = self.sessions.get_mut(sid).expect("held");
        // One standalone stream at a time, and the newest GET wins: a client only opens
        // another after losing the first, and a connection that died while idle is invisible
        // until the next write, so refusing (409) would lock the client out. The replaced
        // response ends at its next poll (its conn is unmapped).
        let stale = session.streams.get(&STANDALONE).and_then(|s| s.conn);
        session.open_standalone(conn, first);
        if let Some(stale) = stale {
            self.conns.remove(&stale);
        }
        self.attached(sid, STANDALONE, conn)
    }

    /// Maps `conn` to stream `key` of session `sid` (whose stream it now writes), and the
    /// response head with its body.
    fn attached(&mut self, sid: &str, key: u64, conn: StreamId) -> HttpResponse {
        self.stream_log.watch(sid, self.sessions.get(sid));
        self.conns
            .insert(conn, (Owner::Session(sid.to_owned()), key));
        self.track_keep_alive(conn);
        let mut resp = HttpResponse::status(200)
            .with_header("Content-Type", SSE)
            .with_header("Cache-Control", "no-cache");
        resp.body = Body::Stream(conn);
        resp
    }

    pub(super) fn handle_delete(&mut self, now: Instant, fields: &KnownFields<'_>) -> HttpResponse {
        if self.config.sessionless || !self.config.allow_delete {
            return method_not_allowed();
        }
        let sid = match self.lookup(fields) {
            Ok(sid) => sid,
            Err(refusal) => return refusal.answer(None),
        };
        if let Err(refusal) = self.check_version(fields) {
            return refusal.answer(None);
        }
        self.terminate(now, sid);
        HttpResponse::status(200)
    }
}

/// The place a `Last-Event-ID` names in `session`'s streams here. Signed ids (with an event
/// key): one of this copy, or `None` for the GET stream of another copy (the GET opens this
/// instance's stream; a sharing driver first reads the other copy's log, see
/// `Endpoint::resume_elsewhere`); a forged id, another session's, or one
/// of a POST stream another instance wrote is refused (the last reaches here only when the
/// driver does not serve it, see `Endpoint::resume_elsewhere`). Else `<stream>-<seq>`.
fn cursor<M>(session: &SessionState<M>, text: &str) -> Result<Option<EventId>, ()> {
    let Some(signer) = &session.signer else {
        return EventId::parse(text).map(Some).ok_or(());
    };
    match signer.verify(text) {
        Some(signed) if signed.origin == signer.origin() => Ok(Some(signed.id)),
        Some(signed) if signed.id.stream == STANDALONE => Ok(None),
        _ => Err(()),
    }
}

/// Attaches `conn` to logical stream `key` after a `Last-Event-ID`: the replayed events, then
/// live ones (or the end, when the stream already finished).
fn resume<M: SessionMachine>(
    session: &mut SessionState<M>,
    key: u64,
    conn: StreamId,
    events: Vec<Bytes>,
) {
    let stream = session.streams.entry(key).or_insert_with(|| {
        let mut s = LogicalStream::new(Mode::Sse, 0);
        s.finished = key != STANDALONE;
        s
    });
    let replaced = stream.attach(conn);
    stream.close_requested = false;
    stream.queue = VecDeque::from(events).into();
    if key == STANDALONE {
        stream.mode = Mode::Sse;
    }
    // A resume replaces the connection the stream had: that body ends at its next poll.
    if let Some(old) = replaced {
        session.release(old);
    }
    if key == STANDALONE {
        session.take_listener_back();
        session.flush_held();
    }
}
