//! Losing and re-establishing the HTTP session: a 404 on a request that carried our
//! `Mcp-Session-Id` ends every request in flight once (with a transport error), then the
//! client's original `initialize` and `notifications/initialized` are replayed to get a new
//! session, while new messages wait (bounded).

use bytes::Bytes;

use super::exchange::Purpose;
use super::{HttpClient, Phase, TransportEvent};
use crate::jsonrpc::{self, Message};
use crate::outgoing::Action;

impl HttpClient {
    /// A 404 for our session id: the server forgot the session.
    pub(super) fn session_expired(&mut self) {
        if self.phase != Phase::Open {
            return;
        }
        self.stats.sessions_expired += 1;
        self.session_id = None;
        self.barrier = None;
        self.barrier_deadline = None;
        self.abort_all("the HTTP session expired (404)");
        self.events.push_back(TransportEvent::SessionExpired);
        let replay =
            self.config.reinitialize && self.reinitializations < self.config.max_reinitializations;
        match self.init_frame.clone() {
            Some(init) if replay => {
                self.reinitializations += 1;
                self.phase = Phase::Reinitializing;
                self.post(init, Purpose::Reinit);
            }
            _ => self.session_lost("the HTTP session expired (404)".into()),
        }
    }

    /// Aborts every exchange and pending reconnection; requests among them end with an error.
    pub(super) fn abort_all(&mut self, reason: &str) {
        let mut ids: Vec<_> = self.exchanges.keys().copied().collect();
        ids.sort();
        for id in ids {
            let Some(ex) = self.exchanges.remove(&id) else {
                continue;
            };
            self.actions.push_back(Action::Abort(id));
            if let Some(request) = ex.purpose.awaited().filter(|_| !ex.answered) {
                let request = request.clone();
                self.fail_request(&request, reason, None);
            }
        }
        for resume in std::mem::take(&mut self.resumes) {
            if let Some(request) = resume.request {
                self.fail_request(&request, reason, None);
            }
        }
    }

    /// The replayed `initialize` got its answer (a frame of exchange `id`).
    pub(super) fn reinit_answered(&mut self, id: super::ExchangeId, frame: &Bytes) {
        if self.phase != Phase::Reinitializing {
            return;
        }
        let outcome = match jsonrpc::decode_message(frame) {
            Ok(Message::Response(r)) => r.outcome,
            // A request or notification before the result: not ours to answer here.
            _ => return,
        };
        if let Some(ex) = self.exchanges.get_mut(&id) {
            ex.answered = true;
        }
        if let Err(error) = outcome {
            return self.session_lost(format!(
                "re-initialization refused: {} {}",
                error.code,
                crate::http::quote_peer_text(&error.message)
            ));
        }
        self.note_version(frame);
        self.phase = Phase::Open;
        self.events.push_back(TransportEvent::Reinitialized {
            session_id: self.session_id.as_deref().map(str::to_owned),
        });
        match self.initialized_frame.clone() {
            Some(initialized) => {
                let step = self.post(initialized, Purpose::Initialized);
                self.barrier = Some(step);
            }
            None => self.release_barrier(),
        }
    }

    /// The session cannot be re-established: held requests fail, later ones fail at once.
    pub(super) fn session_lost(&mut self, reason: String) {
        self.phase = Phase::Lost;
        self.abort_all(&reason);
        for (frame, kind) in std::mem::take(&mut self.held) {
            self.refuse(&frame, kind, &reason);
        }
        self.events
            .push_back(TransportEvent::SessionLost { reason });
    }
}
