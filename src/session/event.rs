//! What the session hands the application: events, request outcomes, close reasons, counters.

use crate::jsonrpc::{ErrorObject, Method, RawJson, RequestId};
use crate::model::ProtocolVersion;

/// Something the application must know about. Drained with `Session::poll_event`.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// Handshake done. Client: on the initialize result (after it queued `initialized`).
    /// Server: on `notifications/initialized`.
    Initialized {
        /// The negotiated version.
        protocol_version: ProtocolVersion,
    },
    /// An inbound request for the application: everything except `initialize` and `ping`,
    /// which the session answers itself. Lifecycle and capability gating already happened.
    Request {
        /// The peer's id; pass it to `respond` or `respond_error`.
        id: RequestId,
        /// The method.
        method: Method,
        /// The params, unparsed.
        params: Option<RawJson>,
    },
    /// An inbound notification for the application (`cancelled`, `progress` and `initialized`
    /// are consumed by the session).
    Notification {
        /// The method.
        method: Method,
        /// The params, unparsed.
        params: Option<RawJson>,
    },
    /// The peer cancelled one of its in-flight requests: stop work; a later `respond` for it is
    /// suppressed.
    Cancelled {
        /// The peer's request id.
        id: RequestId,
        /// The peer's reason, if it gave one.
        reason: Option<String>,
    },
    /// Progress for one of our outbound requests.
    Progress {
        /// Our request id.
        id: RequestId,
        /// Progress so far.
        progress: f64,
        /// Total, when known.
        total: Option<f64>,
        /// A human-readable message.
        message: Option<String>,
    },
    /// One of our outbound requests ended. Emitted exactly once per request.
    Completed {
        /// Our request id.
        id: RequestId,
        /// How it ended.
        outcome: Outcome,
    },
    /// A response from the peer matched no pending request (and no request we gave up on):
    /// the peer answered an id we never sent, or spelled it differently (`"1"` for `1`). The
    /// response is dropped; the request it was meant for keeps waiting.
    UnmatchedResponse {
        /// The id the response carries.
        id: RequestId,
        /// A pending request whose id is the same text as the other JSON type (`1` when the
        /// response says `"1"`, or the reverse): probably the one meant.
        pending_other_type: Option<RequestId>,
    },
    /// The session closed. Emitted once; every pending request completed with
    /// [`Outcome::Closed`] just before.
    Closed {
        /// Why.
        reason: CloseReason,
    },
}

/// How an outbound request ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The peer's result.
    Result(RawJson),
    /// The peer's error, or a response too long to read (over `max_frame_len`): then a local
    /// `-32603` error whose message names the limit.
    Error(ErrorObject),
    /// No response before the deadline; `notifications/cancelled` was sent.
    TimedOut,
    /// The application cancelled it; `notifications/cancelled` was sent.
    Cancelled,
    /// The session closed first.
    Closed,
}

/// Why a session closed.
#[derive(Clone, Debug, PartialEq)]
pub enum CloseReason {
    /// The application called `close`.
    Local,
    /// Client: the server chose a protocol version this client does not support.
    UnsupportedVersion {
        /// The version string the server answered with.
        server_version: String,
    },
    /// Client: the server answered `initialize` with an error.
    InitializeFailed(ErrorObject),
    /// Client: the server did not answer `initialize` in time.
    InitializeTimedOut,
    /// Client: the initialize result was malformed.
    InvalidInitializeResult(String),
    /// A keep-alive ping got no answer in time.
    KeepAliveTimedOut,
    /// The peer ended the transport (its output reached its end, its connection closed):
    /// nothing more can arrive. Reported by the driver with `handle_peer_closed`.
    PeerClosed,
}

/// Counters of things the session dropped or refused. Cumulative over the session's life.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Responses whose id matched no pending request and no tombstone.
    pub unknown_responses_dropped: u64,
    /// Responses to requests that had already timed out or been cancelled.
    pub late_responses_dropped: u64,
    /// Error responses without an id (nothing to match them to).
    pub id_less_errors_dropped: u64,
    /// Malformed responses (never answered, to avoid loops).
    pub invalid_responses_dropped: u64,
    /// Frames that were not valid JSON-RPC (answered with an error, but for those counted in
    /// `invalid_frames_unanswered`).
    pub invalid_frames: u64,
    /// Frames whose id could not be read, past
    /// [`MAX_UNREADABLE_ANSWERED`](super::MAX_UNREADABLE_ANSWERED) in a row: not answered.
    pub invalid_frames_unanswered: u64,
    /// Frames longer than `max_frame_len`.
    pub oversized_frames: u64,
    /// Batches refused because the negotiated version does not allow them.
    pub batches_refused: u64,
    /// Requests refused by lifecycle or capability gating.
    pub requests_refused: u64,
    /// Requests refused because `max_inflight_inbound` was reached.
    pub requests_refused_busy: u64,
    /// Requests whose id duplicated one still in flight (dropped: answering would give the
    /// peer two responses for one id).
    pub duplicate_requests_dropped: u64,
    /// Notifications dropped (before initialization, wrong direction, event queue full).
    pub notifications_dropped: u64,
    /// Progress notifications for no pending request (unknown token, or after completion).
    pub progress_dropped: u64,
    /// `notifications/cancelled` for no in-flight request.
    pub cancellations_ignored: u64,
    /// Responses the application gave to requests the peer had cancelled.
    pub responses_suppressed: u64,
    /// Replies the session generated itself that did not fit the outbound queue.
    pub replies_dropped: u64,
    /// Pings answered by the session.
    pub pings_answered: u64,
}
