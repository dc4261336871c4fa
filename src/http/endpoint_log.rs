//! Portable event ids and the stream log of shared sessions (see the stream log module):
//! which sessions sign their event ids and log their POST streams, the entries handed to the
//! driver to store ([`Endpoint::poll_stream_log`]), and a `Last-Event-ID` naming a stream
//! another instance wrote, handed to the driver to serve from the store
//! ([`Endpoint::resume_elsewhere`]).
//!
//! The driver's part: after every event that can make the sessions produce output (when it
//! settles), drain `poll_stream_log` into the store, in order (each entry appended to the log
//! of its stream); before handing in a GET, ask `resume_elsewhere` and, when it names a
//! stream, serve that request itself as [`RemoteResume`] says. Each stream is logged, the
//! GET stream included (while a connection is attached to it), so another instance can
//! resume it ([`Endpoint::resume_listen`]).

use std::collections::{HashSet, VecDeque};
use std::time::Instant;

use super::super::admission::{self, KnownFields};
use super::super::event_id::EventSigner;
use super::super::headers::accepts;
use super::super::machine::{ExchangeMachine, SessionMachine};
use super::super::stream_log::{stream_name, PendingLog, RemoteResume, StreamLogEntry};
use super::super::streams::SessionState;
use super::super::types::{HttpRequestHead, HttpResponse};
use super::super::HttpMethod;
use super::{Endpoint, SESSION_NOT_FOUND, SSE};

/// Entries the endpoint keeps for the driver at most; past it the oldest is dropped and
/// counted (`EndpointStats::stream_log_dropped`).
const MAX_QUEUED: usize = 16 * 1024;

/// The sessions whose POST streams are logged and may still write, and the entries taken
/// from them (and from the sessions whose GET stream left entries waiting).
#[derive(Debug, Default)]
pub(super) struct StreamLog {
    sessions: HashSet<String>,
    queue: VecDeque<StreamLogEntry>,
}

impl StreamLog {
    /// Session `sid` opened an SSE response stream: its log is collected from now on (when
    /// it logs at all).
    pub(super) fn watch<M>(&mut self, sid: &str, session: Option<&SessionState<M>>) {
        if session.is_some_and(|s| s.log.is_some()) && !self.sessions.contains(sid) {
            self.sessions.insert(sid.to_owned());
        }
    }
}

impl<M: SessionMachine + ExchangeMachine> Endpoint<M> {
    /// Gives a new or restored session its event-id signer (with an `event_key`) and its
    /// stream log (sharing too). `prefix` is its request-id prefix, which names this copy.
    pub(super) fn equip(&mut self, sid: &str, state: &mut SessionState<M>, prefix: Option<String>) {
        let Some(key) = self.config.event_key.clone() else {
            return;
        };
        let origin = match prefix.filter(|p| !p.is_empty()) {
            Some(prefix) => prefix,
            None => {
                self.prefixes += 1;
                format!("local.{}", self.prefixes)
            }
        };
        state.signer = Some(EventSigner::new(key, sid, origin));
        if self.config.instance_id.is_some() {
            state.log = Some(PendingLog::default());
        }
    }

    /// The next entry to append to the store's log of its stream, oldest first; `None` when
    /// there is none (always, unless `instance_id` and `event_key` are both set). Sessions
    /// whose logged POST streams may still write are pumped first, so what a handler sends
    /// with no client attached reaches the log too; GET streams are logged as their
    /// connections pull them, and only the sessions with entries waiting are visited (not
    /// every session holding a GET stream). The driver calls this whenever it settles (after
    /// a request, a timer or a wake-up), before it wakes the response bodies.
    #[must_use]
    pub fn poll_stream_log(&mut self) -> Option<StreamLogEntry> {
        if self.stream_log.queue.is_empty()
            && (!self.stream_log.sessions.is_empty() || self.sessions.any_logged())
        {
            self.collect_stream_log();
        }
        self.stream_log.queue.pop_front()
    }

    fn collect_stream_log(&mut self) {
        let mut visit: Vec<String> = std::mem::take(&mut self.stream_log.sessions)
            .into_iter()
            .collect();
        self.sessions.drain_logged(&mut visit);
        for sid in visit {
            let Some(session) = self.sessions.get_mut(sid.as_str()) else {
                continue;
            };
            session.pump();
            let Some(log) = &mut session.log else {
                continue;
            };
            self.stats.stream_log_dropped += std::mem::take(&mut log.dropped);
            let entries = log.take();
            let origin = session.signer.as_ref().map_or("", EventSigner::origin);
            for (key, data) in entries {
                if self.stream_log.queue.len() >= MAX_QUEUED {
                    self.stream_log.queue.pop_front();
                    self.stats.stream_log_dropped += 1;
                }
                self.stream_log.queue.push_back(StreamLogEntry {
                    session: sid.clone(),
                    stream: stream_name(origin, key),
                    data,
                });
            }
            if session.logs_open_stream() {
                self.stream_log.sessions.insert(sid);
            }
        }
        self.flush();
    }

    /// Whether logged streams may still write (the driver keeps calling
    /// [`Endpoint::poll_stream_log`] as it settles while this holds).
    pub fn logs_streams(&self) -> bool {
        !self.stream_log.sessions.is_empty()
            || !self.stream_log.queue.is_empty()
            || self.sessions.any_logged()
    }

    /// A GET whose `Last-Event-ID` names a stream another instance wrote (a POST's stream or
    /// its GET stream), for a session held here (sharing with an `event_key`): the driver
    /// serves it from the store as the returned [`RemoteResume`] says, instead of handing the
    /// request in. `None` for every other request, the ones refused included (the endpoint
    /// answers those: a forged or foreign id gets 400).
    pub fn resume_elsewhere(
        &mut self,
        now: Instant,
        head: &HttpRequestHead,
    ) -> Option<RemoteResume> {
        self.config.instance_id.as_ref()?;
        if head.method != HttpMethod::Get || self.config.sessionless || !self.config.allow_get {
            return None;
        }
        let fields = KnownFields::of(head);
        let text = fields.last_event_id?.trim();
        admission::check_fields(&self.config, &fields).ok()?;
        if !accepts(fields.accept.unwrap_or(""), SSE) || self.check_version(&fields).is_err() {
            return None;
        }
        let sid = fields.session_id?;
        let session = self.sessions.get_mut(sid)?;
        let signer = session.signer.as_ref()?;
        let signed = signer.verify(text)?;
        if signed.origin == signer.origin() {
            return None;
        }
        let resume = RemoteResume::new(sid, &signed);
        session.last_activity = now;
        self.flush();
        Some(resume)
    }

    /// Opens this instance's GET stream for `resume` (a [`RemoteResume::is_listen`] one whose
    /// log the driver read, handing every entry to [`RemoteResume::handle_entry`]): first the
    /// events the other instance wrote on its GET stream after the client's id, then what
    /// arises here (the messages held for the session first), as a GET without
    /// `Last-Event-ID` would (it replaces a GET stream of the session open here). `trimmed`:
    /// the log had lost its first entries; when events after the client's id may be among
    /// them the resume is refused (409), as an id older than the replay buffer is. A session
    /// gone meanwhile gets 404.
    pub fn resume_listen(
        &mut self,
        now: Instant,
        mut resume: RemoteResume,
        trimmed: bool,
    ) -> HttpResponse {
        if resume.lost_events(trimmed) {
            return resume.trimmed();
        }
        let sid = resume.session().to_owned();
        let Some(session) = self.sessions.get_mut(sid.as_str()) else {
            return SESSION_NOT_FOUND.answer(None);
        };
        session.last_activity = now;
        session.pump();
        let resp = self.open_listen(&sid, resume.take_missed());
        if resp.status == 200 {
            self.listen_moved_here(&resume);
        }
        self.flush();
        resp
    }
}
