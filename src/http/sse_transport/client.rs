//! The HTTP+SSE client transport (2024-11-05), sans IO: it asks for a GET of the SSE
//! URL, waits for the `endpoint` event, resolves it (same origin only), then turns every
//! outgoing frame into a POST there and every `message` event into an incoming frame. It
//! follows the client contract of [`crate::outgoing`]: a request it cannot carry, or whose
//! POST fails or gets no answer within `post_timeout`, ends with a JSON-RPC error frame.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use bytes::Bytes;
use serde_json::json;

use super::client_types::TransportCloseReason;
use super::response_fields::ResponseFields;
use crate::framing::{SseDecoder, SseEvent, SseItem};
use crate::http::accepts;
use crate::http::client::HttpClientConfig;
use crate::http::client::TransportEvent;
use crate::http::HttpMethod;
use crate::http::HttpText;
use crate::jsonrpc::{decode, Incoming, Message};
use crate::outgoing::{Action, ExchangeId, InboundFrame, OutgoingRequest};
use crate::session::TransmitKind;
use crate::url::{HttpUrl, UrlError};

/// The JSON-RPC error code of the error frames the transport makes for requests it could not
/// deliver (the same as the Streamable client's).
const TRANSPORT_ERROR: i64 = -32000;

/// A POST in flight: its frame (to answer its requests with an error if it fails) and when it
/// gives up waiting for the response head.
#[derive(Debug)]
struct Post {
    frame: Bytes,
    deadline: Option<Instant>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// GET asked for; waiting for its head or the `endpoint` event.
    AwaitingEndpoint,
    /// POSTing to `post_url`.
    Ready,
    Closed,
}

/// One HTTP+SSE client connection: the SSE stream and the POSTs of one session.
#[derive(Debug)]
pub struct SseTransportClient {
    config: HttpClientConfig,
    sse_url: HttpUrl,
    post_url: Option<HttpUrl>,
    state: State,
    get_id: ExchangeId,
    next_id: u64,
    decoder: SseDecoder,
    /// The `endpoint` event's deadline, while waiting for it.
    deadline: Option<Instant>,
    /// Frames given before the `endpoint` event.
    held: VecDeque<Bytes>,
    actions: VecDeque<Action>,
    /// POSTs asked for whose response head has not come yet.
    posts: HashMap<ExchangeId, Post>,
    inbound: VecDeque<Bytes>,
    events: VecDeque<TransportEvent>,
}

impl SseTransportClient {
    /// A client of the SSE endpoint at `sse_url` (absolute `http(s)` URL); it asks for the GET
    /// at once. Its exchange ids count from `first_id` (so a caller can keep its own below).
    pub fn new(
        sse_url: &str,
        config: HttpClientConfig,
        now: Instant,
        first_id: u64,
    ) -> Result<SseTransportClient, UrlError> {
        let sse_url = HttpUrl::parse(sse_url)?;
        let get_id = ExchangeId(first_id);
        let get = OutgoingRequest {
            id: get_id,
            method: HttpMethod::Get,
            url: Some(sse_url.to_string().into()),
            headers: vec![
                ("Accept", HttpText::from_static("text/event-stream")),
                ("Cache-Control", HttpText::from_static("no-cache")),
            ],
            named_headers: Vec::new(),
            body: Bytes::new(),
        };
        Ok(SseTransportClient {
            decoder: SseDecoder::new(config.max_event_size),
            deadline: now.checked_add(config.endpoint_timeout),
            config,
            sse_url,
            post_url: None,
            state: State::AwaitingEndpoint,
            get_id,
            next_id: first_id.saturating_add(1),
            held: VecDeque::new(),
            actions: VecDeque::from([Action::Send(get)]),
            posts: HashMap::new(),
            inbound: VecDeque::new(),
            events: VecDeque::new(),
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

    /// One message the client session transmitted (`poll_transmit`). Held until the
    /// `endpoint` event, then POSTed; a request refused (closed, too many waiting) is answered
    /// with an error frame at once, anything else refused is dropped.
    pub fn handle_transmit(&mut self, now: Instant, frame: Bytes, kind: TransmitKind) {
        let refused = match self.state {
            State::Closed => Some("the HTTP+SSE transport is closed"),
            _ if self.held.len() + self.posts.len() >= self.config.max_pending_frames => {
                Some("too many messages wait for the HTTP+SSE transport")
            }
            _ => None,
        };
        match (refused, self.state) {
            (Some(reason), _) => {
                if kind == TransmitKind::Request {
                    self.answer_with_error(&frame, reason);
                }
            }
            (None, State::Ready) => self.post(now, frame),
            (None, _) => self.held.push_back(frame),
        }
    }

    /// The next request to perform or exchange to abandon (the SSE GET after `close`, a POST
    /// past its timeout).
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The next frame received from the server (the transport decodes none itself).
    #[must_use]
    pub fn poll_frame(&mut self) -> Option<InboundFrame> {
        self.inbound.pop_front().map(|frame| (frame, None))
    }

    /// The next event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<TransportEvent> {
        self.events.pop_front()
    }

    /// The earliest of the `endpoint` deadline and the POST timeouts.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let posts = self.posts.values().filter_map(|p| p.deadline).min();
        [self.deadline, posts].into_iter().flatten().min()
    }

    /// Closes the transport if the `endpoint` event is overdue; fails the POSTs whose response
    /// head is overdue (their requests end with an error frame).
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.deadline.is_some_and(|d| d <= now) {
            self.close_with(TransportCloseReason::EndpointTimeout);
        }
        let mut overdue: Vec<ExchangeId> = self
            .posts
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| *id)
            .collect();
        overdue.sort();
        for id in overdue {
            if let Some(post) = self.posts.remove(&id) {
                self.actions.push_back(Action::Abort(id));
                self.post_failed(&post.frame, None, None);
            }
        }
    }

    /// The status and headers of response `id`.
    pub fn handle_response_head<'a>(
        &mut self,
        _now: Instant,
        id: ExchangeId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) {
        let ResponseFields {
            content_type,
            location,
            ..
        } = ResponseFields::of(headers);
        if id == self.get_id {
            if self.state == State::Closed {
                return;
            }
            if !(200..300).contains(&status) {
                self.close_with(TransportCloseReason::for_status(status, location));
            } else if let Some(ct) = content_type.filter(|ct| !accepts(ct, "text/event-stream")) {
                let content_type = crate::http::quote_peer_text(ct);
                self.close_with(TransportCloseReason::NotEventStream { content_type });
            }
        } else if let Some(post) = self.posts.remove(&id) {
            if !(200..300).contains(&status) {
                let location = location.filter(|_| (300..400).contains(&status));
                self.post_failed(&post.frame, Some(status), location);
                if status == 404 {
                    // The server no longer knows the session.
                    self.close_with(TransportCloseReason::HttpStatus(404));
                }
            }
        }
    }

    /// A chunk of response body `id` (only the SSE stream's matter).
    pub fn handle_response_body(&mut self, now: Instant, id: ExchangeId, chunk: Bytes) {
        if id != self.get_id || self.state == State::Closed {
            return;
        }
        self.decoder.push(&chunk);
        while let Some(item) = next_event(&mut self.decoder, self.config.max_event_size) {
            // An event past `max_event_size` may be a response: dropping it would leave its
            // request waiting for nothing, so the transport closes, naming the limit.
            let event = match item {
                Ok(event) => event,
                Err(too_large) => return self.close_with(too_large),
            };
            match event.event.as_deref() {
                Some("endpoint") => self.endpoint(now, event.data_str()),
                None | Some("message") if !event.data.is_empty() => {
                    if self.inbound.len() >= self.config.max_inbound_frames {
                        self.close_with(TransportCloseReason::InboundOverflow);
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

    /// Response `id` is complete.
    pub fn handle_response_end(&mut self, _now: Instant, id: ExchangeId) {
        if id == self.get_id {
            self.close_with(TransportCloseReason::StreamEnded);
        } else {
            // A POST answered without a head first is over too.
            self.posts.remove(&id);
        }
    }

    /// Request `id` failed without a (complete) response.
    pub fn handle_response_failed(&mut self, _now: Instant, id: ExchangeId, _reason: &str) {
        if id == self.get_id {
            self.close_with(TransportCloseReason::RequestFailed);
        } else if let Some(post) = self.posts.remove(&id) {
            self.post_failed(&post.frame, None, None);
        }
    }

    /// Ends the transport: the adapter is asked to abandon the SSE GET.
    pub fn close(&mut self, _now: Instant) {
        self.close_with(TransportCloseReason::Local);
    }

    fn endpoint(&mut self, now: Instant, data: &str) {
        if self.state != State::AwaitingEndpoint {
            return; // Only the first `endpoint` event counts.
        }
        match self.sse_url.resolve_same_origin(data) {
            Ok(url) => {
                self.events.push_back(TransportEvent::Ready {
                    post_url: url.to_string(),
                });
                self.post_url = Some(url);
                self.state = State::Ready;
                self.deadline = None;
                while let Some(frame) = self.held.pop_front() {
                    self.post(now, frame);
                }
            }
            Err(UrlError::CrossOrigin) => {
                let uri = crate::http::quote_peer_text(data);
                self.close_with(TransportCloseReason::CrossOriginEndpoint { uri });
            }
            Err(UrlError::Invalid) => {
                let uri = crate::http::quote_peer_text(data);
                self.close_with(TransportCloseReason::InvalidEndpoint { uri });
            }
        }
    }

    fn post(&mut self, now: Instant, frame: Bytes) {
        let Some(url) = &self.post_url else {
            return;
        };
        let id = ExchangeId(self.next_id);
        self.next_id = self.next_id.saturating_add(1);
        self.actions.push_back(Action::Send(OutgoingRequest {
            id,
            method: HttpMethod::Post,
            url: Some(url.to_string().into()),
            headers: vec![("Content-Type", HttpText::from_static("application/json"))],
            named_headers: Vec::new(),
            body: frame.clone(),
        }));
        let deadline = now.checked_add(self.config.post_timeout);
        self.posts.insert(id, Post { frame, deadline });
    }

    /// Reports a failed POST and answers each request it carried with an error frame (quoting
    /// the `Location` of a redirect, which is not followed).
    fn post_failed(&mut self, frame: &Bytes, status: Option<u16>, location: Option<&str>) {
        self.events.push_back(TransportEvent::PostFailed { status });
        let message = match (status, location) {
            (Some(s), Some(location)) => format!(
                "the message endpoint answered HTTP {s}, a redirect to {} (not followed)",
                crate::http::quote_peer_text(location)
            ),
            (Some(s), None) => format!("the message endpoint answered HTTP {s}"),
            (None, _) => "the message POST failed or got no answer in time".to_string(),
        };
        self.answer_with_error(frame, &message);
    }

    /// Answers each request in `frame` (one message or a batch) with an error frame.
    fn answer_with_error(&mut self, frame: &Bytes, message: &str) {
        for error in request_errors(frame, message) {
            if self.inbound.len() < self.config.max_inbound_frames {
                self.inbound.push_back(error);
            }
        }
    }

    fn close_with(&mut self, reason: TransportCloseReason) {
        if self.state == State::Closed {
            return;
        }
        self.state = State::Closed;
        self.deadline = None;
        // The requests that end here say why (`closed locally` after `close`).
        let why = format!("the HTTP+SSE transport closed: {reason}");
        for frame in std::mem::take(&mut self.held) {
            self.answer_with_error(&frame, &why);
        }
        // Requests not handed to the adapter yet are not sent at all.
        let unsent: Vec<ExchangeId> = self
            .actions
            .iter()
            .filter_map(|a| match a {
                Action::Send(r) => Some(r.id),
                Action::Abort(_) => None,
            })
            .collect();
        self.actions.retain(|a| matches!(a, Action::Abort(_)));
        for id in unsent {
            if let Some(post) = self.posts.remove(&id) {
                self.answer_with_error(&post.frame, &why);
            }
        }
        self.actions.push_back(Action::Abort(self.get_id));
        self.events.push_back(TransportEvent::Closed(reason));
    }
}

crate::outgoing::client_transport_by_inherent_methods!(SseTransportClient, TransportEvent);

/// The next dispatched event of `decoder` (ids and `retry` alone are passed over), or the
/// close reason of an event past `limit`.
pub(super) fn next_event(
    decoder: &mut SseDecoder,
    limit: usize,
) -> Option<Result<SseEvent, TransportCloseReason>> {
    loop {
        match decoder.poll_item()? {
            Ok(SseItem::Event(event)) => return Some(Ok(event)),
            Ok(_) => {}
            Err(_) => return Some(Err(TransportCloseReason::TooLarge { limit })),
        }
    }
}

/// A JSON-RPC error frame (code [`TRANSPORT_ERROR`], `message`) for each request in `frame`
/// (one message or a batch), so each one the transport could not deliver ends once.
pub(super) fn request_errors(frame: &Bytes, message: &str) -> Vec<Bytes> {
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
    ids.into_iter()
        .map(|id| {
            let error = json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": TRANSPORT_ERROR, "message": message}});
            Bytes::from(error.to_string())
        })
        .collect()
}
