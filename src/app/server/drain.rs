//! The end of the client's input (a stdio server's stdin closed): nothing more can arrive.
//! Requests sent to the client fail at once (their answers can never come), listen streams
//! end, and the requests still being handled get `Config::drain_timeout` to finish; past it
//! each is answered with `-32603` and the session closes. Either way the session closes once
//! nothing is in flight, so a server whose client went away always stops.

use std::time::Instant;

use crate::app::server::outbox::OutboxItem;
use crate::app::server::Server;
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::session::State;

/// The error a request still running at the drain deadline is answered with.
const STOPPED: &str = "the server stopped: the client's input ended before this request finished";

impl Server {
    /// The client's input ended. Call it once, at the end of input; then keep driving the
    /// server (jobs, `poll_transmit`, `handle_timeout` at `poll_timeout`) until its session
    /// is closed and its transmits drained.
    pub fn handle_input_end(&mut self, now: Instant) {
        self.last_now = now;
        self.drain_outbox();
        if self.drain_deadline.is_none() {
            self.drain_deadline = Some(now + self.session.config().drain_timeout);
        }
        self.session.handle_input_end(now);
        self.end_listen_streams();
        self.process();
    }

    /// Whether a request of the client is still being handled.
    fn busy(&self) -> bool {
        self.session.inflight_inbound() > 0 || !self.stateless.exchanges.is_empty()
    }

    /// The drain deadline while one is running (for `poll_timeout`).
    pub(in crate::app::server) fn drain_timeout(&self) -> Option<Instant> {
        let deadline = self.drain_deadline?;
        (self.session.state() != State::Closed).then_some(deadline)
    }

    /// After the input ended: closes the session once nothing is in flight, or at the
    /// deadline after answering what still is.
    pub(in crate::app::server) fn close_if_drained(&mut self) {
        let Some(deadline) = self.drain_deadline else {
            return;
        };
        if self.session.state() == State::Closed {
            return;
        }
        if self.busy() {
            if self.last_now < deadline {
                return;
            }
            self.answer_running();
        }
        let now = self.last_now;
        self.close(now);
    }

    /// Answers every request still being handled with [`STOPPED`].
    fn answer_running(&mut self) {
        let error = ErrorObject::internal(STOPPED);
        let mut exchanges: Vec<RequestId> = self.stateless.exchanges.keys().cloned().collect();
        exchanges.sort();
        for id in exchanges {
            let outcome = Err(error.clone());
            self.apply(OutboxItem::Reply { id, outcome });
        }
        self.session.fail_inflight_inbound(&error);
    }
}
