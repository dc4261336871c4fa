//! The GET stream of a shared session that moved to another instance (see the listen relay
//! module): [`Endpoint::resume_listen`] queues the "moved" notice for the instance whose GET
//! stream was resumed here; that instance takes it with [`Endpoint::handle_listen_relay`],
//! ends its GET stream and hands out, with [`Endpoint::poll_listen_relay`], every message for
//! that stream to the instance now holding it, which takes each with
//! [`Endpoint::handle_listen_relay`] and writes it on its own GET stream. A GET without
//! `Last-Event-ID` queues an "opened" notice for every instance instead: each one holding
//! the session ends its GET stream and hands its messages over the same way.
//!
//! The driver's part: whenever it settles, drain `poll_listen_relay` and publish each
//! payload, in order, on the bus channel of the instance it names (of every instance for
//! [`ListenRelay::to_every_instance`]). Report on each message ([`ListenRelay::is_message`]):
//! one another instance received with [`Endpoint::handle_listen_relay_received`]; one no
//! instance received (the holder is gone), or that the driver could not queue or publish,
//! goes back with [`Endpoint::handle_listen_relay_lost`] (held here in its place among the
//! session's messages). A notice the driver could not queue is sent again later (it is not
//! the core's to hold). And hand every payload published to this instance, or to every
//! instance, to `handle_listen_relay`.
//!
//! The order a client sees on its GET stream: each instance writes the session's messages
//! in the order they arose there. When the client's GET stream comes back to an instance
//! while messages it relayed are still out, what arises there waits behind them: each one
//! that comes back is written in its place before it, each one received elsewhere is not
//! written here. A message another instance relays here is written after what this one
//! wrote already.

use std::collections::{HashSet, VecDeque};
use std::time::Instant;

use super::super::event_id::EventId;
use super::super::listen_relay::{Kind, ListenRelay};
use super::super::machine::{ExchangeMachine, SessionMachine};
use super::super::stream_log::RemoteResume;
use super::super::streams::STANDALONE;
use super::Endpoint;

/// Relays queued for the driver at most; past it the oldest is dropped (a driver that
/// settles takes them long before).
const MAX_QUEUED: usize = 16 * 1024;

/// The sessions whose GET stream another instance holds, and the relays for the driver.
#[derive(Debug, Default)]
pub(super) struct Relays {
    sessions: HashSet<String>,
    queue: VecDeque<ListenRelay>,
}

impl Relays {
    /// Queues `relay`; returns the oldest one, dropped at the bound.
    fn push(&mut self, relay: ListenRelay) -> Option<ListenRelay> {
        let dropped = if self.queue.len() >= MAX_QUEUED {
            self.queue.pop_front()
        } else {
            None
        };
        self.queue.push_back(relay);
        dropped
    }
}

impl<M: SessionMachine + ExchangeMachine> Endpoint<M> {
    /// The next relay to publish (see the module docs), oldest first; `None` when there is
    /// none (always, unless sessions are shared and a GET stream moved between instances).
    #[must_use]
    pub fn poll_listen_relay(&mut self) -> Option<ListenRelay> {
        if self.relays.queue.is_empty() && !self.relays.sessions.is_empty() {
            self.collect_relays();
        }
        self.relays.queue.pop_front()
    }

    fn collect_relays(&mut self) {
        let visit: Vec<String> = self.relays.sessions.iter().cloned().collect();
        let mut dropped = Vec::new();
        for sid in visit {
            let Some(session) = self.sessions.get_mut(sid.as_str()) else {
                self.relays.sessions.remove(&sid);
                continue;
            };
            session.pump();
            let Some(relay) = &mut session.relay else {
                self.relays.sessions.remove(&sid);
                continue;
            };
            let out = std::mem::take(&mut relay.out);
            session.relays_out += out.len();
            for (seq, data) in out {
                let relay = ListenRelay::message(&relay.to, &sid, data, seq);
                dropped.extend(self.relays.push(relay));
            }
        }
        for relay in dropped {
            self.handle_listen_relay_lost(relay);
        }
        self.flush();
    }

    /// Queues `relay` for the driver; a message dropped from the full queue is held here, as
    /// one the driver could not queue.
    fn queue_relay(&mut self, relay: ListenRelay) {
        if let Some(dropped) = self.relays.push(relay) {
            self.handle_listen_relay_lost(dropped);
        }
    }

    /// Notes that the client's GET stream of the session `resume` names, written by another
    /// instance, is now held here: that instance is told (sharing only).
    pub(super) fn listen_moved_here(&mut self, resume: &RemoteResume) {
        let Some(me) = self.config.instance_id.as_deref() else {
            return;
        };
        let (origin, after) = resume.seen();
        let moved = ListenRelay::moved(resume.instance(), resume.session(), origin, after, me);
        self.queue_relay(moved);
    }

    /// Notes that a GET without `Last-Event-ID` opened session `sid`'s GET stream here: every
    /// instance is told, and one holding messages for it (or a GET stream of it) hands them
    /// over (sharing only).
    pub(super) fn listen_opened_here(&mut self, sid: &str) {
        let Some(me) = self.config.instance_id.as_deref() else {
            return;
        };
        let opened = ListenRelay::opened(sid, me);
        self.queue_relay(opened);
    }

    /// A relay another instance published to this one (`payload`): a GET stream of a
    /// session held here moved to another instance (it ends here, and what it wrote after
    /// the last event the other read, the held messages and what arises go there), a GET
    /// stream of it opened on another instance (the same, with no events to add), or a
    /// message for the GET stream of a session held here (written on it, with this
    /// instance's event id; relayed on when the stream moved again; held when none is open).
    /// Returns whether the payload named a session held here.
    pub fn handle_listen_relay(&mut self, now: Instant, payload: &[u8]) -> bool {
        self.clock = Some(now);
        let Some(me) = self.config.instance_id.clone() else {
            return false;
        };
        let Some(relay) = ListenRelay::parse(&me, payload) else {
            return false;
        };
        let sid = relay.session().to_owned();
        let Some(session) = self.sessions.get_mut(sid.as_str()) else {
            return false;
        };
        session.pump();
        match relay.kind() {
            Kind::Moved { origin, after, to } if *to != me => {
                let mine = session
                    .signer
                    .as_ref()
                    .is_some_and(|s| s.origin() == origin);
                let cursor = EventId {
                    stream: STANDALONE,
                    seq: *after,
                };
                let trailing = match session.replay.replay_after(cursor) {
                    Ok(events) if mine => events,
                    // Another copy's stream (this one was restored since), or events past
                    // the replay budget: nothing to add.
                    Ok(_) => Vec::new(),
                    Err(_) => {
                        session.dropped += 1;
                        Vec::new()
                    }
                };
                if let Some(conn) = session.move_listener(to.clone(), trailing) {
                    self.keep_alives.forget(conn);
                    self.conns.remove(&conn);
                }
                self.relays.sessions.insert(sid);
            }
            Kind::Opened { to } if *to != me => {
                if let Some(conn) = session.move_listener(to.clone(), Vec::new()) {
                    self.keep_alives.forget(conn);
                    self.conns.remove(&conn);
                }
                self.relays.sessions.insert(sid);
            }
            Kind::Moved { .. } | Kind::Opened { .. } => {}
            Kind::Message(data) => {
                session.last_activity = now;
                session.emit_standalone(data.clone());
                if session.relay.is_some() {
                    self.relays.sessions.insert(sid);
                }
            }
        }
        self.flush();
        true
    }

    /// A message relay ([`ListenRelay::is_message`]) another instance received: a GET stream
    /// of the session open here again writes what waited behind it (see the module docs).
    pub fn handle_listen_relay_received(&mut self, relay: &ListenRelay) {
        if !relay.is_message() {
            return;
        }
        let Some(session) = self.sessions.get_mut(relay.session.as_str()) else {
            return;
        };
        session.relay_received();
        self.flush();
    }

    /// A relay the driver could not hand over: a message relay
    /// ([`ListenRelay::is_message`]) no instance received (the instance it was for is gone)
    /// or that the driver could not queue or publish. The message is held here for the
    /// session's next GET stream, in its place among the session's messages (before what
    /// still waited to be relayed and what arose since, after the messages that came back
    /// before it), and the session's later messages too (it relays no more); a GET stream
    /// open here writes it in that place (see the module docs). Counted
    /// (`EndpointStats::listen_relays_lost`), notices included (a driver should rather send
    /// a notice again).
    pub fn handle_listen_relay_lost(&mut self, relay: ListenRelay) {
        self.stats.listen_relays_lost += 1;
        let Kind::Message(data) = relay.kind else {
            return;
        };
        let Some(session) = self.sessions.get_mut(relay.session.as_str()) else {
            return;
        };
        session.hold_lost(relay.seq, data);
        self.flush();
    }
}
