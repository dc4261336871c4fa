//! What jobs and handles send the server state machine: the outbox items it drains in order,
//! the registration changes among them, and the state they all share (log level, closed).

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use serde_json::Value;

use super::context::PeerError;
use super::{Prompt, Resource, ResourceTemplate, Tool};
use crate::jsonrpc::{ErrorObject, RawJson, RequestId};
use crate::model::LoggingLevel;
use crate::runtime::OneshotSender;

/// The reply slot of a server→client request.
pub(crate) type PeerReply = OneshotSender<Result<Value, PeerError>>;

/// A registration change, applied when the server drains its outbox.
pub(crate) enum RegistryChange {
    AddTool(Box<Tool>),
    RemoveTool(String),
    AddResource(Box<Resource>),
    RemoveResource(String),
    AddTemplate(Box<ResourceTemplate>),
    RemoveTemplate(String),
    AddPrompt(Box<Prompt>),
    RemovePrompt(String),
}

/// One thing a job or a handle asks the server to do, drained in order.
pub(crate) enum OutboxItem {
    /// A handler finished.
    Reply {
        id: RequestId,
        outcome: Result<RawJson, ErrorObject>,
    },
    /// `notifications/progress` for an inbound request.
    Progress {
        id: RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// A notification, related to an inbound request or not.
    Notify {
        related: Option<RequestId>,
        method: &'static str,
        params: Option<RawJson>,
    },
    /// A server→client request.
    PeerRequest {
        related: Option<RequestId>,
        method: &'static str,
        params: Option<RawJson>,
        reply: PeerReply,
    },
    /// A resource changed: tell the client if it subscribed.
    ResourceUpdated { uri: String },
    /// Add or remove a registration.
    Change(RegistryChange),
    /// End the HTTP response stream of this inbound request early (SEP-1699).
    CloseStream { id: RequestId },
}

/// State shared by the server, its handles and every context.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// 0 = no `logging/setLevel` yet (everything passes), else `LoggingLevel as u8 + 1`.
    min_level: AtomicU8,
    /// The session has closed: handles stop being useful (see `ServerHandle::is_closed`).
    closed: AtomicBool,
}

impl Shared {
    pub(crate) fn set_level(&self, level: LoggingLevel) {
        self.min_level.store(level as u8 + 1, Ordering::SeqCst);
    }

    /// The level set by `logging/setLevel`, if any.
    pub(crate) fn level(&self) -> Option<LoggingLevel> {
        let min = self.min_level.load(Ordering::SeqCst);
        LoggingLevel::ALL
            .get(usize::from(min.checked_sub(1)?))
            .copied()
    }

    pub(crate) fn mark_closed(&self) {
        self.closed.store(true, Ordering::Release);
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub(crate) fn passes(&self, level: LoggingLevel) -> bool {
        let min = self.min_level.load(Ordering::SeqCst);
        min == 0 || level as u8 + 1 >= min
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_filter_passes_everything_until_set() {
        let shared = Shared::default();
        assert!(
            shared.passes(LoggingLevel::Debug),
            "before setLevel everything passes"
        );
        shared.set_level(LoggingLevel::Error);
        assert!(!shared.passes(LoggingLevel::Warning));
        assert!(shared.passes(LoggingLevel::Error) && shared.passes(LoggingLevel::Alert));
        shared.set_level(LoggingLevel::Debug);
        assert!(shared.passes(LoggingLevel::Debug));
    }
}
