//! The one contract between a client machine and the adapter that performs its HTTP requests:
//! the request a machine asks for ([`OutgoingRequest`], named by an [`ExchangeId`] that the
//! adapter quotes when it reports the response), what the adapter must do next ([`Action`]),
//! and [`ClientTransport`], the families of methods every HTTP client machine has (the
//! Streamable client, the HTTP+SSE client and the auto-detecting client), so one adapter loop
//! drives any of them. The OAuth flow emits the same request type.
//!
//! Drive loop, the same for every machine:
//! - every frame the client session transmits goes to `handle_transmit` (a request the
//!   transport cannot carry comes back as a JSON-RPC error frame, so it ends exactly once);
//! - perform each [`Action`] from `poll_action` and report the response with
//!   `handle_response_head`, `handle_response_body` (chunks as they arrive),
//!   `handle_response_end` or `handle_response_failed`;
//! - every frame from `poll_frame` goes to the session, every event from `poll_event` to the
//!   application;
//! - sleep until the earlier of new input and `poll_timeout`, then `handle_timeout`.

use std::time::Instant;

use bytes::Bytes;

use crate::http_shape::{HttpMethod, HttpText};
use crate::jsonrpc::Incoming;
use crate::session::TransmitKind;

/// Names one HTTP request (and its response) a client machine asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExchangeId(pub u64);

/// One HTTP request for the adapter to perform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutgoingRequest {
    /// Report the response under this id.
    pub id: ExchangeId,
    /// The method.
    pub method: HttpMethod,
    /// The absolute URL (`http(s)://authority/path?query`); `None`: the MCP endpoint URL the
    /// adapter was given (the Streamable client does not know it).
    pub url: Option<HttpText>,
    /// Header fields to send (the adapter adds `Host`, `Content-Length` and its own ones, such
    /// as `Authorization` for the MCP server). Values are constants or text the machine keeps
    /// and shares with every request instead of copying it into each one. A Basic
    /// `Authorization` value of the OAuth flow carries a secret: don't log it.
    pub headers: Vec<(&'static str, HttpText)>,
    /// Header fields whose names are not constants (a 2026-07-28 tool call's `Mcp-Param-*`,
    /// named by the tool's schema); empty for every other request.
    pub named_headers: Vec<(HttpText, HttpText)>,
    /// The body (empty for GET and DELETE).
    pub body: Bytes,
}

/// An HTTP response the adapter received for an [`OutgoingRequest`], read whole (the OAuth
/// flow's metadata, registration and token responses).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReceivedResponse {
    /// The status code.
    pub status: u16,
    /// Header `(name, value)` pairs, names in any case.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl ReceivedResponse {
    /// All values of header `name` (case-insensitive).
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl OutgoingRequest {
    /// The value of header `name` (case-insensitive), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        let constant = self.headers.iter().map(|(n, v)| (*n, v));
        let named = self.named_headers.iter().map(|(n, v)| (n.as_str(), v));
        constant
            .chain(named)
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The absolute URL, when the request has one (see [`OutgoingRequest::url`]).
    pub fn url_str(&self) -> Option<&str> {
        self.url.as_ref().map(HttpText::as_str)
    }
}

/// What the adapter must do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Perform this request and report its response with the `handle_response_*` methods.
    Send(OutgoingRequest),
    /// Stop this exchange (drop the connection or the body); report nothing more for it.
    Abort(ExchangeId),
}

/// A frame for the client session, with its decoding when the transport made one (to see
/// which request it answers): give both to the session's `handle_decoded` so the frame is not
/// decoded twice, or the frame alone to `handle_input` when there is none.
pub(crate) type InboundFrame = (Bytes, Option<Incoming>);

/// The families of methods of every HTTP client machine, so one adapter loop drives any of
/// them. Every input takes `now`; see the module docs for the drive loop. The machines have
/// the same methods of their own (no import needed to call them).
pub trait ClientTransport {
    /// What the machine reports to the application.
    type Event;

    /// One message the client session transmitted (`poll_transmit`), with its kind.
    fn handle_transmit(&mut self, now: Instant, frame: Bytes, kind: TransmitKind);
    /// The response head of exchange `id`: status and header fields.
    fn handle_response_head<'a>(
        &mut self,
        now: Instant,
        id: ExchangeId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    );
    /// The next chunk of exchange `id`'s response body.
    fn handle_response_body(&mut self, now: Instant, id: ExchangeId, chunk: Bytes);
    /// Exchange `id`'s response body is complete.
    fn handle_response_end(&mut self, now: Instant, id: ExchangeId);
    /// Exchange `id` failed: no connection, or the connection broke before the body ended.
    fn handle_response_failed(&mut self, now: Instant, id: ExchangeId, reason: &str);
    /// Fires what is due at `now`.
    fn handle_timeout(&mut self, now: Instant);
    /// Ends the transport.
    fn close(&mut self, now: Instant);
    /// The next request to perform or exchange to abort.
    fn poll_action(&mut self) -> Option<Action>;
    /// The next frame for the client session.
    fn poll_frame(&mut self) -> Option<InboundFrame>;
    /// The next event for the application.
    fn poll_event(&mut self) -> Option<Self::Event>;
    /// When `handle_timeout` must be called next.
    fn poll_timeout(&self) -> Option<Instant>;
    /// Whether closing finished (nothing more will happen).
    fn is_closed(&self) -> bool;
}

/// Implements [`ClientTransport`] for a machine by calling its own methods of the same names.
macro_rules! client_transport_by_inherent_methods {
    ($machine:ty, $event:ty) => {
        impl $crate::outgoing::ClientTransport for $machine {
            type Event = $event;

            fn handle_transmit(
                &mut self,
                now: std::time::Instant,
                frame: bytes::Bytes,
                kind: $crate::session::TransmitKind,
            ) {
                <$machine>::handle_transmit(self, now, frame, kind)
            }
            fn handle_response_head<'a>(
                &mut self,
                now: std::time::Instant,
                id: $crate::outgoing::ExchangeId,
                status: u16,
                headers: impl IntoIterator<Item = (&'a str, &'a str)>,
            ) {
                <$machine>::handle_response_head(self, now, id, status, headers)
            }
            fn handle_response_body(
                &mut self,
                now: std::time::Instant,
                id: $crate::outgoing::ExchangeId,
                chunk: bytes::Bytes,
            ) {
                <$machine>::handle_response_body(self, now, id, chunk)
            }
            fn handle_response_end(
                &mut self,
                now: std::time::Instant,
                id: $crate::outgoing::ExchangeId,
            ) {
                <$machine>::handle_response_end(self, now, id)
            }
            fn handle_response_failed(
                &mut self,
                now: std::time::Instant,
                id: $crate::outgoing::ExchangeId,
                reason: &str,
            ) {
                <$machine>::handle_response_failed(self, now, id, reason)
            }
            fn handle_timeout(&mut self, now: std::time::Instant) {
                <$machine>::handle_timeout(self, now)
            }
            fn close(&mut self, now: std::time::Instant) {
                <$machine>::close(self, now)
            }
            fn poll_action(&mut self) -> Option<$crate::outgoing::Action> {
                <$machine>::poll_action(self)
            }
            fn poll_frame(&mut self) -> Option<$crate::outgoing::InboundFrame> {
                <$machine>::poll_frame(self)
            }
            fn poll_event(&mut self) -> Option<$event> {
                <$machine>::poll_event(self)
            }
            fn poll_timeout(&self) -> Option<std::time::Instant> {
                <$machine>::poll_timeout(self)
            }
            fn is_closed(&self) -> bool {
                <$machine>::is_closed(self)
            }
        }
    };
}
pub(crate) use client_transport_by_inherent_methods;
