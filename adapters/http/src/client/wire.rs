//! The three client transports the auto-detecting client may run, behind one surface: the
//! detector ([`AutoClient`], which also runs the legacy client after a fallback), the legacy
//! HTTP+SSE client when forced, and the Streamable HTTP client (forced, or taking over after
//! detection). All three follow the core's one client contract ([`ClientTransport`]); the
//! Streamable client's exchange ids carry [`STREAMABLE_TAG`], so they never meet the
//! detector's.

use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::http::legacy::{AutoClient, ClientEvent as WireEvent, LegacyClient};
use mcp_sansio::http::{HttpClient, HttpClientConfig, TransportEvent};
use mcp_sansio::jsonrpc::Incoming;
use mcp_sansio::outgoing::{Action, ClientTransport, ExchangeId, OutgoingRequest};
use mcp_sansio::session::TransmitKind;

/// Set on the exchange ids of the Streamable client, so they never meet the detector's keys.
pub(crate) const STREAMABLE_TAG: u64 = 1 << 63;

/// The running transport.
pub(crate) enum Wire {
    Auto(Box<AutoClient>),
    Legacy(Box<LegacyClient>),
    Streamable(Box<HttpClient>),
}

/// One thing for the loop to do.
pub(crate) enum Step {
    /// Perform a request (a Streamable one with its id tagged).
    Send(OutgoingRequest),
    /// Drop exchange (tagged id) and its connection.
    Abort(u64),
    /// A frame for the client machine, with its decoding when the transport made one (the
    /// Streamable client decodes answers to match them to requests).
    Frame(Bytes, Option<Incoming>),
    /// An event of the detector or the legacy client.
    Event(WireEvent),
    /// An event of the Streamable client.
    Transport(TransportEvent),
}

impl Wire {
    /// Hands one outgoing frame to the transport (one it refuses comes back as an error frame).
    pub(crate) fn send(&mut self, now: Instant, frame: Bytes, kind: TransmitKind) {
        match self {
            Wire::Auto(c) => c.handle_transmit(now, frame, kind),
            Wire::Legacy(c) => c.handle_transmit(now, frame, kind),
            Wire::Streamable(c) => c.handle_transmit(now, frame, kind),
        }
    }

    /// The next thing to do, if any.
    pub(crate) fn poll(&mut self) -> Option<Step> {
        match self {
            Wire::Auto(c) => poll_legacy(c.as_mut()),
            Wire::Legacy(c) => poll_legacy(c.as_mut()),
            Wire::Streamable(c) => c
                .poll_action()
                .map(|action| match action {
                    Action::Send(mut request) => {
                        request.id = ExchangeId(request.id.0 | STREAMABLE_TAG);
                        Step::Send(request)
                    }
                    Action::Abort(id) => Step::Abort(id.0 | STREAMABLE_TAG),
                })
                .or_else(|| {
                    c.poll_frame()
                        .map(|(frame, decoded)| Step::Frame(frame, decoded))
                })
                .or_else(|| c.poll_event().map(Step::Transport)),
        }
    }

    /// After detection found Streamable HTTP and read the probe's response: the Streamable
    /// client takes over the session. Whether it did.
    pub(crate) fn hand_off(&mut self, now: Instant, config: &HttpClientConfig) -> bool {
        let Wire::Auto(auto) = self else {
            return false;
        };
        let Some(handoff) = auto.take_handoff() else {
            return false;
        };
        let client = HttpClient::from_handoff(config.clone(), now, handoff);
        *self = Wire::Streamable(Box::new(client));
        true
    }

    /// The response head of exchange `id`.
    pub(crate) fn head<'a>(
        &mut self,
        now: Instant,
        id: u64,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) {
        match self {
            Wire::Auto(c) => c.handle_response_head(now, ExchangeId(id), status, headers),
            Wire::Legacy(c) => c.handle_response_head(now, ExchangeId(id), status, headers),
            Wire::Streamable(c) => {
                if let Some(id) = untag(id) {
                    c.handle_response_head(now, id, status, headers);
                }
            }
        }
    }

    /// A body chunk of exchange `id`.
    pub(crate) fn body(&mut self, now: Instant, id: u64, chunk: Bytes) {
        match self {
            Wire::Auto(c) => c.handle_response_body(now, ExchangeId(id), chunk),
            Wire::Legacy(c) => c.handle_response_body(now, ExchangeId(id), chunk),
            Wire::Streamable(c) => {
                if let Some(id) = untag(id) {
                    c.handle_response_body(now, id, chunk);
                }
            }
        }
    }

    /// Exchange `id` ended (`failure`: it broke or never got a response).
    pub(crate) fn end(&mut self, now: Instant, id: u64, failure: Option<&str>) {
        let id = match self {
            Wire::Streamable(_) => match untag(id) {
                Some(id) => id,
                None => return,
            },
            _ => ExchangeId(id),
        };
        match (self, failure) {
            (Wire::Auto(c), None) => c.handle_response_end(now, id),
            (Wire::Auto(c), Some(why)) => c.handle_response_failed(now, id, why),
            (Wire::Legacy(c), None) => c.handle_response_end(now, id),
            (Wire::Legacy(c), Some(why)) => c.handle_response_failed(now, id, why),
            (Wire::Streamable(c), None) => c.handle_response_end(now, id),
            (Wire::Streamable(c), Some(why)) => c.handle_response_failed(now, id, why),
        }
    }

    /// The transport's next deadline.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Wire::Auto(c) => c.poll_timeout(),
            Wire::Legacy(c) => c.poll_timeout(),
            Wire::Streamable(c) => c.poll_timeout(),
        }
    }

    /// Fires a due deadline.
    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        match self {
            Wire::Auto(c) => c.handle_timeout(now),
            Wire::Legacy(c) => c.handle_timeout(now),
            Wire::Streamable(c) => c.handle_timeout(now),
        }
    }

    /// Ends the transport (Streamable: DELETE of the session; legacy: the SSE GET dropped).
    pub(crate) fn close(&mut self, now: Instant) {
        match self {
            Wire::Auto(c) => c.close(now),
            Wire::Legacy(c) => c.close(now),
            Wire::Streamable(c) => c.close(now),
        }
    }

    /// Whether closing is complete (only the Streamable DELETE takes time).
    pub(crate) fn is_closed(&self) -> bool {
        match self {
            Wire::Auto(c) => c.is_closed(),
            Wire::Legacy(c) => c.is_closed(),
            Wire::Streamable(c) => c.is_closed(),
        }
    }
}

/// The next step of the detector or the legacy client (their exchange ids are untagged).
fn poll_legacy<T: ClientTransport<Event = WireEvent>>(c: &mut T) -> Option<Step> {
    c.poll_action()
        .map(|action| match action {
            Action::Send(request) => Step::Send(request),
            Action::Abort(id) => Step::Abort(id.0),
        })
        .or_else(|| c.poll_frame().map(|(f, d)| Step::Frame(f, d)))
        .or_else(|| c.poll_event().map(Step::Event))
}

/// The Streamable exchange id of a tagged key.
fn untag(id: u64) -> Option<ExchangeId> {
    (id & STREAMABLE_TAG != 0).then_some(ExchangeId(id & !STREAMABLE_TAG))
}
