//! The values the client-side transports report to their application (their limits are
//! [`crate::http::client::HttpClientConfig`], their requests
//! [`crate::outgoing::OutgoingRequest`]s).

/// Which HTTP transport a server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    /// Streamable HTTP (2025-03-26 and later): one endpoint, POST + optional GET.
    StreamableHttp,
    /// The HTTP+SSE transport (2024-11-05): SSE GET + message POST.
    SseTransport,
}

/// Why a transport closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportCloseReason {
    /// `close()` was called.
    Local,
    /// A response had this unexpected status.
    HttpStatus(u16),
    /// A response was a redirect (3xx), which the transports do not follow.
    Redirect {
        /// The HTTP status.
        status: u16,
        /// Its `Location`, quoted ([`crate::http::quote_peer_text`]: at most 200 characters,
        /// control characters escaped); `None` when absent.
        location: Option<String>,
    },
    /// The SSE GET was answered with something other than `text/event-stream`.
    NotEventStream {
        /// The `Content-Type` the server sent, quoted ([`crate::http::quote_peer_text`]).
        content_type: String,
    },
    /// The SSE stream ended (the HTTP+SSE transport cannot resume it).
    StreamEnded,
    /// The adapter reported a failed request (connection refused, reset, ...).
    RequestFailed,
    /// The `endpoint` event's URI is not a valid reference, or not `http(s)`.
    InvalidEndpoint {
        /// The URI the server sent, quoted ([`crate::http::quote_peer_text`]).
        uri: String,
    },
    /// The `endpoint` event names another origin.
    CrossOriginEndpoint {
        /// The URI the server sent, quoted ([`crate::http::quote_peer_text`]).
        uri: String,
    },
    /// No `endpoint` event within `endpoint_timeout`.
    EndpointTimeout,
    /// Incoming frames piled up past `max_inbound_frames` without being polled.
    InboundOverflow,
    /// A response body or SSE event outgrew its limit (`max_event_size`, in bytes).
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// Auto-detection's first frame was not an `initialize` request.
    NotInitialize,
    /// The detection probe got no response head within `post_timeout`.
    ProbeTimeout,
}

impl std::fmt::Display for TransportCloseReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportCloseReason::Local => f.write_str("closed locally"),
            TransportCloseReason::HttpStatus(status @ 300..=399)
            | TransportCloseReason::Redirect {
                status,
                location: None,
            } => write!(
                f,
                "the server answered HTTP {status}, a redirect without a Location (not followed)"
            ),
            TransportCloseReason::Redirect {
                status,
                location: Some(location),
            } => write!(
                f,
                "the server answered HTTP {status}, a redirect to {location} (not followed: give \
                 the final URL)"
            ),
            TransportCloseReason::HttpStatus(status) => {
                write!(f, "the server answered HTTP {status}")
            }
            TransportCloseReason::NotEventStream { content_type } => write!(
                f,
                "the SSE GET was answered with Content-Type {content_type}, not text/event-stream"
            ),
            TransportCloseReason::StreamEnded => f.write_str("the server ended the SSE stream"),
            TransportCloseReason::RequestFailed => f.write_str("an HTTP request failed"),
            TransportCloseReason::InvalidEndpoint { uri } => {
                write!(
                    f,
                    "the endpoint event's URI {uri} is not a valid http(s) reference"
                )
            }
            TransportCloseReason::CrossOriginEndpoint { uri } => {
                write!(f, "the endpoint event's URI {uri} names another origin")
            }
            TransportCloseReason::EndpointTimeout => f.write_str("no endpoint event came in time"),
            TransportCloseReason::InboundOverflow => {
                f.write_str("incoming messages piled up past the limit unread")
            }
            TransportCloseReason::TooLarge { limit } => write!(
                f,
                "a response exceeded the {} size limit",
                crate::session::describe_limit(*limit)
            ),
            TransportCloseReason::NotInitialize => {
                f.write_str("the first message was not initialize")
            }
            TransportCloseReason::ProbeTimeout => {
                f.write_str("the server did not answer the probe in time")
            }
        }
    }
}

impl TransportCloseReason {
    /// The reason a response with a non-2xx `status` gives: [`Self::Redirect`] with the
    /// quoted `location` (the response's `Location` field) for a 3xx, else
    /// [`Self::HttpStatus`].
    pub(crate) fn for_status(status: u16, location: Option<&str>) -> Self {
        if !(300..400).contains(&status) {
            return Self::HttpStatus(status);
        }
        let location = location.map(crate::http::quote_peer_text);
        Self::Redirect { status, location }
    }
}
