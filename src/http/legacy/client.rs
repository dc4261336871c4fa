//! The legacy HTTP+SSE client transport (2024-11-05), sans IO: it asks for a GET of the SSE
//! URL, waits for the `endpoint` event, resolves it (same origin only), then turns every
//! outgoing frame into a POST there and every `message` event into an incoming frame.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use bytes::Bytes;
use serde_json::json;

use super::client_types::{
    ClientConfig, ClientEvent, CloseReason, OutgoingRequest, RequestKey, SendError,
};
use super::url::{HttpUrl, UrlError};
use crate::framing::sse::{SseDecoder, SseItem};
use crate::http::headers::accepts;
use crate::http::types::{HttpMethod, HttpRequestHead};
use crate::jsonrpc::{decode, Incoming, Message};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// GET asked for; waiting for its head or the `endpoint` event.
    AwaitingEndpoint,
    /// POSTing to `post_url`.
    Ready,
    Closed,
}

/// One legacy client connection: the SSE stream and the POSTs of one session.
#[derive(Debug)]
pub struct LegacyClient {
    config: ClientConfig,
    sse_url: HttpUrl,
    post_url: Option<HttpUrl>,
    state: State,
    get_key: RequestKey,
    next_key: u64,
    decoder: SseDecoder,
    deadline: Option<Instant>,
    /// Frames given before the `endpoint` event.
    held: VecDeque<Bytes>,
    requests: VecDeque<OutgoingRequest>,
    /// POSTs asked for and not answered yet, with their frame (to answer its requests with
    /// an error if the POST fails).
    posts: HashMap<RequestKey, Bytes>,
    inbound: VecDeque<Bytes>,
    events: VecDeque<ClientEvent>,
    aborts: VecDeque<RequestKey>,
}

impl LegacyClient {
    /// A client of the SSE endpoint at `sse_url` (absolute `http(s)` URL); it asks for the GET
    /// at once. Its request keys count from `first_key` (so a caller can keep its own below).
    pub fn new(
        sse_url: &str,
        config: ClientConfig,
        now: Instant,
        first_key: u64,
    ) -> Result<LegacyClient, UrlError> {
        let sse_url = HttpUrl::parse(sse_url)?;
        let get_key = RequestKey(first_key);
        let mut head = HttpRequestHead::new(HttpMethod::Get, sse_url.path_and_query.clone())
            .header("Accept", "text/event-stream")
            .header("Cache-Control", "no-cache");
        head.headers.extend(
            config
                .extra_headers
                .iter()
                .map(|(n, v)| (n.into(), v.into())),
        );
        let get = OutgoingRequest {
            key: get_key,
            url: sse_url.to_string(),
            head,
            body: Bytes::new(),
        };
        Ok(LegacyClient {
            decoder: SseDecoder::new(config.max_event_size),
            deadline: now.checked_add(config.endpoint_timeout),
            config,
            sse_url,
            post_url: None,
            state: State::AwaitingEndpoint,
            get_key,
            next_key: first_key + 1,
            held: VecDeque::new(),
            requests: VecDeque::from([get]),
            posts: HashMap::new(),
            inbound: VecDeque::new(),
            events: VecDeque::new(),
            aborts: VecDeque::new(),
        })
    }

    /// The URL messages are POSTed to, once the `endpoint` event came.
    pub fn post_url(&self) -> Option<String> {
        self.post_url.as_ref().map(ToString::to_string)
    }

    /// Whether the transport is over.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// One outgoing JSON-RPC frame (from the session's `poll_transmit`). Held until the
    /// `endpoint` event, then POSTed.
    pub fn handle_frame(&mut self, frame: Bytes) -> Result<(), SendError> {
        if self.state == State::Closed {
            return Err(SendError::Closed);
        }
        if self.held.len() + self.posts.len() >= self.config.max_pending_frames {
            return Err(SendError::Full);
        }
        match self.state {
            State::Ready => self.post(frame),
            _ => self.held.push_back(frame),
        }
        Ok(())
    }

    /// The next HTTP request to perform.
    #[must_use]
    pub fn poll_request(&mut self) -> Option<OutgoingRequest> {
        self.requests.pop_front()
    }

    /// A request the adapter should abandon (the SSE GET after `close`).
    #[must_use]
    pub fn poll_abort(&mut self) -> Option<RequestKey> {
        self.aborts.pop_front()
    }

    /// The next frame received from the server.
    #[must_use]
    pub fn poll_frame(&mut self) -> Option<Bytes> {
        self.inbound.pop_front()
    }

    /// The next event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// The `endpoint` deadline, while waiting for it.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadline
    }

    /// Closes the transport if the `endpoint` event is overdue.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.deadline.is_some_and(|d| d <= now) {
            self.close_with(CloseReason::EndpointTimeout);
        }
    }

    /// The status and headers of response `key`.
    pub fn handle_response_head(
        &mut self,
        key: RequestKey,
        status: u16,
        headers: &[(String, String)],
    ) {
        if key == self.get_key {
            if self.state == State::Closed {
                return;
            }
            let content_type = headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
                .map(|(_, v)| v.as_str());
            if !(200..300).contains(&status) {
                self.close_with(CloseReason::HttpStatus(status));
            } else if content_type.is_some_and(|ct| !accepts(ct, "text/event-stream")) {
                self.close_with(CloseReason::NotEventStream);
            }
        } else if let Some(frame) = self.posts.remove(&key) {
            if !(200..300).contains(&status) {
                self.post_failed(&frame, Some(status));
                if status == 404 {
                    // The server no longer knows the session.
                    self.close_with(CloseReason::HttpStatus(404));
                }
            }
        }
    }

    /// A chunk of response body `key` (only the SSE stream's matter).
    pub fn handle_response_body(&mut self, key: RequestKey, data: &[u8]) {
        if key != self.get_key || self.state == State::Closed {
            return;
        }
        self.decoder.push(data);
        while let Some(item) = self.decoder.poll_item() {
            let Ok(SseItem::Event(event)) = item else {
                continue;
            };
            match event.event.as_deref() {
                Some("endpoint") => self.endpoint(event.data_str()),
                None | Some("message") if !event.data.is_empty() => {
                    if self.inbound.len() >= self.config.max_inbound_frames {
                        self.close_with(CloseReason::InboundOverflow);
                        return;
                    }
                    self.inbound.push_back(event.data);
                }
                _ => {}
            }
            if self.state == State::Closed {
                return;
            }
        }
    }

    /// Response `key` is complete.
    pub fn handle_response_end(&mut self, key: RequestKey) {
        if key == self.get_key {
            self.close_with(CloseReason::StreamEnded);
        } else {
            self.posts.remove(&key);
        }
    }

    /// Request `key` failed without a (complete) response.
    pub fn handle_response_failed(&mut self, key: RequestKey) {
        if key == self.get_key {
            self.close_with(CloseReason::RequestFailed);
        } else if let Some(frame) = self.posts.remove(&key) {
            self.post_failed(&frame, None);
        }
    }

    /// Ends the transport: the adapter is asked to abandon the SSE GET.
    pub fn close(&mut self) {
        self.close_with(CloseReason::Local);
    }

    fn endpoint(&mut self, data: &str) {
        if self.state != State::AwaitingEndpoint {
            return; // Only the first `endpoint` event counts.
        }
        match self.sse_url.resolve_same_origin(data) {
            Ok(url) => {
                self.events.push_back(ClientEvent::Ready {
                    post_url: url.to_string(),
                });
                self.post_url = Some(url);
                self.state = State::Ready;
                self.deadline = None;
                while let Some(frame) = self.held.pop_front() {
                    self.post(frame);
                }
            }
            Err(UrlError::CrossOrigin) => self.close_with(CloseReason::CrossOriginEndpoint),
            Err(UrlError::Invalid) => self.close_with(CloseReason::InvalidEndpoint),
        }
    }

    fn post(&mut self, frame: Bytes) {
        let Some(url) = &self.post_url else {
            return;
        };
        let key = RequestKey(self.next_key);
        self.next_key += 1;
        let mut head = HttpRequestHead::new(HttpMethod::Post, url.path_and_query.clone())
            .header("Content-Type", "application/json");
        head.headers.extend(
            self.config
                .extra_headers
                .iter()
                .map(|(n, v)| (n.into(), v.into())),
        );
        self.requests.push_back(OutgoingRequest {
            key,
            url: url.to_string(),
            head,
            body: frame.clone(),
        });
        self.posts.insert(key, frame);
    }

    /// Reports a failed POST and answers each request it carried with an error frame.
    fn post_failed(&mut self, frame: &Bytes, status: Option<u16>) {
        self.events.push_back(ClientEvent::PostFailed { status });
        let message = match status {
            Some(s) => format!("the message endpoint answered HTTP {s}"),
            None => "the message POST failed".to_string(),
        };
        let ids = match decode(frame) {
            Ok(Incoming::Single(Message::Request(r))) => vec![r.id],
            Ok(Incoming::Batch(items)) => items
                .into_iter()
                .filter_map(|m| match m {
                    Ok(Message::Request(r)) => Some(r.id),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        for id in ids {
            let error = json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32000, "message": message}});
            if self.inbound.len() < self.config.max_inbound_frames {
                self.inbound.push_back(Bytes::from(error.to_string()));
            }
        }
    }

    fn close_with(&mut self, reason: CloseReason) {
        if self.state == State::Closed {
            return;
        }
        self.state = State::Closed;
        self.deadline = None;
        self.held.clear();
        self.requests.clear();
        self.aborts.push_back(self.get_key);
        self.events.push_back(ClientEvent::Closed(reason));
    }
}
