//! The application server as the HTTP endpoint's machine: [`SessionMachine`] for a stateful
//! session and [`ExchangeMachine`] for one 2026-07-28 exchange, each method passing through to
//! the server's own.

use std::time::Instant;

use bytes::Bytes;

use super::Server;
use crate::http::{ExchangeMachine, SessionMachine};
use crate::jsonrpc::{Incoming, RequestId};
use crate::model::ProtocolVersion;
use crate::runtime::Job;
use crate::session::{RestoreError, State, Transmit};
use crate::stateless::{ListenChange, ParamHeader};

impl SessionMachine for Server {
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
    fn is_quiet(&self) -> bool {
        Server::is_quiet(self)
    }
    fn snapshot(&self) -> Option<Vec<u8>> {
        Server::snapshot(self)
    }
    fn take_snapshot_due(&mut self) -> bool {
        Server::take_snapshot_due(self)
    }
    fn restore(&mut self, now: Instant, bytes: &[u8], prefix: &str) -> Result<(), RestoreError> {
        Server::restore(self, now, bytes, prefix)
    }
    fn refresh(&mut self, snapshot: &[u8]) -> Result<(), RestoreError> {
        Server::refresh(self, snapshot)
    }
    fn number_requests_under(&mut self, id_prefix: &str) {
        let _ = self.session.number_requests_under(id_prefix);
    }
    fn handshake_done(&self) -> bool {
        !matches!(
            self.session().state(),
            State::NotInitialized | State::Initializing
        )
    }
}

impl ExchangeMachine for Server {
    fn handle_exchange(&mut self, now: Instant, frame: Bytes) {
        Server::handle_stateless_input(self, now, frame)
    }
    fn exchange_status(&self, id: &RequestId) -> Option<u16> {
        Server::stateless_status(self, id)
    }
    fn poll_listen_change(&mut self) -> Option<ListenChange> {
        Server::poll_listen_change(self)
    }
    fn handle_listen_change(&mut self, event: &ListenChange) {
        Server::handle_listen_change(self, event)
    }
    fn end_listen_streams(&mut self) {
        Server::end_listen_streams(self)
    }
    fn tool_param_headers(&self, name: &str) -> Vec<ParamHeader> {
        Server::tool_param_headers(self, name)
    }
}
