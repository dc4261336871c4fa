//! Transport auto-detection for clients, per the 2025-03-26 backwards-compatibility section:
//! POST the `initialize` request to the URL (Streamable HTTP); on 400, 404 or 405, GET the
//! same URL and wait for the legacy `endpoint` event. The outcome is reported as
//! [`ClientEvent::Detected`].
//!
//! On Streamable HTTP, the probe's response (the `initialize` result, JSON or SSE) comes out
//! of `poll_frame` like any frame, and [`AutoClient::take_handoff`] gives the session id and
//! the frames queued meanwhile to the Streamable client that takes over from there. On the
//! legacy transport, the `AutoClient` keeps running the [`LegacyClient`] itself.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::Bytes;

use super::client::LegacyClient;
use super::client_types::{
    ClientConfig, ClientEvent, CloseReason, OutgoingRequest, RequestKey, SendError, TransportKind,
};
use super::url::{HttpUrl, UrlError};
use crate::framing::sse::{SseDecoder, SseItem};
use crate::http::headers::accepts;
use crate::http::types::{HttpMethod, HttpRequestHead};
use crate::jsonrpc::{decode, Incoming, Message};

/// The probe POST's key; the legacy client's keys start above it.
const PROBE: RequestKey = RequestKey(0);

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
    /// The probe POST is out; `frame` is the `initialize` to replay on the legacy transport.
    Probing {
        frame: Bytes,
    },
    /// Streamable HTTP: reading the probe's response body (`init`: the probe's frame).
    Streamable {
        sse: bool,
        done: bool,
        init: Bytes,
    },
    /// Legacy HTTP+SSE (detected once its `Ready` event came).
    Legacy(Box<LegacyClient>),
    Closed,
}

/// A client transport that finds out which HTTP transport the server at a URL speaks.
#[derive(Debug)]
pub struct AutoClient {
    url: HttpUrl,
    config: ClientConfig,
    phase: Phase,
    session_id: Option<String>,
    /// The negotiated version, read from the probe's `initialize` result.
    protocol_version: Option<String>,
    /// Frames given after `initialize` while probing (or after the Streamable verdict).
    pending: VecDeque<Bytes>,
    requests: VecDeque<OutgoingRequest>,
    aborts: VecDeque<RequestKey>,
    events: VecDeque<ClientEvent>,
    inbound: VecDeque<Bytes>,
    decoder: SseDecoder,
    json: Vec<u8>,
    handed_off: bool,
}

impl AutoClient {
    /// A detector for the server at `url` (absolute `http(s)`). Nothing is sent before the
    /// first frame, which must be the `initialize` request.
    pub fn new(url: &str, config: ClientConfig) -> Result<AutoClient, UrlError> {
        Ok(AutoClient {
            url: HttpUrl::parse(url)?,
            decoder: SseDecoder::new(config.max_event_size),
            config,
            phase: Phase::Start,
            session_id: None,
            protocol_version: None,
            pending: VecDeque::new(),
            requests: VecDeque::new(),
            aborts: VecDeque::new(),
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
            Phase::Legacy(c) if c.post_url().is_some() => Some(TransportKind::LegacySse),
            _ => None,
        }
    }

    /// The running legacy client, after a fallback.
    pub fn legacy(&self) -> Option<&LegacyClient> {
        match &self.phase {
            Phase::Legacy(c) => Some(c),
            _ => None,
        }
    }

    /// One outgoing frame. The first must be `initialize`; later ones wait for the verdict.
    pub fn handle_frame(&mut self, frame: Bytes) -> Result<(), SendError> {
        match &mut self.phase {
            Phase::Closed => Err(SendError::Closed),
            Phase::Legacy(c) => c.handle_frame(frame),
            Phase::Start => {
                let is_init = matches!(decode(&frame),
                    Ok(Incoming::Single(Message::Request(r))) if r.method == "initialize");
                if !is_init {
                    self.close_with(CloseReason::NotInitialize);
                    return Err(SendError::Closed);
                }
                self.probe(frame);
                Ok(())
            }
            _ if self.handed_off => Err(SendError::HandedOff),
            // One slot stays free for the `initialize` replayed on a fallback.
            _ if self.pending.len() + 1 >= self.config.max_pending_frames => Err(SendError::Full),
            _ => {
                self.pending.push_back(frame);
                Ok(())
            }
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

    /// The next HTTP request to perform.
    #[must_use]
    pub fn poll_request(&mut self) -> Option<OutgoingRequest> {
        if let Some(r) = self.requests.pop_front() {
            return Some(r);
        }
        match &mut self.phase {
            Phase::Legacy(c) => c.poll_request(),
            _ => None,
        }
    }

    /// A request the adapter should abandon.
    #[must_use]
    pub fn poll_abort(&mut self) -> Option<RequestKey> {
        if let Some(k) = self.aborts.pop_front() {
            return Some(k);
        }
        match &mut self.phase {
            Phase::Legacy(c) => c.poll_abort(),
            _ => None,
        }
    }

    /// The next frame received from the server.
    #[must_use]
    pub fn poll_frame(&mut self) -> Option<Bytes> {
        if let Some(f) = self.inbound.pop_front() {
            return Some(f);
        }
        match &mut self.phase {
            Phase::Legacy(c) => c.poll_frame(),
            _ => None,
        }
    }

    /// The next event: `Detected` once, then the legacy client's events.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        let Phase::Legacy(c) = &mut self.phase else {
            return None;
        };
        let event = c.poll_event()?;
        if matches!(event, ClientEvent::Ready { .. }) {
            // The `endpoint` event is the proof of a legacy server.
            self.events.push_back(event);
            return Some(ClientEvent::Detected(TransportKind::LegacySse));
        }
        Some(event)
    }

    /// The next deadline (the legacy `endpoint` wait).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.phase {
            Phase::Legacy(c) => c.poll_timeout(),
            _ => None,
        }
    }

    /// Fires a due deadline.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Phase::Legacy(c) = &mut self.phase {
            c.handle_timeout(now);
        }
    }

    /// The status and headers of response `key`; `now` starts the fallback GET's clock.
    pub fn handle_response_head(
        &mut self,
        now: Instant,
        key: RequestKey,
        status: u16,
        headers: &[(String, String)],
    ) {
        if key != PROBE {
            if let Phase::Legacy(c) = &mut self.phase {
                c.handle_response_head(key, status, headers);
            }
            return;
        }
        let Phase::Probing { frame } = &self.phase else {
            return;
        };
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        match status {
            200..=299 => {
                self.session_id = header("mcp-session-id");
                let sse =
                    header("content-type").is_some_and(|ct| accepts(&ct, "text/event-stream"));
                let init = frame.clone();
                self.phase = Phase::Streamable {
                    sse,
                    done: false,
                    init,
                };
                self.events
                    .push_back(ClientEvent::Detected(TransportKind::StreamableHttp));
            }
            400 | 404 | 405 => {
                let frame = frame.clone();
                self.aborts.push_back(PROBE);
                self.fall_back(now, frame);
            }
            other => self.close_with(CloseReason::HttpStatus(other)),
        }
    }

    /// A chunk of response body `key`.
    pub fn handle_response_body(&mut self, key: RequestKey, data: &[u8]) {
        match &mut self.phase {
            Phase::Legacy(c) if key != PROBE => c.handle_response_body(key, data),
            Phase::Streamable {
                sse, done: false, ..
            } if key == PROBE => {
                if *sse {
                    self.decoder.push(data);
                    self.drain_sse();
                } else if self.json.len() + data.len() <= self.config.max_event_size {
                    self.json.extend_from_slice(data);
                } else {
                    self.json.clear();
                    self.close_with(CloseReason::InboundOverflow);
                }
            }
            _ => {}
        }
    }

    /// Response `key` is complete.
    pub fn handle_response_end(&mut self, key: RequestKey) {
        match &mut self.phase {
            Phase::Legacy(c) if key != PROBE => c.handle_response_end(key),
            Phase::Streamable { sse, done, .. } if key == PROBE && !*done => {
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

    /// Request `key` failed without a (complete) response.
    pub fn handle_response_failed(&mut self, key: RequestKey) {
        match &mut self.phase {
            Phase::Legacy(c) if key != PROBE => c.handle_response_failed(key),
            Phase::Probing { .. } | Phase::Streamable { done: false, .. } if key == PROBE => {
                self.close_with(CloseReason::RequestFailed)
            }
            _ => {}
        }
    }

    /// Ends the transport (a legacy client closes its stream).
    pub fn close(&mut self) {
        match &mut self.phase {
            Phase::Legacy(c) => c.close(),
            _ => self.close_with(CloseReason::Local),
        }
    }

    fn probe(&mut self, frame: Bytes) {
        let mut head = HttpRequestHead::new(HttpMethod::Post, self.url.path_and_query.clone())
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        head.headers.extend(
            self.config
                .extra_headers
                .iter()
                .map(|(n, v)| (n.into(), v.into())),
        );
        self.requests.push_back(OutgoingRequest {
            key: PROBE,
            url: self.url.to_string(),
            head,
            body: frame.clone(),
        });
        self.phase = Phase::Probing { frame };
    }

    fn fall_back(&mut self, now: Instant, init: Bytes) {
        let url = self.url.to_string();
        let mut client = match LegacyClient::new(&url, self.config.clone(), now, PROBE.0 + 1) {
            Ok(c) => c,
            Err(_) => return self.close_with(CloseReason::InvalidEndpoint),
        };
        // Both fit: the pending queue has the same bound as the client's.
        for frame in std::iter::once(init).chain(self.pending.drain(..)) {
            let _ = client.handle_frame(frame);
        }
        self.phase = Phase::Legacy(Box::new(client));
    }

    fn drain_sse(&mut self) {
        while let Some(item) = self.decoder.poll_item() {
            let Ok(SseItem::Event(event)) = item else {
                continue;
            };
            let is_message = matches!(event.event.as_deref(), None | Some("message"));
            if !is_message || event.data.is_empty() {
                continue;
            }
            if self.inbound.len() >= self.config.max_inbound_frames {
                return self.close_with(CloseReason::InboundOverflow);
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

    fn close_with(&mut self, reason: CloseReason) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        if matches!(
            self.phase,
            Phase::Probing { .. } | Phase::Streamable { done: false, .. }
        ) {
            self.aborts.push_back(PROBE);
        }
        self.phase = Phase::Closed;
        self.requests.clear();
        self.pending.clear();
        self.events.push_back(ClientEvent::Closed(reason));
    }
}
