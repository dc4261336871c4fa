//! Sessions served by several instances that share one store. The endpoint does no IO: with
//! `EndpointConfig::instance_id` set it hands out what must be stored
//! ([`Endpoint::poll_session_change`]: a session's snapshot when it was created or its movable
//! state changed, its end after a DELETE), and takes back what the driver loaded
//! ([`Endpoint::handle_restore`]) or heard from another instance
//! ([`Endpoint::handle_session_ended`]).
//!
//! The driver's part, per request: when [`Endpoint::session_to_restore`] names a session,
//! load its snapshot and hand it to `handle_restore` (a session already held is left as it
//! is, so a restore raced by another request for the same id happens once); then hand the
//! request in; then drain `poll_session_change` into the store before answering, so the next
//! request, wherever it lands, finds what this one changed.

use std::time::Instant;

use super::super::admission::KnownFields;
use super::super::machine::{ExchangeMachine, SessionMachine};
use super::super::streams::SessionState;
use super::super::types::{HttpRequestHead, HttpResponse};
use super::super::HttpMethod;
use super::Endpoint;
use crate::session::{RestoreError, MAX_ID_PREFIX};

/// Session changes queued at most; past it the oldest is dropped and counted
/// (`EndpointStats::session_changes_dropped`).
pub(super) const MAX_SESSION_CHANGES: usize = 4096;

/// The longest session id a restore accepts, in bytes.
const MAX_SESSION_ID: usize = 256;

/// What the driver must store (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionChange {
    /// Session `id` was created here (`created`: store it if absent) or its movable state
    /// changed (replace it): `snapshot` is the state to store.
    Saved {
        /// The session id.
        id: String,
        /// Whether the session was just created by an `initialize` here.
        created: bool,
        /// The machine's snapshot bytes.
        snapshot: Vec<u8>,
    },
    /// Session `id` ended here by a DELETE: remove it from the store and tell the other
    /// instances.
    Ended {
        /// The session id.
        id: String,
    },
}

/// A change noted, its snapshot taken when the driver asks.
#[derive(Debug)]
pub(super) enum Noted {
    Saved { id: String, created: bool },
    Ended { id: String },
}

impl<M: SessionMachine + ExchangeMachine> Endpoint<M> {
    /// The next change to store, oldest first; `None` when there is none (always, unless
    /// `EndpointConfig::instance_id` is set). A session's snapshot is taken now, so it is the
    /// latest; a session gone meanwhile is skipped.
    #[must_use]
    pub fn poll_session_change(&mut self) -> Option<SessionChange> {
        while let Some(noted) = self.changes.pop_front() {
            match noted {
                Noted::Ended { id } => return Some(SessionChange::Ended { id }),
                Noted::Saved { id, created } => {
                    let snapshot = self
                        .sessions
                        .get(id.as_str())
                        .and_then(|s| s.machine.snapshot());
                    if let Some(snapshot) = snapshot {
                        return Some(SessionChange::Saved {
                            id,
                            created,
                            snapshot,
                        });
                    }
                }
            }
        }
        None
    }

    /// The session a request names that this endpoint does not hold, when sessions are
    /// shared: the driver loads it and calls [`Endpoint::handle_restore`] before handing the
    /// request in. `None` otherwise (the request is handed in as it is).
    pub fn session_to_restore<'h>(&self, head: &'h HttpRequestHead) -> Option<&'h str> {
        self.config.instance_id.as_ref()?;
        let fields = KnownFields::of(head);
        let sid = fields.session_id?;
        let stateful = matches!(
            head.method,
            HttpMethod::Post | HttpMethod::Get | HttpMethod::Delete
        );
        (stateful && !self.sessions.contains_key(sid)).then_some(sid)
    }

    /// The sessions held here with a response stream open (sharing only; a walk over every
    /// session): the driver keeps their records alive while their clients listen, as no
    /// request may come meanwhile.
    pub fn listening_sessions(&self) -> Vec<String> {
        if self.config.instance_id.is_none() {
            return Vec::new();
        }
        self.sessions.ids_where(SessionState::has_attached)
    }

    /// Whether session `id` is held here.
    pub fn holds_session(&self, id: &str) -> bool {
        self.sessions.contains_key(id)
    }

    /// Session `id`, which another instance created, from its stored `snapshot`. `Ok(true)`:
    /// restored; `Ok(false)`: already held, brought up to `snapshot` (what is in flight here
    /// is kept; a restore raced by a concurrent request for the same session builds nothing
    /// twice). When the table is full, the oldest session whose handshake is not done makes
    /// room, as for an `initialize`.
    pub fn handle_restore(
        &mut self,
        now: Instant,
        id: &str,
        snapshot: &[u8],
    ) -> Result<bool, RestoreError> {
        self.clock = Some(now);
        if self.config.instance_id.is_none() {
            return Err(RestoreError::NotShared);
        }
        if let Some(session) = self.sessions.get_mut(id) {
            session.machine.refresh(snapshot)?;
            self.flush();
            return Ok(false);
        }
        let id_ok = !id.is_empty()
            && id.len() <= MAX_SESSION_ID
            && id.bytes().all(|b| b.is_ascii_graphic());
        if !id_ok {
            return Err(RestoreError::InvalidSessionId);
        }
        self.make_room(now).map_err(|_| RestoreError::Full)?;
        let prefix = self.next_id_prefix().unwrap_or_default();
        let mut machine = (self.factory)(now);
        machine.restore(now, snapshot, &prefix)?;
        let mut state = SessionState::new(
            machine,
            now,
            self.config.replay_budget,
            self.config.retry_ms,
        );
        self.equip(id, &mut state, Some(prefix));
        self.sessions.insert(id.to_owned(), state);
        self.stats.sessions_restored += 1;
        self.flush();
        Ok(true)
    }

    /// Session `id` ended on another instance (a DELETE there): ends it here too, its open
    /// streams with it. Returns whether it was held.
    pub fn handle_session_ended(&mut self, now: Instant, id: &str) -> bool {
        self.clock = Some(now);
        if !self.sessions.contains_key(id) {
            return false;
        }
        self.terminate(now, id);
        self.flush();
        true
    }

    /// The request-id prefix of the next session created or restored here (sharing only):
    /// this instance's id and a serial.
    pub(super) fn next_id_prefix(&mut self) -> Option<String> {
        let instance = self.config.instance_id.as_deref()?;
        let prefix = id_prefix(instance, self.prefixes);
        self.prefixes += 1;
        Some(prefix)
    }

    /// The instance a POST body must go to (sharing only): its messages are all replies to
    /// requests another instance sent (their ids name it: `s-<instance>.<n>-<k>`); the driver hands the body to that instance, which
    /// takes it with [`Endpoint::handle_forwarded`], and answers 202. `None`: serve it here.
    pub fn reply_owner(&self, head: &HttpRequestHead, body: &bytes::Bytes) -> Option<String> {
        let mine = self.config.instance_id.as_deref()?;
        // A request or notification says so in its first bytes: most bodies stop here.
        let kind = crate::jsonrpc::FrameHead::scan(body).kind;
        if head.method != HttpMethod::Post || kind == crate::jsonrpc::HeadKind::Request {
            return None;
        }
        let incoming = crate::jsonrpc::decode(body).ok()?;
        let mut owner: Option<&str> = None;
        for message in super::messages(&incoming) {
            let crate::jsonrpc::Message::Response(response) = message else {
                return None;
            };
            let id = response.id.as_ref()?.as_str()?;
            let name = id.strip_prefix("s-")?.split('.').next()?;
            if owner.is_some_and(|o| o != name) {
                return None;
            }
            owner = Some(name);
        }
        let mine = id_prefix(mine, 0);
        let mine = mine.split('.').next().unwrap_or_default();
        owner
            .filter(|o| *o != mine && !o.is_empty())
            .map(str::to_owned)
    }

    /// A POST body another instance received for session `id`: replies to requests this one
    /// sent (see [`Endpoint::reply_owner`]) or cancellations of requests it may serve (see
    /// [`Endpoint::cancellations_elsewhere`]), handed to the session as if they came here.
    /// Returns whether the session is held.
    pub fn handle_forwarded(&mut self, now: Instant, id: &str, body: bytes::Bytes) -> bool {
        self.clock = Some(now);
        let Some(session) = self.sessions.get_mut(id) else {
            return false;
        };
        let Ok(incoming) = crate::jsonrpc::decode(&body) else {
            return true;
        };
        let cancelled: Vec<_> = super::messages(&incoming)
            .filter_map(super::super::reply::cancelled_id)
            .collect();
        session.last_activity = now;
        session.machine.handle_decoded(now, body, incoming);
        session.pump();
        cancelled
            .iter()
            .for_each(|id| session.request_cancelled(id));
        self.flush();
        true
    }

    /// The `notifications/cancelled` of a POST body for session `sid` that name requests
    /// this endpoint is not serving (sharing only), one frame each: the driver hands them to
    /// the other instances (which take them with [`Endpoint::handle_forwarded`]) and the body
    /// itself to this endpoint as usual. Empty for almost every body.
    pub fn cancellations_elsewhere(
        &self,
        head: &HttpRequestHead,
        body: &bytes::Bytes,
    ) -> Vec<bytes::Bytes> {
        let mut frames = Vec::new();
        if self.config.instance_id.is_none()
            || head.method != HttpMethod::Post
            || memchr::memmem::find(body, b"notifications/cancelled").is_none()
        {
            return frames;
        }
        let Some(session) = KnownFields::of(head)
            .session_id
            .and_then(|sid| self.sessions.get(sid))
        else {
            return frames;
        };
        let Ok(incoming) = crate::jsonrpc::decode(body) else {
            return frames;
        };
        for id in super::messages(&incoming).filter_map(super::super::reply::cancelled_id) {
            if session.serves_request(&id) {
                continue;
            }
            let mut frame =
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"#
                    .to_vec();
            id.write_json(&mut frame);
            frame.extend_from_slice(b"}}");
            frames.push(bytes::Bytes::from(frame));
        }
        frames
    }

    /// Notes what request `head`, answered by `resp`, changed (sharing only).
    pub(super) fn note_changes(&mut self, head: &HttpRequestHead, resp: &HttpResponse) {
        let created = resp.get("Mcp-Session-Id");
        let fields = KnownFields::of(head);
        let Some(sid) = created.or(fields.session_id) else {
            return;
        };
        let noted = if head.method == HttpMethod::Delete && resp.status == 200 {
            Noted::Ended { id: sid.to_owned() }
        } else {
            let Some(session) = self.sessions.get_mut(sid) else {
                return;
            };
            if !session.machine.take_snapshot_due() {
                return;
            }
            Noted::Saved {
                id: sid.to_owned(),
                created: created.is_some(),
            }
        };
        if self.changes.len() >= MAX_SESSION_CHANGES {
            self.changes.pop_front();
            self.stats.session_changes_dropped += 1;
        }
        self.changes.push_back(noted);
    }
}

/// The request-id prefix of the `serial`-th session this instance creates or restores:
/// unique among instances (their ids differ) and among this instance's sessions.
fn id_prefix(instance: &str, serial: u64) -> String {
    let serial = serial.to_string();
    let room = MAX_ID_PREFIX - serial.len() - 1;
    let name: String = instance
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(room)
        .collect();
    format!("{name}.{serial}")
}
