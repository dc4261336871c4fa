//! Transport auto-detection for clients, per the 2025-03-26 backwards-compatibility section:
//! POST the `initialize` request to the URL (Streamable HTTP); on 400, 404 or 405, GET the
//! same URL and wait for the HTTP+SSE `endpoint` event. The outcome is reported as
//! [`TransportEvent::Detected`].
//!
//! On Streamable HTTP, the probe's response (the `initialize` result, JSON or SSE) comes out
//! of `poll_frame` like any frame, and [`AutoClient::take_handoff`] gives the session id and
//! the frames queued meanwhile to the Streamable client that takes over from there. On the
//! HTTP+SSE transport, the `AutoClient` keeps running the [`SseTransportClient`] itself. It follows
//! the client contract of [`crate::outgoing`], like the clients it runs.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::Bytes;

use super::client::{next_event, request_errors, SseTransportClient};
use super::client_types::{TransportCloseReason, TransportKind};
use super::response_fields::ResponseFields;
use crate::framing::SseDecoder;
use crate::http::accepts;
use crate::http::client::HttpClientConfig;
use crate::http::client::TransportEvent;
use crate::http::HttpMethod;
use crate::http::HttpText;
use crate::jsonrpc::{decode, Incoming, Message};
use crate::outgoing::{Action, ExchangeId, InboundFrame, OutgoingRequest};
use crate::session::TransmitKind;
use crate::url::{HttpUrl, UrlError};

/// The probe POST's id; the HTTP+SSE client's ids start above it.
const PROBE: ExchangeId = ExchangeId(0);

/// What the Streamable HTTP client needs to take over after detection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamableHandoff {
    /// The MCP endpoint URL.
    pub url: String,
    /// The `Mcp-Session-Id` the server assigned at `initialize`, if any.
    pub session_id: Option<String>,
    /// Frames given after `initialize`, in order, not sent yet.
    pub pending: Vec<Bytes>,
    /// The `initialize` request the probe carried (replayed if the session expires).
    pub init_frame: Bytes,
    /// The `protocolVersion` of the `initialize` result, when the probe's response held one.
    pub protocol_version: Option<String>,
}

#[derive(Debug)]
enum Phase {
    /// Waiting for the `initialize` frame.
    Start,
    /// The probe POST is out; `frame` is the `initialize` to replay on the HTTP+SSE transport.
    Probing {
        frame: Bytes,
    },
    /// Streamable HTTP: reading the probe's response body (`init`: the probe's frame).
    Streamable {
        sse: bool,
        done: bool,
        init: Bytes,
    },
    /// HTTP+SSE (detected once its `Ready` event came).
    SseTransport(Box<SseTransportClient>),
    Closed,
}

/// A client transport that finds out which HTTP transport the server at a URL speaks.
#[derive(Debug)]
pub struct AutoClient {
    url: HttpUrl,
    config: HttpClientConfig,
    phase: Phase,
    session_id: Option<String>,
    /// The negotiated version, read from the probe's `initialize` result.
    protocol_version: Option<String>,
    /// Frames given after `initialize` while probing (or after the Streamable verdict).
    pending: VecDeque<Bytes>,
    actions: VecDeque<Action>,
    /// When the probe gives up waiting for its response head.
    probe_deadline: Option<Instant>,
    events: VecDeque<TransportEvent>,
    inbound: VecDeque<Bytes>,
    decoder: SseDecoder,
    json: Vec<u8>,
    handed_off: bool,
}

impl AutoClient {
    /// A detector for the server at `url` (absolute `http(s)`). Nothing is sent before the
    /// first frame, which must be the `initialize` request.
    pub fn new(url: &str, config: HttpClientConfig) -> Result<AutoClient, UrlError> {
        Ok(AutoClient {
            url: HttpUrl::parse(url)?,
            decoder: SseDecoder::new(config.max_event_size),
            config,
            phase: Phase::Start,
            session_id: None,
            protocol_version: None,
            pending: VecDeque::new(),
            actions: VecDeque::new(),
            probe_deadline: None,
            events: VecDeque::new(),
            inbound: VecDeque::new(),
            json: Vec::new(),
            handed_off: false,
        })
    }

    /// The transport found so far.
    pub fn detected(&self) -> Option<TransportKind> {
        match &self.phase {
            Phase::Streamable { .. } => Some(TransportKind::StreamableHttp),
            Phase::SseTransport(c) if c.post_url().is_some() => Some(TransportKind::SseTransport),
            _ => None,
        }
    }

    /// The running HTTP+SSE client, after a fallback.
    pub fn sse_transport(&self) -> Option<&SseTransportClient> {
        match &self.phase {
            Phase::SseTransport(c) => Some(c),
            _ => None,
        }
    }

    /// One message the client session transmitted. The first must be the `initialize`
    /// request; later ones wait for the verdict. A request refused (closed, too many waiting,
    /// handed off to the Streamable client) is answered with an error frame at once.
    pub fn handle_transmit(&mut self, now: Instant, frame: Bytes, kind: TransmitKind) {
        let refused = match &mut self.phase {
            Phase::Closed => Some("the HTTP transport is closed"),
            Phase::SseTransport(c) => {
                c.handle_transmit(now, frame, kind);
                return;
            }
            Phase::Start => {
                let is_init = matches!(decode(&frame),
                    Ok(Incoming::Single(Message::Request(r))) if r.method == "initialize");
                if is_init {
                    return self.probe(now, frame);
                }
                self.close_with(TransportCloseReason::NotInitialize);
                Some("the first message must be the initialize request")
            }
            _ if self.handed_off => Some("the Streamable HTTP client took over the session"),
            // One slot stays free for the `initialize` replayed on a fallback.
            _ if self.pending.len() + 1 >= self.config.max_pending_frames => {
                Some("too many messages wait for transport detection")
            }
            _ => None,
        };
        match refused {
            Some(reason) if kind == TransmitKind::Request => {
                for error in request_errors(&frame, reason) {
                    if self.inbound.len() < self.config.max_inbound_frames {
                        self.inbound.push_back(error);
                    }
                }
            }
            Some(_) => {}
            None => self.pending.push_back(frame),
        }
    }

    /// After `Detected(StreamableHttp)` and the end of the probe's response: what the
    /// Streamable client needs to continue. Once only; later frames are refused.
    pub fn take_handoff(&mut self) -> Option<StreamableHandoff> {
        let Phase::Streamable {
            done: true,
            ref init,
            ..
        } = self.phase
        else {
            return None;
        };
        if self.handed_off {
            return None;
        }
        self.handed_off = true;
        Some(StreamableHandoff {
            url: self.url.to_string(),
            session_id: self.session_id.clone(),
            pending: self.pending.drain(..).collect(),
            init_frame: init.clone(),
            protocol_version: self.protocol_version.clone(),
        })
    }

    /// The next request to perform or exchange to abandon.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        if let Some(a) = self.actions.pop_front() {
            return Some(a);
        }
        match &mut self.phase {
            Phase::SseTransport(c) => c.poll_action(),
            _ => None,
        }
    }

    /// The next frame received from the server (the transport decodes none itself).
    #[must_use]
    pub fn poll_frame(&mut self) -> Option<InboundFrame> {
        if let Some(f) = self.inbound.pop_front() {
            return Some((f, None));
        }
        match &mut self.phase {
            Phase::SseTransport(c) => c.poll_frame(),
            _ => None,
        }
    }

    /// The next event: `Detected` once, then the HTTP+SSE client's events.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<TransportEvent> {
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        let Phase::SseTransport(c) = &mut self.phase else {
            return None;
        };
        let event = c.poll_event()?;
        if matches!(event, TransportEvent::Ready { .. }) {
            // The `endpoint` event is the proof of an HTTP+SSE server.
            self.events.push_back(event);
            return Some(TransportEvent::Detected(TransportKind::SseTransport));
        }
        Some(event)
    }

    /// The next deadline: the probe's response head, then the HTTP+SSE client's.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.phase {
            Phase::SseTransport(c) => c.poll_timeout(),
            Phase::Probing { .. } => self.probe_deadline,
            _ => None,
        }
    }

    /// Fires a due deadline: a probe without an answer in time closes the transport.
    pub fn handle_timeout(&mut self, now: Instant) {
        match &mut self.phase {
            Phase::SseTransport(c) => c.handle_timeout(now),
            Phase::Probing { .. } if self.probe_deadline.is_some_and(|d| d <= now) => {
                self.close_with(TransportCloseReason::ProbeTimeout)
            }
            _ => {}
        }
    }

    /// Whether the transport is over.
    pub fn is_closed(&self) -> bool {
        match &self.phase {
            Phase::Closed => true,
            Phase::SseTransport(c) => c.is_closed(),
            _ => false,
        }
    }

    /// The status and headers of response `id`; `now` starts the fallback GET's clock.
    pub fn handle_response_head<'a>(
        &mut self,
        now: Instant,
        id: ExchangeId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) {
        if id != PROBE {
            if let Phase::SseTransport(c) = &mut self.phase {
                c.handle_response_head(now, id, status, headers);
            }
            return;
        }
        let Phase::Probing { frame } = &self.phase else {
            return;
        };
        self.probe_deadline = None;
        let ResponseFields {
            content_type,
            location,
            session_id,
        } = ResponseFields::of(headers);
        match status {
            200..=299 => {
                self.session_id = session_id.map(str::to_owned);
                let sse = content_type.is_some_and(|ct| accepts(ct, "text/event-stream"));
                let init = frame.clone();
                self.phase = Phase::Streamable {
                    sse,
                    done: false,
                    init,
                };
                self.events
                    .push_back(TransportEvent::Detected(TransportKind::StreamableHttp));
            }
            400 | 404 | 405 => {
                let frame = frame.clone();
                self.actions.push_back(Action::Abort(PROBE));
                self.fall_back(now, frame);
            }
            other => {
                self.close_with(TransportCloseReason::for_status(other, location));
            }
        }
    }

    /// A chunk of response body `id`.
    pub fn handle_response_body(&mut self, now: Instant, id: ExchangeId, data: Bytes) {
        match &mut self.phase {
            Phase::SseTransport(c) if id != PROBE => c.handle_response_body(now, id, data),
            Phase::Streamable {
                sse, done: false, ..
            } if id == PROBE => {
                if *sse {
                    self.decoder.push(&data);
                    self.drain_sse();
                } else if self.json.len() + data.len() <= self.config.max_event_size {
                    self.json.extend_from_slice(&data);
                } else {
                    self.json.clear();
                    let limit = self.config.max_event_size;
                    self.close_with(TransportCloseReason::TooLarge { limit });
                }
            }
            _ => {}
        }
    }

    /// Response `id` is complete.
    pub fn handle_response_end(&mut self, now: Instant, id: ExchangeId) {
        match &mut self.phase {
            Phase::SseTransport(c) if id != PROBE => c.handle_response_end(now, id),
            Phase::Streamable { sse, done, .. } if id == PROBE && !*done => {
                *done = true;
                if !*sse && !self.json.is_empty() {
                    let body = Bytes::from(std::mem::take(&mut self.json));
                    self.note_version(&body);
                    self.inbound.push_back(body);
                }
            }
            _ => {}
        }
    }

    /// Request `id` failed without a (complete) response.
    pub fn handle_response_failed(&mut self, now: Instant, id: ExchangeId, reason: &str) {
        match &mut self.phase {
            Phase::SseTransport(c) if id != PROBE => c.handle_response_failed(now, id, reason),
            Phase::Probing { .. } | Phase::Streamable { done: false, .. } if id == PROBE => {
                self.close_with(TransportCloseReason::RequestFailed)
            }
            _ => {}
        }
    }

    /// Ends the transport (an HTTP+SSE client closes its stream).
    pub fn close(&mut self, now: Instant) {
        match &mut self.phase {
            Phase::SseTransport(c) => c.close(now),
            _ => self.close_with(TransportCloseReason::Local),
        }
    }

    fn probe(&mut self, now: Instant, frame: Bytes) {
        self.actions.push_back(Action::Send(OutgoingRequest {
            id: PROBE,
            method: HttpMethod::Post,
            url: Some(self.url.to_string().into()),
            headers: vec![
                (
                    "Accept",
                    HttpText::from_static("application/json, text/event-stream"),
                ),
                ("Content-Type", HttpText::from_static("application/json")),
            ],
            named_headers: Vec::new(),
            body: frame.clone(),
        }));
        self.probe_deadline = now.checked_add(self.config.post_timeout);
        self.phase = Phase::Probing { frame };
    }

    fn fall_back(&mut self, now: Instant, init: Bytes) {
        let url = self.url.to_string();
        let mut client = match SseTransportClient::new(&url, self.config.clone(), now, PROBE.0 + 1)
        {
            Ok(c) => c,
            Err(_) => {
                let uri = crate::http::quote_peer_text(&url);
                return self.close_with(TransportCloseReason::InvalidEndpoint { uri });
            }
        };
        // Both fit: the pending queue has the same bound as the client's.
        client.handle_transmit(now, init, TransmitKind::Request);
        for frame in std::mem::take(&mut self.pending) {
            let kind = transmit_kind(&frame);
            client.handle_transmit(now, frame, kind);
        }
        self.phase = Phase::SseTransport(Box::new(client));
    }

    fn drain_sse(&mut self) {
        while let Some(item) = next_event(&mut self.decoder, self.config.max_event_size) {
            let event = match item {
                Ok(event) => event,
                Err(too_large) => return self.close_with(too_large),
            };
            let is_message = matches!(event.event.as_deref(), None | Some("message"));
            if !is_message || event.data.is_empty() {
                continue;
            }
            if self.inbound.len() >= self.config.max_inbound_frames {
                return self.close_with(TransportCloseReason::InboundOverflow);
            }
            self.note_version(&event.data);
            self.inbound.push_back(event.data);
        }
    }

    /// Keeps the `protocolVersion` of an `initialize` result seen on the probe's response.
    fn note_version(&mut self, frame: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Envelope {
            result: Option<InitResult>,
        }
        #[derive(serde::Deserialize)]
        struct InitResult {
            #[serde(rename = "protocolVersion")]
            protocol_version: String,
        }
        if self.protocol_version.is_some() {
            return;
        }
        if let Ok(Envelope {
            result: Some(result),
        }) = serde_json::from_slice::<Envelope>(frame)
        {
            self.protocol_version = Some(result.protocol_version);
        }
    }

    fn close_with(&mut self, reason: TransportCloseReason) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        if matches!(
            self.phase,
            Phase::Probing { .. } | Phase::Streamable { done: false, .. }
        ) {
            self.actions.push_back(Action::Abort(PROBE));
        }
        // The probe's `initialize` is answered too, with why: its caller learns what broke.
        let probe = match std::mem::replace(&mut self.phase, Phase::Closed) {
            Phase::Probing { frame } => Some(frame),
            Phase::Streamable {
                done: false, init, ..
            } => Some(init),
            _ => None,
        };
        self.probe_deadline = None;
        self.actions.retain(|a| matches!(a, Action::Abort(_)));
        let message = format!("the HTTP transport closed: {reason}");
        for frame in probe.into_iter().chain(std::mem::take(&mut self.pending)) {
            for error in request_errors(&frame, &message) {
                if self.inbound.len() < self.config.max_inbound_frames {
                    self.inbound.push_back(error);
                }
            }
        }
        self.events.push_back(TransportEvent::Closed(reason));
    }
}

crate::outgoing::client_transport_by_inherent_methods!(AutoClient, TransportEvent);

/// What a frame the client session transmitted is (requests by their `id` and `method`).
pub(crate) fn transmit_kind(frame: &Bytes) -> TransmitKind {
    match crate::jsonrpc::decode_message(frame) {
        Ok(Message::Request(_)) => TransmitKind::Request,
        Ok(Message::Notification(_)) => TransmitKind::Notification,
        _ => TransmitKind::Response,
    }
}
