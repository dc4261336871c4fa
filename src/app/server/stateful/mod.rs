//! The stateful front end of the server (revisions 2025-03-26 to 2025-11-25): a `Session`
//! carries the conversation, and these files turn its events into dispatches and the
//! handlers' outbox items into its responses, notifications and server→client requests
//! (`session.rs`), and answer the requests only a session has: `resources/subscribe`,
//! `resources/unsubscribe`, `logging/setLevel` (`requests.rs`).
//!
//! It shares the registry, the dispatch and the handler context with the stateless front end
//! (`super::stateless`) and uses nothing of it; `super` routes each frame and outbox item to
//! one of the two.

mod requests;
mod session;
mod snapshot;

use std::collections::{BTreeSet, HashMap, VecDeque};

use crate::app::server::outbox::PeerReply;
use crate::jsonrpc::RequestId;
use crate::session::Event;

/// What the stateful front end keeps beside the session.
#[derive(Default)]
pub(super) struct Stateful {
    /// Reply slots of our server→client requests, by our request id, with the inbound request
    /// whose handler sent each (to cancel them when that handler finishes first).
    pub(super) peer_requests: HashMap<RequestId, (PeerReply, Option<RequestId>)>,
    /// The resource URIs the client subscribed to (`resources/subscribe`).
    pub(super) subscriptions: BTreeSet<String>,
    /// Application events for `Server::poll_event`.
    pub(super) events: VecDeque<Event>,
    /// Inbound requests whose handler asked to end their response stream early.
    pub(super) stream_closes: VecDeque<RequestId>,
    /// Bumped by every change of the level or the subscriptions (see `snapshot.rs`).
    pub(super) changes: u64,
    /// The handshake's end and `changes` when the snapshot was last due.
    pub(super) saved: Option<(bool, u64)>,
}
