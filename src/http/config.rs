//! The endpoint's limits and switches, with their defaults, and its counters.

use std::sync::Arc;
use std::time::Duration;

use super::event_id::EventKey;
use super::headers::HostPolicy;
use super::peer::PeerLimit;
use crate::model::ProtocolVersion;

/// How the response to a POSTed request is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseMode {
    /// JSON when the result is ready before anything else was sent for the request; SSE
    /// otherwise (notifications or requests first, or a handler still running).
    Auto,
    /// Always an SSE stream.
    AlwaysSse,
    /// Always one JSON object (messages sent before the result are dropped and counted).
    AlwaysJson,
}

/// Limits and switches of the endpoint.
#[derive(Clone, Debug)]
pub struct EndpointConfig {
    /// POST bodies larger than this get 413, with a JSON-RPC error body that carries the
    /// request's id when the body's first bytes show it. Default 16 MiB.
    pub max_body: usize,
    /// Stateful sessions held at most. An `initialize` past it ends the oldest session whose
    /// handshake is not done to make room; with none such, it gets 503. Default 10,000.
    pub max_sessions: usize,
    /// A session with no request and no open stream for this long is dropped. Default 30 min.
    pub idle_timeout: Duration,
    /// A session that has not finished its handshake (no `notifications/initialized`) this
    /// long after its `initialize` is dropped, open streams or not. Default 10 s.
    pub handshake_grace: Duration,
    /// Stateless exchanges (sessionless POSTs, 2026-07-28 requests) whose answer is still
    /// streaming, held at most; one more gets 503. Not counted in `max_sessions`. Default 4096.
    pub max_exchanges: usize,
    /// Bytes of POST bodies whose requests are still being answered, summed over every
    /// session and exchange; a body with requests past it gets 503 with a JSON-RPC error
    /// carrying its id (with nothing held, any body within `max_body` is taken). Responses
    /// and notifications are never refused by it. Default 256 MiB.
    pub max_body_bytes_in_flight: usize,
    /// Replay buffer size per session, in bytes of encoded events. Default 1 MiB.
    pub replay_budget: usize,
    /// Whether GET opens a standalone stream (off: 405). Default on.
    pub allow_get: bool,
    /// Whether DELETE terminates a session (off: 405). Default on.
    pub allow_delete: bool,
    /// No sessions: every POST is answered on its own with JSON. Default off.
    pub sessionless: bool,
    /// JSON or SSE for request responses. Default `Auto`.
    pub response_mode: ResponseMode,
    /// SSE `retry` (ms) sent with priming events to 2025-11-25 sessions. Default 1000.
    pub retry_ms: u64,
    /// Host and Origin allow-lists.
    pub hosts: HostPolicy,
    /// Versions the `MCP-Protocol-Version` header may name.
    pub supported_versions: Vec<ProtocolVersion>,
    /// 2026-07-28 `subscriptions/listen` streams open at most (each holds one exchange, also
    /// counted in `max_exchanges`). A new one at the cap ends the oldest stream of the peer
    /// (`HttpRequestHead::peer`, keyed as `peer_limit` keys it, else by bearer subject or
    /// address) holding the most, with its closing listen result, so no peer can keep the
    /// others out; 0 turns listen streams off (503). Each open stream holds about 6 KiB in
    /// the endpoint (a server machine of its own) plus its connection in the adapter (about
    /// 20 KiB in all under `serve --http`), plus what its queue holds: every change another
    /// exchange makes reaches every stream that asked for it, so n streams whose exchanges
    /// each make a change queue n² notifications until their readers take them. Default 64.
    pub max_listen_streams: usize,
    /// An SSE response stream (a POST's, the standalone GET stream, a resumed one) that wrote
    /// nothing for this long gets a comment line (`: keep-alive`), so proxies and clients do
    /// not time it out; it carries no event id and is not replayed. The HTTP+SSE transport's
    /// streams (`http::sse_transport`) get one (`:`) this often. `None`: no comments.
    /// Default 15 s.
    pub sse_keep_alive: Option<Duration>,
    /// Per-peer admission of new sessions (keyed by the request's [`Peer`]); `None`: no
    /// per-peer limit. A refusal is 429 with `Retry-After`. Default `None`.
    ///
    /// [`Peer`]: super::Peer
    pub peer_limit: Option<Arc<dyn PeerLimit>>,
    /// This instance's name among several serving the same sessions from one shared store
    /// (1 to 32 ASCII letters and digits). `Some` turns on the session changes
    /// (`Endpoint::poll_session_change`) and puts this name in the ids of the requests its
    /// sessions send the client (`Endpoint::reply_owner`). Default `None`: sessions live in
    /// this process only.
    pub instance_id: Option<String>,
    /// Signs the SSE event ids of stateful sessions (see docs/scale-out.md): with a key, an
    /// id names the instance and stream that wrote the event and carries a MAC, so a forged
    /// or foreign `Last-Event-ID` gets 400 and a genuine one is understood by every instance
    /// holding the key. With an `instance_id` too, what the streams write is handed out for
    /// a shared store (`Endpoint::poll_stream_log`) and a resume of another instance's stream
    /// is handed to the driver (`Endpoint::resume_elsewhere`). Default `None`: ids are
    /// `<stream>-<seq>`, valid on this instance only.
    pub event_key: Option<EventKey>,
    /// The servers make every `requestState` single use (`ServerBuilder::
    /// request_state_replay_guard`) and the instances share one guard: with an
    /// `instance_id` too, a 2026-07-28 request carrying a state names its claim
    /// (`Endpoint::request_state_claim`) for the driver to make in the shared store before
    /// the request is served. Default `false`.
    pub shared_state_guard: bool,
    /// Whether the endpoint keeps the ids of the sessions that end (DELETE, idle or handshake
    /// expiry, eviction to make room, an end announced by another instance) for the driver
    /// (`Endpoint::poll_ended_session`), e.g. for a session-duration metric. At most
    /// `max_sessions` are kept (the oldest dropped past it). Default off.
    pub report_ended_sessions: bool,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            max_body: crate::config::DEFAULT_MAX_FRAME_LEN,
            max_sessions: 10_000,
            idle_timeout: Duration::from_secs(30 * 60),
            handshake_grace: Duration::from_secs(10),
            max_exchanges: 4096,
            max_body_bytes_in_flight: 256 << 20,
            replay_budget: 1 << 20,
            allow_get: true,
            allow_delete: true,
            sessionless: false,
            response_mode: ResponseMode::Auto,
            retry_ms: 1000,
            hosts: HostPolicy::default(),
            supported_versions: ProtocolVersion::STATEFUL.to_vec(),
            max_listen_streams: 64,
            sse_keep_alive: Some(Duration::from_secs(15)),
            peer_limit: None,
            instance_id: None,
            event_key: None,
            shared_state_guard: false,
            report_ended_sessions: false,
        }
    }
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Sessions dropped for idleness.
    pub sessions_expired: u64,
    /// Sessions refused because the table was full of initialized sessions (and 2026-07-28
    /// listen streams refused with `max_listen_streams` at 0).
    pub sessions_refused: u64,
    /// Sessions dropped because their handshake was not done within `handshake_grace`.
    pub handshakes_expired: u64,
    /// Sessions whose handshake was not done, ended to make room for a new `initialize`.
    pub handshakes_evicted: u64,
    /// Stateless exchanges refused because `max_exchanges` were in flight.
    pub exchanges_refused: u64,
    /// POST bodies refused (503) because `max_body_bytes_in_flight` were held.
    pub bodies_refused: u64,
    /// Sessions refused (429) by the `peer_limit`.
    pub peers_refused: u64,
    /// Sessions restored from a snapshot (`Endpoint::handle_restore`).
    pub sessions_restored: u64,
    /// Session changes dropped because the driver did not take them
    /// (`Endpoint::poll_session_change`).
    pub session_changes_dropped: u64,
    /// Stream log entries dropped because the driver did not take them
    /// (`Endpoint::poll_stream_log`): a resume elsewhere may miss those events.
    pub stream_log_dropped: u64,
    /// Relays of GET streams moved between instances that the driver handed back
    /// (`Endpoint::handle_listen_relay_lost`: no instance received them, the driver could
    /// not queue them, or their publish to the bus failed); the messages among them are held
    /// here for the session's next GET stream.
    pub listen_relays_lost: u64,
    /// 2026-07-28 listen streams ended (with their closing result) to make room for a new
    /// one at `max_listen_streams`.
    pub listen_streams_evicted: u64,
}
