//! The session side of the stateful front end: the session's events become dispatches,
//! cancellations and peer replies, and the handlers' outbox items become the session's
//! responses, progress, notifications and server→client requests (sampling, elicitation,
//! roots), whose replies reach the handler that asked.

use crate::app::server::outbox::{OutboxItem, PeerReply};
use crate::app::server::{PeerError, Server};
use crate::jsonrpc::{RawJson, RequestId};
use crate::session::{Event, Outcome, RequestOptions, SendError};

/// Application events queued at most (`poll_event`); older ones are kept, newer dropped.
const MAX_EVENTS: usize = 1024;
/// Stream-close requests queued at most (`poll_stream_close`); a transport that never asks
/// for them (stdio) keeps only the newest.
const MAX_STREAM_CLOSES: usize = 64;

impl Server {
    /// One event of the session: a request to dispatch, a cancellation, the outcome of a
    /// server→client request, the end of the session; the rest is queued for `poll_event`.
    pub(in crate::app::server) fn handle_event(&mut self, event: Event) {
        match event {
            Event::Request { id, method, params } => self.dispatch(id, &method, params),
            Event::Cancelled { id, .. } => {
                if let Some(token) = self.running.get(&id) {
                    token.cancel();
                }
            }
            Event::Completed { id, outcome } => {
                if let Some((reply, _)) = self.stateful.peer_requests.remove(&id) {
                    reply.send(peer_outcome(outcome));
                }
            }
            Event::Closed { .. } => {
                self.shared.mark_closed();
                for (_, token) in self.running.drain() {
                    token.cancel();
                }
                self.push_event(event);
            }
            Event::Progress { .. } => {}
            other => self.push_event(other),
        }
    }

    fn push_event(&mut self, event: Event) {
        if self.stateful.events.len() < MAX_EVENTS {
            self.stateful.events.push_back(event);
        }
    }

    /// Applies an outbox item of a handler served in the session (the stateless front end
    /// took its own first; resource updates and registry changes are the server's).
    pub(in crate::app::server) fn session_apply(&mut self, item: OutboxItem) {
        // Errors below mean the session closed or the request is gone (cancelled): the
        // session already counts suppressed replies, nothing else to do.
        match item {
            OutboxItem::Reply { id, outcome } => {
                // Most handlers answer at their first poll and never join `running`: an empty
                // table is not hashed into (SipHash of the id per reply).
                if !self.running.is_empty() {
                    self.running.remove(&id);
                }
                if !self.stateful.peer_requests.is_empty() {
                    self.cancel_orphans(&id);
                }
                let _ = match outcome {
                    Ok(result) => self.session.respond(&id, result),
                    Err(error) => self.session.respond_error(&id, error),
                };
            }
            OutboxItem::Progress {
                id,
                progress,
                total,
                message,
            } => {
                let _ = self.session.notify_progress(&id, progress, total, message);
            }
            OutboxItem::Notify {
                related,
                method,
                params,
            } => {
                let _ = match related {
                    Some(id) => self.session.notify_related(&id, method, params),
                    None => self.session.notify(method, params),
                };
            }
            OutboxItem::PeerRequest {
                related,
                method,
                params,
                reply,
            } => self.send_peer_request(related, method, params, reply),
            // Routed before this point (see `Server::apply`).
            OutboxItem::ResourceUpdated { .. } | OutboxItem::Change(_) => {}
            OutboxItem::CloseStream { id } => {
                if self.stateful.stream_closes.len() >= MAX_STREAM_CLOSES {
                    self.stateful.stream_closes.pop_front();
                }
                self.stateful.stream_closes.push_back(id);
            }
        }
    }

    fn send_peer_request(
        &mut self,
        related: Option<RequestId>,
        method: &'static str,
        params: Option<RawJson>,
        reply: PeerReply,
    ) {
        let opts = RequestOptions {
            related_to: related.clone(),
            ..Default::default()
        };
        match self
            .session
            .send_request(self.last_now, method, params, opts)
        {
            Ok(id) => {
                self.stateful.peer_requests.insert(id, (reply, related));
            }
            Err(SendError::CapabilityNotDeclared { capability, .. }) => {
                reply.send(Err(PeerError::CapabilityNotDeclared { capability }));
            }
            Err(SendError::Closed) => reply.send(Err(PeerError::Closed)),
            Err(e) => reply.send(Err(PeerError::Refused(e.to_string()))),
        }
    }

    /// Cancels the server→client requests a finished handler left pending (it stopped
    /// awaiting them, e.g. after its own request was cancelled), so the client stops working.
    fn cancel_orphans(&mut self, inbound: &RequestId) {
        let orphans: Vec<RequestId> = self
            .stateful
            .peer_requests
            .iter()
            .filter(|(_, (_, related))| related.as_ref() == Some(inbound))
            .map(|(id, _)| id.clone())
            .collect();
        for id in orphans {
            let reason = Some("the request it served has finished".to_owned());
            let _ = self.session.cancel(self.last_now, &id, reason);
        }
    }
}

fn peer_outcome(outcome: Outcome) -> Result<serde_json::Value, PeerError> {
    match outcome {
        Outcome::Result(raw) => raw
            .to_value()
            .map_err(|e| PeerError::Refused(format!("unparsable result: {e}"))),
        Outcome::Error(e) => Err(PeerError::Error(e)),
        Outcome::TimedOut => Err(PeerError::TimedOut),
        Outcome::Cancelled => Err(PeerError::Cancelled),
        Outcome::Closed => Err(PeerError::Closed),
    }
}
