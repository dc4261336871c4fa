//! `ClientBuilder`: what the client can do (sampling, elicitation, roots) and how it is
//! configured. Capabilities are derived from what was registered, never declared by hand.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Map;

use super::admission::Admission;
use super::elicitation::accept_with_defaults;
use super::policy::{ElicitationPolicy, SamplingPolicy};
use super::types::HandlerContext;
use super::Client;
use crate::config::Config;
use crate::jsonrpc::ErrorObject;
use crate::model::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult,
    ElicitationCapability, Implementation, ListChangedCapability, ListRootsResult, ProtocolVersion,
    Root, SamplingCapability,
};
use crate::runtime::BoxFuture;
use crate::session::ClientSetup;

/// A type-erased handler of one kind of server→client request: params in, result or JSON-RPC
/// error out, as a future (sync handlers return a ready one).
pub(crate) type ClientHandlerFn<I, O> =
    Arc<dyn Fn(I, HandlerContext) -> BoxFuture<Result<O, ErrorObject>> + Send + Sync + 'static>;

fn boxed<I, O, F, Fut>(f: F) -> ClientHandlerFn<I, O>
where
    F: Fn(I, HandlerContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ErrorObject>> + Send + 'static,
{
    Arc::new(move |i, ctx| Box::pin(f(i, ctx)))
}

fn boxed_sync<I, O, F>(f: F) -> ClientHandlerFn<I, O>
where
    F: Fn(I, &HandlerContext) -> Result<O, ErrorObject> + Send + Sync + 'static,
    O: Send + 'static,
{
    Arc::new(move |i, ctx| Box::pin(std::future::ready(f(i, &ctx))))
}

/// The handlers a client registered, shared with the state machine.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<ClientHandlerFn<CreateMessageParams, CreateMessageResult>>,
    pub(crate) elicitation: Option<ClientHandlerFn<ElicitParams, ElicitResult>>,
    /// The roots answered to `roots/list` when no roots handler is registered.
    pub(crate) roots: Option<Arc<Mutex<Vec<Root>>>>,
    /// Answers `roots/list` (before the fixed list) when registered.
    pub(crate) roots_handler: Option<ClientHandlerFn<(), ListRootsResult>>,
}

impl Handlers {
    /// Whether the client declares `roots`: a fixed list or a handler.
    pub(crate) fn has_roots(&self) -> bool {
        self.roots.is_some() || self.roots_handler.is_some()
    }
}

/// Builds a [`Client`]; see docs/app-api.md.
pub struct ClientBuilder {
    info: Implementation,
    config: Config,
    protocol_version: Option<ProtocolVersion>,
    handlers: Handlers,
    elicitation_url: bool,
    sampling_policy: Option<SamplingPolicy>,
    elicitation_policy: Option<ElicitationPolicy>,
}

impl Client {
    /// Starts building a client that introduces itself as `info`.
    pub fn builder(info: Implementation) -> ClientBuilder {
        ClientBuilder {
            info,
            config: Config::default(),
            protocol_version: None,
            handlers: Handlers::default(),
            elicitation_url: false,
            sampling_policy: None,
            elicitation_policy: None,
        }
    }
}

impl ClientBuilder {
    /// The session configuration (timeouts, limits, supported versions).
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The version offered in `initialize` (default: the newest one the config supports).
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.protocol_version = Some(version);
        self
    }

    /// Answers `sampling/createMessage` with an async handler; declares `sampling`.
    pub fn sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CreateMessageParams, HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.sampling = Some(boxed(f));
        self
    }

    /// Answers `sampling/createMessage` with a sync handler; declares `sampling`.
    pub fn sampling_sync<F>(mut self, f: F) -> Self
    where
        F: Fn(CreateMessageParams, &HandlerContext) -> Result<CreateMessageResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.handlers.sampling = Some(boxed_sync(f));
        self
    }

    /// Answers `elicitation/create` with an async handler; declares `elicitation` (form mode,
    /// plus URL mode after [`ClientBuilder::elicitation_url`]).
    pub fn elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ElicitParams, HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.elicitation = Some(boxed(f));
        self
    }

    /// Answers `elicitation/create` with a sync handler; declares `elicitation`.
    pub fn elicitation_sync<F>(mut self, f: F) -> Self
    where
        F: Fn(ElicitParams, &HandlerContext) -> Result<ElicitResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.handlers.elicitation = Some(boxed_sync(f));
        self
    }

    /// Answers every form elicitation by accepting with the schema's defaults (and declines
    /// URL-mode ones): what an unattended client or a conformance run wants.
    pub fn elicitation_with_defaults(self) -> Self {
        self.elicitation_sync(|params, _| Ok(accept_with_defaults(&params, Map::new())))
    }

    /// Also declares URL-mode elicitation (2025-11-25); the handler must handle both modes.
    pub fn elicitation_url(mut self, enabled: bool) -> Self {
        self.elicitation_url = enabled;
        self
    }

    /// Puts `policy` between the server's `sampling/createMessage` and the sampling handler
    /// (which must still be registered; without one the server gets -32601). Applies to
    /// the handshake-era client (`build`), not to the 2026-07-28 one.
    pub fn sampling_policy(mut self, policy: SamplingPolicy) -> Self {
        self.sampling_policy = Some(policy);
        self
    }

    /// Puts `policy` between the server's `elicitation/create` and the elicitation handler,
    /// like [`ClientBuilder::sampling_policy`].
    pub fn elicitation_policy(mut self, policy: ElicitationPolicy) -> Self {
        self.elicitation_policy = Some(policy);
        self
    }

    /// Answers `roots/list` with these roots; declares `roots { listChanged: true }`. Change
    /// them later with `Client::set_roots` or `ClientHandle::set_roots`.
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.handlers.roots = Some(Arc::new(Mutex::new(roots)));
        self
    }

    /// Answers `roots/list` with an async handler (run as a job like the sampling one);
    /// declares `roots { listChanged: true }`. It answers instead of the fixed list of
    /// [`ClientBuilder::roots`]; `set_roots` still tells the server the list changed.
    pub fn roots_handler<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(HandlerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.roots_handler = Some(boxed(move |(), ctx| f(ctx)));
        self
    }

    /// Answers `roots/list` with a sync handler, like [`ClientBuilder::roots_handler`].
    pub fn roots_handler_sync<F>(mut self, f: F) -> Self
    where
        F: Fn(&HandlerContext) -> Result<ListRootsResult, ErrorObject> + Send + Sync + 'static,
    {
        self.handlers.roots_handler = Some(boxed_sync(move |(), ctx| f(ctx)));
        self
    }

    /// The capabilities the registrations imply.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.handlers.sampling.is_some() {
            caps.sampling = Some(SamplingCapability::default());
        }
        if self.handlers.elicitation.is_some() {
            let empty = || Some(serde_json::Value::Object(Map::new()));
            caps.elicitation = Some(ElicitationCapability {
                form: empty(),
                url: if self.elicitation_url { empty() } else { None },
                ..Default::default()
            });
        }
        if self.handlers.has_roots() {
            caps.roots = Some(ListChangedCapability {
                list_changed: Some(true),
                ..Default::default()
            });
        }
        caps
    }

    /// What a 2026-07-28 client takes from this builder: identity, capabilities, handlers.
    pub(crate) fn stateless_parts(&self) -> (Implementation, ClientCapabilities, Handlers) {
        (
            self.info.clone(),
            self.capabilities(),
            self.handlers.clone(),
        )
    }

    /// Builds the client (nothing is sent until `initialize`).
    pub fn build(self, now: Instant) -> Client {
        let setup = ClientSetup {
            info: self.info.clone(),
            capabilities: self.capabilities(),
            protocol_version: self
                .protocol_version
                .unwrap_or_else(|| self.config.latest_supported()),
        };
        let admission = Admission::new(self.sampling_policy, self.elicitation_policy);
        Client::from_parts(self.config, setup, self.handlers, admission, now)
    }
}
