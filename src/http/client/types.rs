//! The values the HTTP client transport hands the application: events, its configuration
//! and its counters (its requests are [`crate::outgoing::OutgoingRequest`]s).

use std::time::Duration;

use crate::http::sse_transport::{TransportCloseReason, TransportKind};

/// Something an HTTP client transport ([`HttpClient`](super::HttpClient),
/// [`SseTransportClient`], [`AutoClient`]) reports to the application.
///
/// [`SseTransportClient`]: crate::http::sse_transport::SseTransportClient
/// [`AutoClient`]: crate::http::sse_transport::AutoClient
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportEvent {
    /// The server answered a request of our session with 404: the session is gone. Every
    /// request in flight on it ended with a transport error; a new session is being set up
    /// with the original `initialize` (when [`HttpClientConfig::reinitialize`] is on).
    SessionExpired,
    /// A new session replaced the expired one; calls flow again.
    Reinitialized {
        /// The new `Mcp-Session-Id`, if the server issued one.
        session_id: Option<String>,
    },
    /// The session could not be re-established: every request now fails at once.
    SessionLost {
        /// Why.
        reason: String,
    },
    /// The server does not offer the standalone GET stream (405, 400, or another non-2xx
    /// status): server-initiated messages only arrive on POST response streams.
    StandaloneStreamUnavailable {
        /// The HTTP status, or `None` when the stream kept failing without one.
        status: Option<u16>,
    },
    /// SSE events longer than [`HttpClientConfig::max_event_size`] were dropped from a
    /// stream, unread: the standalone GET stream, or a POST's stream that awaits no response
    /// or already has it (an oversized event before the awaited response fails that request
    /// instead). What they carried (a request, a notification) is lost; the stream goes on.
    EventTooLarge {
        /// The limit, in bytes.
        limit: usize,
        /// Whether the stream is the standalone GET stream (else a POST's response stream).
        standalone: bool,
        /// How many events were dropped (from one body chunk).
        dropped: u64,
    },
    /// Auto-detection decided (`AutoClient` only).
    Detected(TransportKind),
    /// HTTP+SSE: the `endpoint` event arrived; messages are POSTed to `post_url` from now on.
    Ready {
        /// The resolved message URL.
        post_url: String,
    },
    /// HTTP+SSE: a POSTed message was refused (`Some(status)`) or its request failed
    /// (`None`). A request in it is answered with a JSON-RPC error frame, so it completes
    /// exactly once.
    PostFailed {
        /// The HTTP status, if a response came.
        status: Option<u16>,
    },
    /// The transport is over; no more frames will come. Streamable HTTP: `close` finished
    /// (the DELETE was answered, or there was no session to delete), with
    /// [`TransportCloseReason::Local`].
    Closed(TransportCloseReason),
}

/// Limits and switches of the HTTP client transports: Streamable HTTP
/// ([`HttpClient`](super::HttpClient)), HTTP+SSE ([`SseTransportClient`]) and the detector
/// ([`AutoClient`]), which hands over to either. Each field says which transport reads it.
///
/// [`SseTransportClient`]: crate::http::sse_transport::SseTransportClient
/// [`AutoClient`]: crate::http::sse_transport::AutoClient
#[derive(Clone, Debug)]
pub struct HttpClientConfig {
    /// Streamable HTTP: a JSON response body larger than this fails its request. Default
    /// 16 MiB.
    pub max_body: usize,
    /// Streamable HTTP: one SSE event (a line or its data) larger than this is dropped.
    /// HTTP+SSE and the detector: the largest SSE event (and probe JSON body) accepted; a
    /// larger one closes the transport. Default 16 MiB.
    pub max_event_size: usize,
    /// Exchanges in flight at most (a stream waiting to reconnect counts); a request past it
    /// fails at once. Default 1024.
    pub max_exchanges: usize,
    /// Messages held while the handshake or a re-initialization is in flight. Default 1024.
    pub max_held: usize,
    /// Reconnection delay when the server sent no SSE `retry`. Default 1 s.
    pub default_retry: Duration,
    /// Upper bound of any reconnection delay (server `retry` and backoff). Default 30 s.
    pub max_retry: Duration,
    /// Consecutive reconnection attempts of one stream that bring nothing before giving up
    /// (the delay doubles after each one). Default 5.
    pub max_resume_attempts: u32,
    /// Open the standalone GET stream once the session is set up. Default on.
    pub open_standalone_stream: bool,
    /// How long other messages wait for the standalone stream's response head after the
    /// handshake (so the server has the stream before requests that may use it). Default 1 s.
    pub standalone_wait: Duration,
    /// Set up a new session after a 404 by replaying the original `initialize`. Default on.
    pub reinitialize: bool,
    /// Re-initializations at most over the transport's life. Default 3.
    pub max_reinitializations: u32,
    /// HTTP+SSE: how long to wait for the `endpoint` event after the GET. Default 10 s.
    pub endpoint_timeout: Duration,
    /// HTTP+SSE and the detector: how long a POST (and the detection probe) waits for its
    /// response head; past it the exchange is aborted and its requests end with an error.
    /// Default 30 s.
    pub post_timeout: Duration,
    /// HTTP+SSE and the detector: frames waiting to be POSTed or in flight, at most. Default
    /// 1024.
    pub max_pending_frames: usize,
    /// HTTP+SSE and the detector: received frames waiting for `poll_frame`, at most. Default
    /// 4096.
    pub max_inbound_frames: usize,
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        HttpClientConfig {
            max_body: crate::config::DEFAULT_MAX_FRAME_LEN,
            max_event_size: crate::config::DEFAULT_MAX_FRAME_LEN,
            max_exchanges: 1024,
            max_held: 1024,
            default_retry: Duration::from_secs(1),
            max_retry: Duration::from_secs(30),
            max_resume_attempts: 5,
            open_standalone_stream: true,
            standalone_wait: Duration::from_secs(1),
            reinitialize: true,
            max_reinitializations: 3,
            endpoint_timeout: Duration::from_secs(10),
            post_timeout: Duration::from_secs(30),
            max_pending_frames: 1024,
            max_inbound_frames: 4096,
        }
    }
}

/// Counters of the client transport. Cumulative.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpClientStats {
    /// GET requests sent to resume a broken response stream (`Last-Event-ID`).
    pub resumes: u64,
    /// Reconnections of the standalone GET stream.
    pub standalone_reopens: u64,
    /// Requests ended by the transport with a transport error (HTTP error, stream lost, ...).
    pub requests_failed: u64,
    /// Sessions that expired (404).
    pub sessions_expired: u64,
    /// Notifications and responses that could not be sent (dropped).
    pub messages_dropped: u64,
    /// SSE events over `max_event_size` (each one), and JSON bodies over `max_body`.
    pub oversized: u64,
    /// `Mcp-Session-Id` values that were not visible ASCII (ignored).
    pub invalid_session_ids: u64,
}
