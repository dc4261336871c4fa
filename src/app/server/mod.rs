//! An MCP server: registries of tools, resources, templates and prompts answered over a
//! `Session`, with handlers run as jobs (see docs/app-api.md). Still sans-IO.
//!
//! The drive loop is the session's (`handle_input`, `handle_timeout`, `poll_transmit`,
//! `poll_timeout`) plus `poll_job()`: pending handler futures the driver must run. Jobs talk
//! back through a shared outbox, drained at the start of every `handle_*` and `poll_transmit`;
//! when a job pushes from outside, the wake hook tells the driver to run its loop once
//! (`handle_wake(now)`, then drain `poll_transmit`).
//!
//! Layout: one registry (`builder.rs`, shared by `Arc` among a factory's servers) with the
//! tool, resource and prompt types, the handler context, the typed helpers and the dispatch
//! that answers from it sit here, as does the drive loop below, which routes each frame and
//! each outbox item to one of two front ends: `stateful/` (the session of revisions 2025-03-26
//! to 2025-11-25) and `stateless/` (2026-07-28 exchanges, listen streams, multi-round-trip
//! inputs, tasks, `x-mcp-header` annotations). Neither front end uses the other.

mod arguments;
mod builder;
mod call_params;
mod complete_params;
mod context;
mod dispatch;
mod drain;
mod endpoint_machine;
mod handle;
mod outbox;
mod prompt;
mod resource;
mod stateful;
mod stateless;
mod tool;
mod typed;
mod types;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

mod cursor;
mod schema;
mod uri_template;

pub use schema::{InvalidSchema, Schema, SchemaError};

pub use crate::model::ResourceContents;
pub use crate::model::{CallToolResult, Completion, GetPromptResult};
pub use arguments::ToolArguments;
pub use builder::{BuildError, ServerBuilder, ServerFactory};
pub use context::{PeerError, RequestContext};
pub use handle::ServerHandle;
pub use prompt::{completion_handler, CompleteRequest, Prompt, PromptRequest};
pub(crate) use prompt::{completion_json, prompt_json, CompletionFn};
pub use resource::{Resource, ResourceRead, ResourceTemplate};
pub use stateless::listen::{DEFAULT_MAX_LISTENERS, MAX_RESOURCE_SUBSCRIPTIONS};
pub use stateless::param_headers::check_header_annotations;
pub use stateless::task_table::{TaskRecord, Tasks};
pub use tool::{Tool, ToolCall};
pub use typed::{
    input_schema_for, output_schema_for, Structured, ToolOutput, TypedPrompt, TypedTool,
};

use builder::Registry;
use outbox::{OutboxItem, RegistryChange, Shared};
use stateful::Stateful;
use stateless::Stateless;

use crate::config::Config;
use crate::jsonrpc::{self as m, Incoming, RequestId};
use crate::runtime::{first_poll, CancelToken, Job, Outbox, WakeHook};
use crate::session::{release_spare, Event, FrameError, ServerSetup, Session, Transmit};
use crate::stateless::ListenChange;

/// Optional outbox items (progress, logs, resource updates) held at most; past it they are
/// dropped and counted (`Server::outbox_dropped`).
const OUTBOX_CAPACITY: usize = 4096;
/// Bytes of one subscribed resource URI at most (`resources/subscribe`, a listen stream's
/// `resourceSubscriptions`): with the counts, what a session's subscriptions hold is bounded
/// by a few MiB, not by the frame size.
pub(crate) const MAX_SUBSCRIPTION_URI: usize = 4096;

/// An MCP server state machine. See the module docs for the drive loop.
pub struct Server {
    session: Session,
    /// Shared with every server of the same factory until a registration change here.
    registry: Arc<Registry>,
    outbox: Outbox<OutboxItem>,
    /// The outbox's items being applied, in a queue kept between rounds (it and the outbox
    /// swap storage, so a handler's reply allocates no queue).
    outbox_items: VecDeque<OutboxItem>,
    shared: Arc<Shared>,
    /// Jobs still pending after their inline first poll, for the driver.
    jobs: VecDeque<Job>,
    /// Cancel tokens of inbound requests whose handler is still running (it waited at its
    /// first poll).
    running: HashMap<RequestId, CancelToken>,
    /// The token of the handler about to get its first poll: it joins `running` only if the
    /// handler waits (one that answers at once can no longer be cancelled).
    starting: Option<(RequestId, CancelToken)>,
    /// The token of a handler that answered at once and left no clone of it behind: the
    /// next request's, instead of a new one.
    spare_token: Option<CancelToken>,
    /// The stateful front end's queues and tables beside the session.
    stateful: Stateful,
    /// The latest time the driver gave us (deadlines of requests sent while draining in
    /// `poll_transmit`, which has no `now`, are computed from it).
    last_now: Instant,
    page_size: usize,
    /// The stateless (2026-07-28) side: exchanges served without the session.
    stateless: Stateless,
    /// Set when the client's input ended: past it, requests still running are answered with
    /// an error and the session closes (`drain.rs`).
    drain_deadline: Option<Instant>,
}

impl Server {
    fn from_parts(
        config: Config,
        setup: Arc<ServerSetup>,
        registry: Arc<Registry>,
        stateless: Stateless,
        now: Instant,
    ) -> Server {
        let page_size = config.page_size.max(1);
        Server {
            session: Session::server_shared(config, setup, now),
            registry,
            outbox: Outbox::new(OUTBOX_CAPACITY),
            outbox_items: VecDeque::new(),
            shared: Arc::new(Shared::default()),
            jobs: VecDeque::new(),
            running: HashMap::new(),
            starting: None,
            spare_token: None,
            stateful: Stateful::default(),
            last_now: now,
            page_size,
            stateless,
            drain_deadline: None,
        }
    }

    /// The underlying session (state, negotiated version, stats).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// A handle for changing registrations from anywhere.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle::new(self.outbox.clone(), self.shared.clone())
    }

    /// Sets the hook called when a job or handle pushed work from outside the state machine:
    /// the driver should then run its loop once (drain `poll_transmit`).
    pub fn set_waker(&mut self, hook: WakeHook) {
        self.outbox.set_wake_hook(hook);
    }

    /// One frame (one JSON text) from the client. Before any `initialize`, a request carrying
    /// 2026-07-28 `_meta` is served statelessly (docs/stateless.md); the rest goes to the session.
    pub fn handle_input(&mut self, now: Instant, frame: Bytes) {
        self.last_now = now;
        self.drain_outbox();
        if let Some(frame) = self.route_input(now, frame) {
            self.session.handle_input(now, frame);
        }
        self.process();
    }

    /// [`Server::handle_input`] for a frame the transport already decoded (`incoming` is
    /// `jsonrpc::decode(&frame)`'s result, e.g. the HTTP endpoint's, which reads the request
    /// ids first): the same routing, without decoding the frame a second time.
    pub fn handle_decoded(&mut self, now: Instant, frame: Bytes, incoming: Incoming) {
        self.last_now = now;
        self.drain_outbox();
        // `route_input` hands back the very frame it was given, or nothing.
        if let Some(frame) = self.route_input(now, frame) {
            self.session.handle_decoded(now, &frame, incoming);
        }
        self.process();
    }

    /// Fires due timers.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.last_now = now;
        self.drain_outbox();
        self.session.handle_timeout(now);
        self.process();
    }

    /// The framer could not produce a frame (e.g. an over-long line); see
    /// `Session::handle_decode_error`.
    pub fn handle_decode_error(&mut self, now: Instant, error: FrameError) {
        self.last_now = now;
        self.session.handle_decode_error(now, error);
        self.process();
    }

    /// Drains what handles and jobs pushed, with a fresh time: call it when the wake hook
    /// fired, so server→client requests sent since then (sampling, elicitation, roots) start
    /// their deadlines now rather than at the last `handle_*` (which is what `poll_transmit`,
    /// having no `now`, uses).
    pub fn handle_wake(&mut self, now: Instant) {
        self.last_now = now;
        self.process();
    }

    /// Closes the session; running handlers see their cancellation.
    pub fn close(&mut self, now: Instant) {
        self.last_now = now;
        self.end_listen_streams();
        self.session.close(now);
        self.process();
    }

    /// Appends one message to `buf` (see `Session::poll_transmit`).
    #[must_use]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
        self.process();
        if let Some(transmit) = self.poll_stateless_transmit(buf) {
            return Some(transmit);
        }
        self.session.poll_transmit(buf)
    }

    /// The next deadline.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let session = self.session.poll_timeout();
        match (session, self.drain_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether [`Server::poll_transmit`] and [`Server::poll_stream_close`] would hand out
    /// nothing now: no session event to dispatch, no handler result or handle command in the
    /// outbox, no message queued. A driver holding response streams open uses it to leave them
    /// alone after inputs that gave this server nothing to send. Another thread may push to
    /// the outbox right after; that push rings the wake hook, as always.
    #[must_use]
    pub fn is_quiet(&self) -> bool {
        !self.session.has_transmit()
            && !self.session.has_event()
            && self.stateful.stream_closes.is_empty()
            && self.stateless.queue.is_empty()
            && self.outbox.is_empty()
    }

    /// A handler future still pending after its first poll: run it to completion on any
    /// executor. Its reply arrives through the outbox (and the wake hook).
    #[must_use]
    pub fn poll_job(&mut self) -> Option<Job> {
        self.jobs.pop_front()
    }

    /// An inbound request whose handler asked to end its response stream early
    /// (`RequestContext::close_sse_stream`), for an HTTP transport to act on. Requests queued
    /// before a message that `poll_transmit` returns come out before it is routed.
    #[must_use]
    pub fn poll_stream_close(&mut self) -> Option<RequestId> {
        self.stateful.stream_closes.pop_front()
    }

    /// Events the server does not consume: `Initialized`, `Closed` and client notifications
    /// such as `notifications/roots/list_changed`.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.stateful.events.pop_front()
    }

    /// Gives back the memory of drained queues and buffers, the session's among them (see
    /// [`Session::release_spare_capacity`]): for a driver holding many idle servers.
    pub fn release_spare_capacity(&mut self) {
        self.session.release_spare_capacity();
        // Off the request path of a sync handler: freed whole.
        release_spare(&mut self.stateful.events, 0);
        release_spare(&mut self.jobs, 0);
        release_spare(&mut self.stateful.stream_closes, 0);
    }

    /// Sends `notifications/resources/updated` for `uri` if the client subscribed to it.
    pub fn notify_resource_updated(&mut self, uri: &str) {
        self.resource_updated(uri);
    }

    /// Optional outbox items dropped because the outbox was full.
    pub fn outbox_dropped(&self) -> u64 {
        self.outbox.dropped()
    }

    /// Handles session events and outbox items until neither has anything left.
    fn process(&mut self) {
        loop {
            let mut progressed = false;
            while let Some(event) = self.session.poll_event() {
                progressed = true;
                self.handle_event(event);
            }
            progressed |= self.drain_outbox();
            if !progressed {
                break;
            }
        }
        if self.drain_deadline.is_some() {
            self.close_if_drained();
        }
    }

    /// Applies every outbox item; whether there was any.
    fn drain_outbox(&mut self) -> bool {
        self.outbox.drain_into(&mut self.outbox_items);
        let any = !self.outbox_items.is_empty();
        while let Some(item) = self.outbox_items.pop_front() {
            self.apply(item);
        }
        any
    }

    fn apply(&mut self, item: OutboxItem) {
        let Some(item) = self.stateless_apply(item) else {
            return;
        };
        match item {
            OutboxItem::ResourceUpdated { uri } => self.resource_updated(&uri),
            OutboxItem::Change(change) => self.change(change),
            other => self.session_apply(other),
        }
    }

    /// A resource changed: the listen streams that asked for it, and the session if its client
    /// subscribed to it.
    fn resource_updated(&mut self, uri: &str) {
        self.listen_change(ListenChange::ResourceUpdated {
            uri: uri.to_owned(),
        });
        self.notify_subscribers(uri);
    }

    fn change(&mut self, change: RegistryChange) {
        // Copy on write: the first change of this server parts from the shared registry.
        let r = Arc::make_mut(&mut self.registry);
        let (changed, method) = match change {
            RegistryChange::AddTool(t) => (
                {
                    r.insert_tool(*t);
                    true
                },
                m::NOTIFICATIONS_TOOLS_LIST_CHANGED,
            ),
            RegistryChange::RemoveTool(n) => (
                r.tools.remove(&n).is_some(),
                m::NOTIFICATIONS_TOOLS_LIST_CHANGED,
            ),
            RegistryChange::AddResource(x) => (
                {
                    r.resources.insert(x.def.uri.clone(), Arc::from(x));
                    true
                },
                m::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
            ),
            RegistryChange::RemoveResource(u) => (
                r.resources.remove(&u).is_some(),
                m::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
            ),
            RegistryChange::AddTemplate(t) => {
                let key = t.template.as_str().to_owned();
                r.templates.insert(key, Arc::from(t));
                (true, m::NOTIFICATIONS_RESOURCES_LIST_CHANGED)
            }
            RegistryChange::RemoveTemplate(k) => (
                r.templates.remove(&k).is_some(),
                m::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
            ),
            RegistryChange::AddPrompt(p) => (
                {
                    r.prompts.insert(p.def.name.clone(), Arc::from(p));
                    true
                },
                m::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
            ),
            RegistryChange::RemovePrompt(n) => (
                r.prompts.remove(&n).is_some(),
                m::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
            ),
        };
        if !changed {
            return;
        }
        if let Some(event) = ListenChange::from_list_changed(method) {
            self.listen_change(event);
        }
        self.notify_list_changed(method);
    }

    /// Runs a handler future as a job: polled once inline, queued for the driver if pending.
    fn spawn(&mut self, job: Job) {
        if let Some(pending) = first_poll(job) {
            self.jobs.push_back(pending);
        }
    }
}

impl Drop for Server {
    /// A dropped server is closed for its handles: application tasks watching
    /// `ServerHandle::is_closed` (timers, watchers) stop with it, also for the one-exchange
    /// servers a stateless transport builds and drops per request.
    fn drop(&mut self) {
        self.shared.mark_closed();
    }
}
