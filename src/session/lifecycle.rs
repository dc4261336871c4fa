//! The handshake and the end: `initialize` (both sides), version negotiation,
//! `notifications/initialized`, and closing.
//!
//! NOT_INIT → INIT_PENDING → READY → CLOSED on both sides. A request other than `ping` before
//! the handshake finished is answered `-32600` ("session not initialized"); a second
//! `initialize` is answered `-32600` ("already initialized").

use std::time::Instant;

use super::outbound::Purpose;
use super::{CloseReason, Event, Outcome, RequestOptions, Role, SendError, Session, State};
use crate::jsonrpc::{
    self as m, ErrorObject, Message, Notification, RawJson, Request, RequestId, Response,
};
use crate::model::{InitializeParams, InitializeResult, ProtocolVersion};

impl Session {
    /// Client: sends `initialize` with the setup given at construction. Completes with
    /// `Event::Completed` and then `Event::Initialized` (or `Event::Closed`).
    pub fn initialize(&mut self, now: Instant) -> Result<RequestId, SendError> {
        if self.state == State::Closed {
            return Err(SendError::Closed);
        }
        let Some(setup) = &self.client_setup else {
            return Err(SendError::WrongRole);
        };
        if self.state != State::NotInitialized {
            return Err(SendError::WrongRole);
        }
        let params = InitializeParams {
            protocol_version: setup.protocol_version.as_str().to_owned(),
            capabilities: setup.capabilities.clone(),
            client_info: setup.info.clone(),
            meta: None,
            extra: Default::default(),
        };
        let params = RawJson::from_serialize(&params).map_err(|_| SendError::InvalidParams)?;
        let method = m::intern_method(m::INITIALIZE);
        let opts = RequestOptions::default();
        let id = self.start_request(now, method, Some(params), opts, Purpose::Initialize)?;
        self.state = State::Initializing;
        Ok(id)
    }

    /// Server: the version to answer with: the client's when supported, else our latest.
    fn negotiate(&self, requested: &str) -> ProtocolVersion {
        match ProtocolVersion::parse(requested) {
            Some(v) if self.config.supports(v) => v,
            _ => self.config.latest_supported(),
        }
    }

    /// Server: `initialize` from the client.
    // Once per session: kept out of the per-message path (instruction cache).
    #[cold]
    #[inline(never)]
    pub(crate) fn handle_initialize(&mut self, request: Request) {
        if self.state != State::NotInitialized {
            self.stats.requests_refused += 1;
            let error = ErrorObject::invalid_request("Invalid Request: already initialized");
            return self.reply_error(Some(request.id), error);
        }
        let parsed = request
            .params
            .as_ref()
            .map(|p| p.parse::<InitializeParams>());
        let params = match parsed {
            Some(Ok(params)) => params,
            Some(Err(e)) => {
                let error = ErrorObject::invalid_params(format!("Invalid params: {e}"));
                return self.refuse_initialize(request.id, error);
            }
            None => {
                let error = ErrorObject::invalid_params("Invalid params: initialize needs params");
                return self.refuse_initialize(request.id, error);
            }
        };
        let Some(setup) = &self.server_setup else {
            return;
        };
        let version = self.negotiate(&params.protocol_version);
        let result = InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities: setup.capabilities.clone(),
            server_info: setup.info.clone(),
            instructions: setup.instructions.clone(),
            meta: None,
            extra: Default::default(),
        };
        let Ok(result) = RawJson::from_serialize(&result) else {
            let error = ErrorObject::internal("cannot encode the initialize result");
            return self.refuse_initialize(request.id, error);
        };
        self.version = Some(version);
        self.peer_info = Some(params.client_info);
        self.peer_client_caps = Some(params.capabilities);
        self.state = State::Initializing;
        let related = Some(request.id.clone());
        let response = Response::result(request.id, result);
        self.enqueue(Message::Response(response), related);
    }

    fn refuse_initialize(&mut self, id: RequestId, error: ErrorObject) {
        self.stats.requests_refused += 1;
        self.reply_error(Some(id), error);
    }

    /// Server: `notifications/initialized` ends the handshake.
    // Once per session: kept out of the per-message path (instruction cache).
    #[cold]
    #[inline(never)]
    pub(crate) fn handle_initialized(&mut self) {
        if self.state != State::Initializing {
            self.stats.notifications_dropped += 1;
            return;
        }
        self.state = State::Ready;
        if let Some(protocol_version) = self.version {
            self.push_event(Event::Initialized { protocol_version }, false);
        }
    }

    /// Client: the server's answer to `initialize`.
    // Once per session: kept out of the per-message path (instruction cache).
    #[cold]
    #[inline(never)]
    pub(crate) fn handle_initialize_outcome(
        &mut self,
        _now: Instant,
        id: RequestId,
        outcome: Outcome,
    ) {
        self.push_event(
            Event::Completed {
                id,
                outcome: outcome.clone(),
            },
            false,
        );
        let raw = match outcome {
            Outcome::Result(raw) => raw,
            Outcome::Error(error) => return self.close_with(CloseReason::InitializeFailed(error)),
            _ => return self.close_with(CloseReason::InitializeTimedOut),
        };
        let result = match raw.parse::<InitializeResult>() {
            Ok(result) => result,
            Err(e) => {
                return self.close_with(CloseReason::InvalidInitializeResult(e.to_string()));
            }
        };
        let version =
            ProtocolVersion::parse(&result.protocol_version).filter(|v| self.config.supports(*v));
        let Some(version) = version else {
            let server_version = result.protocol_version;
            return self.close_with(CloseReason::UnsupportedVersion { server_version });
        };
        self.version = Some(version);
        self.peer_info = Some(result.server_info);
        self.peer_server_caps = Some(Box::new(result.capabilities));
        self.instructions = result.instructions;
        let initialized = Notification {
            method: m::intern_method(m::NOTIFICATIONS_INITIALIZED),
            params: None,
        };
        self.enqueue(Message::Notification(initialized), None);
        self.state = State::Ready;
        self.push_event(
            Event::Initialized {
                protocol_version: version,
            },
            false,
        );
    }

    /// Closes the session: every pending request completes with `Outcome::Closed`, then
    /// `Event::Closed { reason: Local }`. Messages already queued can still be drained.
    pub fn close(&mut self, now: Instant) {
        let _ = now;
        self.close_with(CloseReason::Local);
    }

    /// The peer ended the transport (end of its output, connection closed): closes like
    /// [`Session::close`], with `CloseReason::PeerClosed`.
    pub fn handle_peer_closed(&mut self, now: Instant) {
        let _ = now;
        self.close_with(CloseReason::PeerClosed);
    }

    /// The peer's input ended (a stdio server's stdin closed) while its output may still be
    /// read: no answer can arrive any more, so every request this side sent completes with
    /// `Outcome::Closed` now, keep-alive stops and new requests are refused
    /// (`SendError::Closed`). The peer's requests in flight may still be answered.
    pub fn handle_input_end(&mut self, now: Instant) {
        let _ = now;
        if self.state == State::Closed || self.input_ended {
            return;
        }
        self.input_ended = true;
        for id in self.outbound.drain_app() {
            let outcome = Outcome::Closed;
            self.push_event(Event::Completed { id, outcome }, false);
        }
    }

    /// Whether [`Session::handle_input_end`] was called.
    pub fn input_ended(&self) -> bool {
        self.input_ended
    }

    /// Answers every request of the peer still in flight with `error` (ids in order).
    pub(crate) fn fail_inflight_inbound(&mut self, error: &ErrorObject) {
        for id in self.inbound.ids() {
            let _ = self.respond_error(&id, error.clone());
        }
    }

    pub(crate) fn close_with(&mut self, reason: CloseReason) {
        if self.state == State::Closed {
            return;
        }
        for id in self.outbound.drain_app() {
            let outcome = Outcome::Closed;
            self.push_event(Event::Completed { id, outcome }, false);
        }
        self.inbound.clear();
        self.state = State::Closed;
        self.push_event(Event::Closed { reason }, false);
    }

    /// Whether this session is the client.
    pub fn is_client(&self) -> bool {
        self.role == Role::Client
    }
}
