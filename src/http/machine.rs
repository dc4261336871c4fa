//! The per-session state machine the endpoint drives, as a small trait so the endpoint is not
//! tied to the application layer (implemented for `app::server::Server`).

use std::time::Instant;

use bytes::Bytes;

use crate::app::server::{ListenEvent, ParamHeader, Server};
use crate::jsonrpc::{Incoming, RequestId};
use crate::model::ProtocolVersion;
use crate::runtime::Job;
use crate::session::{State, Transmit};

/// One MCP conversation, server side, as the endpoint needs it.
pub trait Machine {
    /// One frame (one JSON text) from the client.
    fn handle_input(&mut self, now: Instant, frame: Bytes);
    /// One frame the endpoint already decoded (`incoming` is `decode(&frame)`'s result): a
    /// machine that can take the messages as they are need not decode the frame again.
    fn handle_decoded(&mut self, now: Instant, frame: Bytes, incoming: Incoming) {
        let _ = incoming;
        self.handle_input(now, frame)
    }
    /// Fires due timers.
    fn handle_timeout(&mut self, now: Instant);
    /// Appends one outgoing message to `buf`.
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit>;
    /// The next deadline.
    fn poll_timeout(&self) -> Option<Instant>;
    /// A pending handler future for the driver to run.
    fn poll_job(&mut self) -> Option<Job>;
    /// Ends the conversation (session terminated or expired).
    fn close(&mut self, now: Instant);
    /// The negotiated protocol version, once known.
    fn protocol_version(&self) -> Option<ProtocolVersion>;
    /// One frame from a client speaking 2026-07-28 (decided by the transport): served
    /// statelessly. By default, like any frame.
    fn handle_stateless_input(&mut self, now: Instant, frame: Bytes) {
        self.handle_input(now, frame)
    }
    /// The HTTP status a refused stateless request should get (400/404); `None` by default.
    fn stateless_status(&self, _id: &RequestId) -> Option<u16> {
        None
    }
    /// An inbound request whose response stream should end now (SEP-1699); `None` by default.
    fn poll_stream_close(&mut self) -> Option<RequestId> {
        None
    }
    /// A change made while serving a 2026-07-28 exchange, for the listen streams of the other
    /// machines; `None` by default.
    fn poll_listen_event(&mut self) -> Option<ListenEvent> {
        None
    }
    /// A change another machine made: deliver it on this machine's listen streams. Ignored by
    /// default.
    fn handle_listen_event(&mut self, _event: &ListenEvent) {}
    /// The `Mcp-Param-*` headers a 2026-07-28 `tools/call` of tool `name` must carry (from
    /// its `x-mcp-header` annotations); none by default.
    fn tool_param_headers(&self, _name: &str) -> Vec<ParamHeader> {
        Vec::new()
    }
    /// Whether the handshake is over (`notifications/initialized` received, or the session
    /// closed): until then the endpoint holds the session only for a short grace and evicts
    /// it first when full. `true` by default (a machine with no handshake).
    fn handshake_done(&self) -> bool {
        true
    }
    /// Whether `poll_transmit` and `poll_stream_close` would hand out nothing now, so the
    /// session's idle response streams have nothing to pull. `false` (unknown) by default:
    /// the driver then polls them after every input, which is always correct.
    fn is_quiet(&self) -> bool {
        false
    }
    /// Gives back the memory of drained queues and buffers, and drops what no reader of the
    /// endpoint's will ask for: the endpoint calls it once a session's output is routed, as it
    /// may hold thousands of idle sessions.
    fn release_spare_capacity(&mut self) {}
}

impl Machine for Server {
    fn handle_input(&mut self, now: Instant, frame: Bytes) {
        Server::handle_input(self, now, frame)
    }
    fn handle_decoded(&mut self, now: Instant, frame: Bytes, incoming: Incoming) {
        Server::handle_decoded(self, now, frame, incoming)
    }
    fn handle_timeout(&mut self, now: Instant) {
        Server::handle_timeout(self, now)
    }
    fn release_spare_capacity(&mut self) {
        // The endpoint has no reader for a session's application events (`Initialized`,
        // client notifications): dropped with the spare capacity, so an idle session holds
        // none.
        while Server::poll_event(self).is_some() {}
        Server::release_spare_capacity(self)
    }
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
        Server::poll_transmit(self, buf)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Server::poll_timeout(self)
    }
    fn poll_job(&mut self) -> Option<Job> {
        Server::poll_job(self)
    }
    fn close(&mut self, now: Instant) {
        Server::close(self, now)
    }
    fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.session().protocol_version()
    }
    fn poll_stream_close(&mut self) -> Option<RequestId> {
        Server::poll_stream_close(self)
    }
    fn handle_stateless_input(&mut self, now: Instant, frame: Bytes) {
        Server::handle_stateless_input(self, now, frame)
    }
    fn stateless_status(&self, id: &RequestId) -> Option<u16> {
        Server::stateless_status(self, id)
    }
    fn poll_listen_event(&mut self) -> Option<ListenEvent> {
        Server::poll_listen_event(self)
    }
    fn handle_listen_event(&mut self, event: &ListenEvent) {
        Server::handle_listen_event(self, event)
    }
    fn is_quiet(&self) -> bool {
        Server::is_quiet(self)
    }
    fn handshake_done(&self) -> bool {
        !matches!(
            self.session().state(),
            State::NotInitialized | State::Initializing
        )
    }
    fn tool_param_headers(&self, name: &str) -> Vec<ParamHeader> {
        Server::tool_param_headers(self, name)
    }
}
