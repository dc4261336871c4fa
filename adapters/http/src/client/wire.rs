//! The three client transports the auto-detecting client may run, behind the core's one client
//! contract ([`ClientTransport`]): the detector ([`AutoClient`], which also runs the HTTP+SSE
//! client after a fallback), the HTTP+SSE client when forced, and the Streamable HTTP
//! client (forced, or taking over after detection). The Streamable client's exchange ids carry
//! [`STREAMABLE_TAG`], so they never meet the detector's.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::http::sse_transport::{AutoClient, SseTransportClient};
use mcp_sansio::http::{HttpClient, HttpClientConfig, TransportEvent};
use mcp_sansio::jsonrpc::Incoming;
use mcp_sansio::outgoing::{Action, ClientTransport, ExchangeId};
use mcp_sansio::session::TransmitKind;

/// Set on the exchange ids of the Streamable client, so they never meet the detector's keys.
pub(crate) const STREAMABLE_TAG: u64 = 1 << 63;

/// The running transport.
pub(crate) enum Transport {
    Auto(Box<AutoClient>),
    Sse(Box<SseTransportClient>),
    Streamable(Box<HttpClient>),
}

/// An event of whichever transport runs.
pub(crate) enum AnyEvent {
    /// Of the detector or the HTTP+SSE client.
    Wire(TransportEvent),
    /// Of the Streamable client.
    Streamable(TransportEvent),
}

/// The running transport, the Streamable client's configuration for a hand-off, and what the
/// detector still held when it handed off.
pub(crate) struct Wire {
    transport: Transport,
    config: HttpClientConfig,
    actions: VecDeque<Action>,
    frames: VecDeque<(Bytes, Option<Incoming>)>,
    events: VecDeque<TransportEvent>,
    /// The last `now` the loop gave (the hand-off happens while polling).
    now: Instant,
}

impl Wire {
    pub(crate) fn new(transport: Transport, config: HttpClientConfig, now: Instant) -> Self {
        Wire {
            transport,
            config,
            actions: VecDeque::new(),
            frames: VecDeque::new(),
            events: VecDeque::new(),
            now,
        }
    }

    /// After detection found Streamable HTTP and read the probe's response, the Streamable
    /// client takes over the session; what the detector still held is handed on first.
    fn hand_off(&mut self) {
        let Transport::Auto(auto) = &mut self.transport else {
            return;
        };
        let Some(handoff) = auto.take_handoff() else {
            return;
        };
        self.actions
            .extend(std::iter::from_fn(|| auto.poll_action()));
        self.frames.extend(std::iter::from_fn(|| auto.poll_frame()));
        self.events.extend(std::iter::from_fn(|| auto.poll_event()));
        let client = HttpClient::from_handoff(self.config.clone(), self.now, handoff);
        self.transport = Transport::Streamable(Box::new(client));
    }
}

/// The Streamable exchange id of a tagged one.
fn untag(id: ExchangeId) -> Option<ExchangeId> {
    (id.0 & STREAMABLE_TAG != 0).then_some(ExchangeId(id.0 & !STREAMABLE_TAG))
}

/// Calls `$call` on the running transport with `$id` as it knows it (a Streamable id
/// untagged; an id of another transport is not the Streamable client's and is dropped).
macro_rules! with_id {
    ($wire:expr, $id:expr, |$c:ident, $i:ident| $call:expr) => {
        match &mut $wire.transport {
            Transport::Auto($c) => {
                let $i = $id;
                $call
            }
            Transport::Sse($c) => {
                let $i = $id;
                $call
            }
            Transport::Streamable($c) => {
                if let Some($i) = untag($id) {
                    $call
                }
            }
        }
    };
}

impl ClientTransport for Wire {
    type Event = AnyEvent;

    fn handle_transmit(&mut self, now: Instant, frame: Bytes, kind: TransmitKind) {
        self.now = now;
        match &mut self.transport {
            Transport::Auto(c) => c.handle_transmit(now, frame, kind),
            Transport::Sse(c) => c.handle_transmit(now, frame, kind),
            Transport::Streamable(c) => c.handle_transmit(now, frame, kind),
        }
    }

    fn handle_response_head<'a>(
        &mut self,
        now: Instant,
        id: ExchangeId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) {
        self.now = now;
        with_id!(self, id, |c, i| c
            .handle_response_head(now, i, status, headers));
    }

    fn handle_response_body(&mut self, now: Instant, id: ExchangeId, chunk: Bytes) {
        self.now = now;
        with_id!(self, id, |c, i| c.handle_response_body(now, i, chunk));
    }

    fn handle_response_end(&mut self, now: Instant, id: ExchangeId) {
        self.now = now;
        with_id!(self, id, |c, i| c.handle_response_end(now, i));
    }

    fn handle_response_failed(&mut self, now: Instant, id: ExchangeId, reason: &str) {
        self.now = now;
        with_id!(self, id, |c, i| c.handle_response_failed(now, i, reason));
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        match &mut self.transport {
            Transport::Auto(c) => c.handle_timeout(now),
            Transport::Sse(c) => c.handle_timeout(now),
            Transport::Streamable(c) => c.handle_timeout(now),
        }
    }

    /// Ends the transport (Streamable: DELETE of the session; HTTP+SSE: the SSE GET dropped).
    fn close(&mut self, now: Instant) {
        self.now = now;
        match &mut self.transport {
            Transport::Auto(c) => c.close(now),
            Transport::Sse(c) => c.close(now),
            Transport::Streamable(c) => c.close(now),
        }
    }

    fn poll_action(&mut self) -> Option<Action> {
        self.hand_off();
        if let Some(action) = self.actions.pop_front() {
            return Some(action);
        }
        match &mut self.transport {
            Transport::Auto(c) => c.poll_action(),
            Transport::Sse(c) => c.poll_action(),
            Transport::Streamable(c) => c.poll_action().map(|action| match action {
                Action::Send(mut request) => {
                    request.id = ExchangeId(request.id.0 | STREAMABLE_TAG);
                    Action::Send(request)
                }
                Action::Abort(id) => Action::Abort(ExchangeId(id.0 | STREAMABLE_TAG)),
            }),
        }
    }

    fn poll_frame(&mut self) -> Option<(Bytes, Option<Incoming>)> {
        if let Some(frame) = self.frames.pop_front() {
            return Some(frame);
        }
        match &mut self.transport {
            Transport::Auto(c) => c.poll_frame(),
            Transport::Sse(c) => c.poll_frame(),
            Transport::Streamable(c) => c.poll_frame(),
        }
    }

    fn poll_event(&mut self) -> Option<AnyEvent> {
        if let Some(event) = self.events.pop_front() {
            return Some(AnyEvent::Wire(event));
        }
        match &mut self.transport {
            Transport::Auto(c) => c.poll_event().map(AnyEvent::Wire),
            Transport::Sse(c) => c.poll_event().map(AnyEvent::Wire),
            Transport::Streamable(c) => c.poll_event().map(AnyEvent::Streamable),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match &self.transport {
            Transport::Auto(c) => c.poll_timeout(),
            Transport::Sse(c) => c.poll_timeout(),
            Transport::Streamable(c) => c.poll_timeout(),
        }
    }

    /// Whether closing is complete (only the Streamable DELETE takes time).
    fn is_closed(&self) -> bool {
        match &self.transport {
            Transport::Auto(c) => c.is_closed(),
            Transport::Sse(c) => c.is_closed(),
            Transport::Streamable(c) => c.is_closed(),
        }
    }
}
