//! `subscriptions/listen` on the server (2026-07-28): opening a listen stream (the
//! acknowledgement with the agreed filter), delivering list changes and resource updates to the
//! streams that asked for them (tagged with `io.modelcontextprotocol/subscriptionId`), and
//! ending streams with the closing listen result.
//!
//! One server may hold several listen streams (stdio: all share the pipe). On HTTP every
//! stateless exchange is its own machine, so a change made while serving one exchange is also
//! handed out as a [`ListenChange`] (`Server::poll_listen_change`) for the transport to pass to
//! the machines holding listen streams (`Server::handle_listen_change`).

use std::collections::VecDeque;

use serde_json::{json, Value};

use crate::app::server::{Server, MAX_SUBSCRIPTION_URI};
use crate::jsonrpc::{self as m, ErrorObject, RequestId};
use crate::model::stateless::{
    set_subscription_id, ListenParams, ListenResult, SubscriptionFilter,
};
use crate::model::Meta;
use crate::session::TransmitKind;
use crate::stateless::ListenChange;

/// Listen streams one server holds at most by default (`ServerBuilder::max_listeners`).
pub const DEFAULT_MAX_LISTENERS: usize = 16;
/// URIs one listen stream may subscribe to at most; more is refused with -32602.
pub const MAX_RESOURCE_SUBSCRIPTIONS: usize = 256;
/// Events waiting for `poll_listen_change` at most (oldest dropped: nobody is collecting).
const MAX_PENDING_EVENTS: usize = 64;

/// The open listen streams of one server and the events waiting for the transport.
pub(crate) struct Listeners {
    /// Listen request id and the filter the server agreed to, in opening order (a small
    /// list: delivery order stays deterministic).
    pub(crate) open: Vec<(RequestId, SubscriptionFilter)>,
    pub(crate) max: usize,
    pending: VecDeque<ListenChange>,
}

impl Listeners {
    pub(crate) fn new(max: usize) -> Self {
        Listeners {
            open: Vec::new(),
            max,
            pending: VecDeque::new(),
        }
    }
}

impl Server {
    /// Opens a listen stream for request `id`: -32602 on a malformed filter, an internal
    /// error when the server holds as many streams as it may; otherwise the acknowledgement
    /// (the agreed filter) goes out first and the request stays open.
    pub(super) fn open_listen(&mut self, id: RequestId, params: Value) {
        let params: ListenParams = match serde_json::from_value(params) {
            Ok(p) => p,
            Err(e) => {
                let e = ErrorObject::invalid_params(format!("subscriptions/listen: {e}"));
                return self.stateless.push_error(id, &e, Some(400));
            }
        };
        let uris = params.notifications.resource_subscriptions.as_ref();
        if uris.is_some_and(|u| u.len() > MAX_RESOURCE_SUBSCRIPTIONS) {
            let e = ErrorObject::invalid_params(format!(
                "too many resourceSubscriptions (at most {MAX_RESOURCE_SUBSCRIPTIONS})"
            ));
            return self.stateless.push_error(id, &e, Some(400));
        }
        if uris.is_some_and(|u| u.iter().any(|uri| uri.len() > MAX_SUBSCRIPTION_URI)) {
            let e = ErrorObject::invalid_params(format!(
                "a resourceSubscriptions uri is longer than {MAX_SUBSCRIPTION_URI} bytes"
            ));
            return self.stateless.push_error(id, &e, Some(400));
        }
        if self.stateless.listeners.max == 0 {
            let e =
                crate::stateless::StatelessError::MethodNotFound(m::SUBSCRIPTIONS_LISTEN.into());
            return self
                .stateless
                .push_error(id, &e.to_error_object(), Some(e.http_status()));
        }
        if self.stateless.listeners.open.len() >= self.stateless.listeners.max {
            let e = ErrorObject::internal("too many listen streams open");
            return self.stateless.push_error(id, &e, None);
        }
        let agreed = self.agreed_filter(params.notifications);
        let mut meta = None;
        set_subscription_id(&mut meta, &id);
        let ack = json!({"notifications": agreed, "_meta": meta});
        self.push_tagged(&id, m::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED, ack);
        self.stateless.listeners.open.push((id, agreed));
    }

    /// The part of `asked` this server honours: only what its capabilities declare.
    fn agreed_filter(&self, asked: SubscriptionFilter) -> SubscriptionFilter {
        let caps = &self.stateless.profile.capabilities;
        let listed = |family: Option<&crate::model::ListChangedCapability>| {
            family.and_then(|f| f.list_changed).unwrap_or(false)
        };
        let yes =
            |wanted: Option<bool>, served: bool| (wanted == Some(true) && served).then_some(true);
        let resources = caps.resources.as_ref();
        SubscriptionFilter {
            tools_list_changed: yes(asked.tools_list_changed, listed(caps.tools.as_ref())),
            prompts_list_changed: yes(asked.prompts_list_changed, listed(caps.prompts.as_ref())),
            resources_list_changed: yes(
                asked.resources_list_changed,
                resources.and_then(|r| r.list_changed).unwrap_or(false),
            ),
            resource_subscriptions: asked
                .resource_subscriptions
                .filter(|_| resources.and_then(|r| r.subscribe).unwrap_or(false)),
            extra: Default::default(),
        }
    }

    /// A listen stream the client ended (`notifications/cancelled`, stdio): no result follows.
    pub(super) fn cancel_listen(&mut self, id: &RequestId) -> bool {
        let open = &mut self.stateless.listeners.open;
        let before = open.len();
        open.retain(|(listen, _)| listen != id);
        open.len() != before
    }

    /// Whether `id` is an open listen stream.
    pub(super) fn is_listening(&self, id: &RequestId) -> bool {
        self.stateless.listeners.open.iter().any(|(l, _)| l == id)
    }

    /// A change happened here: the local listen streams that asked for it get it, and, when
    /// this server serves 2026-07-28, it is kept for `poll_listen_change` (other machines).
    pub(in crate::app::server) fn listen_change(&mut self, event: ListenChange) {
        self.deliver_listen_change(&event);
        if self.stateless.is_locked() {
            let pending = &mut self.stateless.listeners.pending;
            if pending.len() >= MAX_PENDING_EVENTS {
                pending.pop_front();
            }
            pending.push_back(event);
        }
    }

    fn deliver_listen_change(&mut self, event: &ListenChange) {
        let targets: Vec<RequestId> = self
            .stateless
            .listeners
            .open
            .iter()
            .filter(|(_, filter)| event.wanted_by(filter))
            .map(|(id, _)| id.clone())
            .collect();
        for id in targets {
            let mut meta = None;
            set_subscription_id(&mut meta, &id);
            let params = match event {
                ListenChange::ResourceUpdated { uri } => json!({"uri": uri, "_meta": meta}),
                _ => json!({"_meta": meta}),
            };
            self.push_tagged(&id, event.method(), params);
        }
    }

    fn push_tagged(&mut self, id: &RequestId, method: &str, params: Value) {
        let Ok(raw) = crate::jsonrpc::RawJson::try_from(&params) else {
            return;
        };
        let mut buf = Vec::new();
        m::encode_notification(&mut buf, method, Some(&raw));
        self.stateless
            .push(buf, TransmitKind::Notification, id.clone());
    }

    /// A change made on another machine of the same application (the HTTP endpoint passes
    /// what one exchange's `poll_listen_change` gave): delivered to this server's listen
    /// streams only, never handed out again.
    pub fn handle_listen_change(&mut self, event: &ListenChange) {
        self.deliver_listen_change(event);
    }

    /// The next change made while serving 2026-07-28 requests, for a transport whose listen
    /// streams live on other machines (HTTP); at most the last 64 are kept.
    #[must_use]
    pub fn poll_listen_change(&mut self) -> Option<ListenChange> {
        self.stateless.listeners.pending.pop_front()
    }

    /// How many listen streams are open.
    pub fn listen_stream_count(&self) -> usize {
        self.stateless.listeners.open.len()
    }

    /// Ends every listen stream gracefully: each gets the closing listen result (tagged with
    /// its subscription id). Called on close; a transport shutting down may call it first.
    pub fn end_listen_streams(&mut self) {
        let ids: Vec<RequestId> = self
            .stateless
            .listeners
            .open
            .drain(..)
            .map(|(id, _)| id)
            .collect();
        for id in ids {
            let mut result = ListenResult::closed(&id);
            let meta: &mut Meta = result.meta.get_or_insert_with(Meta::new);
            if let Ok(info) = serde_json::to_value(&self.stateless.profile.info) {
                meta.insert(crate::model::stateless::SERVER_INFO_KEY.into(), info);
            }
            self.push_result(id, &result);
        }
    }
}
