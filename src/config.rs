//! `Config`: every limit and timeout of a session in one place, with documented defaults.

use std::time::Duration;

use crate::model::ProtocolVersion;

/// The default longest frame (ndjson line, HTTP body) on both sides: 16 MiB, room for a large
/// image or resource in one message.
pub const DEFAULT_MAX_FRAME_LEN: usize = 16 * 1024 * 1024;

/// Limits and timeouts of one [`crate::session::Session`].
///
/// Every table and queue of the session is bounded by one of these; at a bound the session refuses
/// deterministically (an error response to the peer, an error to the application, or a counted
/// drop) and keeps serving.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Deadline of an outbound request unless the call overrides it. Default: 60 s.
    pub request_timeout: Duration,
    /// Cap on a request's total lifetime when progress keeps resetting its deadline.
    /// Default: 10 min.
    pub max_request_timeout: Duration,
    /// Whether a progress notification for an outbound request restarts its deadline.
    /// Default: `true`.
    pub reset_timeout_on_progress: bool,
    /// Inbound requests the application may have in flight at once. Past it the session answers
    /// `-32603` ("server busy") itself instead of queuing. Default: 1024.
    pub max_inflight_inbound: usize,
    /// Outbound requests awaiting a response at once. Past it `send_request` fails with
    /// `SendError::TooManyPending`. Default: 1024.
    pub max_pending_outbound: usize,
    /// The longest frame (ndjson line, HTTP body) accepted. Longer ones are refused with an
    /// error response carrying the request's id when its first bytes show it (a response
    /// that long fails the pending request it answers). Default: 16 MiB.
    pub max_frame_len: usize,
    /// Send a `ping` after this long without a message from the peer. Default: `None` (off).
    pub keep_alive_interval: Option<Duration>,
    /// How many cancelled or timed-out outbound ids (and cancelled inbound ids) are remembered,
    /// so a late response is recognised and dropped quietly. Default: 1024.
    pub tombstone_capacity: usize,
    /// Protocol versions this side accepts, any order. Default: every stateful revision.
    pub supported_versions: Vec<ProtocolVersion>,
    /// Messages waiting in the outbound queue. Past it, commands fail with
    /// `SendError::QueueFull` and replies the session generates itself to single messages are
    /// dropped and counted. Replies to the items of a batch are always queued (they are
    /// bounded by the batch's size, itself bounded by `max_frame_len`), and so are responses to
    /// in-flight requests (bounded by `max_inflight_inbound`). Default: 4096.
    pub max_outbound_queue: usize,
    /// Events waiting for `poll_event`. Past it, inbound notifications and progress events are
    /// dropped and counted; `Completed`, `Cancelled` and `Closed` are never dropped (they are
    /// bounded by the pending and in-flight tables). Default: 4096.
    pub max_queued_events: usize,
    /// Application layer: page size of list results. Default: 100.
    pub page_size: usize,
    /// After the peer's input ends (a stdio server's stdin closes), how long the requests
    /// still being handled may run. Past it each is answered with `-32603` and the session
    /// closes, so a server whose client went away always exits. Default: 5 s.
    pub drain_timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            request_timeout: Duration::from_secs(60),
            max_request_timeout: Duration::from_secs(600),
            reset_timeout_on_progress: true,
            max_inflight_inbound: 1024,
            max_pending_outbound: 1024,
            max_frame_len: DEFAULT_MAX_FRAME_LEN,
            keep_alive_interval: None,
            tombstone_capacity: 1024,
            supported_versions: ProtocolVersion::STATEFUL.to_vec(),
            max_outbound_queue: 4096,
            max_queued_events: 4096,
            page_size: 100,
            drain_timeout: Duration::from_secs(5),
        }
    }
}

impl Config {
    /// The newest stateful version in `supported_versions` (the latest stateful revision when
    /// the list has none).
    pub fn latest_supported(&self) -> ProtocolVersion {
        self.supported_versions
            .iter()
            .copied()
            .filter(|v| v.is_stateful())
            .max()
            .unwrap_or(ProtocolVersion::LATEST_STATEFUL)
    }

    /// Whether `version` is one this side accepts.
    pub fn supports(&self, version: ProtocolVersion) -> bool {
        version.is_stateful() && self.supported_versions.contains(&version)
    }
}
