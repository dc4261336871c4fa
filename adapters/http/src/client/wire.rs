//! The three client transports the auto-detecting client may run, behind one surface: the
//! detector ([`AutoClient`], which also runs the legacy client after a fallback), the legacy
//! HTTP+SSE client when forced, and the Streamable HTTP client (forced, or taking over after
//! detection). Requests of the first two are [`OutgoingRequest`]s keyed by [`RequestKey`];
//! the Streamable client's are [`ClientAction`]s keyed by [`ExchangeId`]. Both travel to the
//! exchange tasks as `ExchangeId`s, the Streamable ones with [`STREAMABLE_TAG`] set.

use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::http::legacy::{
    AutoClient, ClientEvent as WireEvent, LegacyClient, OutgoingRequest, RequestKey, SendError,
};
use mcp_sansio::http::{
    ClientAction, ExchangeId, HttpClient, HttpClientConfig, HttpClientRequest, TransportEvent,
};
use mcp_sansio::jsonrpc::Incoming;
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
    /// Perform a request of the detector or the legacy client.
    Outgoing(OutgoingRequest),
    /// Perform a request of the Streamable client.
    Streamable(HttpClientRequest),
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
    /// Hands one outgoing frame to the transport; `Err` when it refused it.
    pub(crate) fn send(
        &mut self,
        now: Instant,
        frame: Bytes,
        kind: TransmitKind,
    ) -> Result<(), SendError> {
        match self {
            Wire::Auto(c) => c.handle_frame(frame),
            Wire::Legacy(c) => c.handle_frame(frame),
            Wire::Streamable(c) => {
                c.handle_transmit(now, frame, kind);
                Ok(())
            }
        }
    }

    /// The next thing to do, if any.
    pub(crate) fn poll(&mut self) -> Option<Step> {
        match self {
            Wire::Auto(c) => c
                .poll_request()
                .map(Step::Outgoing)
                .or_else(|| c.poll_abort().map(|k| Step::Abort(k.0)))
                .or_else(|| c.poll_frame().map(|f| Step::Frame(f, None)))
                .or_else(|| c.poll_event().map(Step::Event)),
            Wire::Legacy(c) => c
                .poll_request()
                .map(Step::Outgoing)
                .or_else(|| c.poll_abort().map(|k| Step::Abort(k.0)))
                .or_else(|| c.poll_frame().map(|f| Step::Frame(f, None)))
                .or_else(|| c.poll_event().map(Step::Event)),
            Wire::Streamable(c) => c
                .poll_action()
                .map(|action| match action {
                    ClientAction::Send(mut request) => {
                        request.id = ExchangeId(request.id.0 | STREAMABLE_TAG);
                        Step::Streamable(request)
                    }
                    ClientAction::Abort(id) => Step::Abort(id.0 | STREAMABLE_TAG),
                })
                .or_else(|| {
                    c.poll_frame_decoded()
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
    pub(crate) fn head(
        &mut self,
        now: Instant,
        id: u64,
        status: u16,
        headers: &[(String, String)],
    ) {
        match self {
            Wire::Auto(c) => c.handle_response_head(now, RequestKey(id), status, headers),
            Wire::Legacy(c) => c.handle_response_head(RequestKey(id), status, headers),
            Wire::Streamable(c) => {
                let Some(id) = untag(id) else { return };
                let headers = headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
                c.handle_response_head(now, id, status, headers);
            }
        }
    }

    /// A body chunk of exchange `id`.
    pub(crate) fn body(&mut self, now: Instant, id: u64, chunk: &[u8]) {
        match self {
            Wire::Auto(c) => c.handle_response_body(RequestKey(id), chunk),
            Wire::Legacy(c) => c.handle_response_body(RequestKey(id), chunk),
            Wire::Streamable(c) => {
                if let Some(id) = untag(id) {
                    c.handle_response_body(now, id, chunk);
                }
            }
        }
    }

    /// Exchange `id` ended (`failure`: it broke or never got a response).
    pub(crate) fn end(&mut self, now: Instant, id: u64, failure: Option<&str>) {
        match (self, failure) {
            (Wire::Auto(c), None) => c.handle_response_end(RequestKey(id)),
            (Wire::Auto(c), Some(_)) => c.handle_response_failed(RequestKey(id)),
            (Wire::Legacy(c), None) => c.handle_response_end(RequestKey(id)),
            (Wire::Legacy(c), Some(_)) => c.handle_response_failed(RequestKey(id)),
            (Wire::Streamable(c), failure) => {
                let Some(id) = untag(id) else { return };
                match failure {
                    None => c.handle_response_end(now, id),
                    Some(reason) => c.handle_response_failed(now, id, reason),
                }
            }
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
            Wire::Auto(c) => c.close(),
            Wire::Legacy(c) => c.close(),
            Wire::Streamable(c) => c.close(now),
        }
    }

    /// Whether closing is complete (only the Streamable DELETE takes time).
    pub(crate) fn is_closed(&self) -> bool {
        match self {
            Wire::Streamable(c) => c.is_closed(),
            _ => true,
        }
    }
}

/// The Streamable exchange id of a tagged key.
fn untag(id: u64) -> Option<ExchangeId> {
    (id & STREAMABLE_TAG != 0).then_some(ExchangeId(id & !STREAMABLE_TAG))
}
