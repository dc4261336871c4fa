//! The registries a server answers from, and the builder that fills them and derives the
//! capabilities the server declares.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Map;

use super::stateless::listen::DEFAULT_MAX_LISTENERS;
use super::stateless::Stateless;
use super::{CompletionFn, Prompt, Resource, ResourceTemplate, Tool};
use super::{Server, Tasks};
use crate::config::Config;
use crate::model::stateless::CacheHints;
use crate::model::{
    Implementation, ListChangedCapability, ResourcesCapability, ServerCapabilities,
};
use crate::session::ServerSetup;
use crate::stateless::{ReplayGuard, RequestStateKey, ServerProfile};
use crate::tasks::TASKS_EXTENSION;

/// Everything registered, each map ordered by its list key (keyset pagination needs order).
/// Servers made by one [`ServerFactory`] share one registry (an `Arc`); a server whose
/// registrations change ([`super::ServerHandle`]) copies the maps first, and since every entry
/// is itself shared, that copy holds pointers, not tool definitions.
#[derive(Clone, Default)]
pub(crate) struct Registry {
    pub(crate) tools: BTreeMap<String, Arc<Tool>>,
    pub(crate) resources: BTreeMap<String, Arc<Resource>>,
    pub(crate) templates: BTreeMap<String, Arc<ResourceTemplate>>,
    pub(crate) prompts: BTreeMap<String, Arc<Prompt>>,
    pub(crate) completion: Option<CompletionFn>,
    /// Whether tool schemas assert `format`.
    pub(crate) formats: bool,
}

impl Registry {
    /// Registers a tool (replacing one of the same name), its schemas compiled with this
    /// server's `format` setting.
    pub(crate) fn insert_tool(&mut self, tool: Tool) {
        let tool = tool.with_formats(self.formats);
        self.tools.insert(tool.def.name.clone(), Arc::new(tool));
    }
}

/// Builds a [`Server`]. Capabilities follow from what is registered: `tools`, `resources`
/// (`subscribe` and `listChanged`), `prompts` (each with `listChanged: true`) when at least one
/// item is registered or the family was enabled; `completions` when a provider is set;
/// `logging` always.
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    config: Config,
    registry: Registry,
    enable_tools: bool,
    enable_resources: bool,
    enable_prompts: bool,
    stateless_cache: CacheHints,
    request_state_key: Option<RequestStateKey>,
    max_listeners: usize,
    replay_guard: Option<ReplayGuard>,
    tasks: Option<Tasks>,
}

impl Server {
    /// Starts building a server that introduces itself as `info`.
    pub fn builder(info: Implementation) -> ServerBuilder {
        ServerBuilder {
            info,
            instructions: None,
            config: Config::default(),
            registry: Registry::default(),
            enable_tools: false,
            enable_resources: false,
            enable_prompts: false,
            stateless_cache: CacheHints::NO_STORE,
            request_state_key: None,
            max_listeners: DEFAULT_MAX_LISTENERS,
            replay_guard: None,
            tasks: None,
        }
    }
}

impl ServerBuilder {
    /// Instructions for the client (sent in the `initialize` result).
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Session and list settings (`page_size` among them).
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Registers a tool (replacing one of the same name). [`ServerBuilder::try_build`]
    /// refuses a tool whose schema does not compile.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.registry
            .tools
            .insert(tool.def.name.clone(), Arc::new(tool));
        self
    }

    /// Whether tool input and output schemas assert `format` (`date-time`, `email`, `uri`,
    /// …); off by default, as JSON Schema 2020-12 has it (`format` is then an annotation).
    pub fn validate_formats(mut self, yes: bool) -> Self {
        self.registry.formats = yes;
        self
    }

    /// Registers a fixed resource.
    pub fn resource(mut self, resource: Resource) -> Self {
        self.registry
            .resources
            .insert(resource.def.uri.clone(), Arc::new(resource));
        self
    }

    /// Registers a resource template.
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        let key = template.template.as_str().to_owned();
        self.registry.templates.insert(key, Arc::new(template));
        self
    }

    /// Registers a prompt.
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.registry
            .prompts
            .insert(prompt.def.name.clone(), Arc::new(prompt));
        self
    }

    /// Sets the `completion/complete` provider (declares `completions`).
    pub fn completion(mut self, provider: CompletionFn) -> Self {
        self.registry.completion = Some(provider);
        self
    }

    /// Declares `tools` even with none registered yet (to add some at run time).
    pub fn enable_tools(mut self) -> Self {
        self.enable_tools = true;
        self
    }

    /// Declares `resources` even with none registered yet.
    pub fn enable_resources(mut self) -> Self {
        self.enable_resources = true;
        self
    }

    /// Declares `prompts` even with none registered yet.
    pub fn enable_prompts(mut self) -> Self {
        self.enable_prompts = true;
        self
    }

    /// Cache hints (`ttlMs`, `cacheScope`) of cacheable 2026-07-28 results (the lists and
    /// `resources/read`); by default `0` and `private` (not to be reused).
    pub fn stateless_cache(mut self, hints: CacheHints) -> Self {
        self.stateless_cache = hints;
        self
    }

    /// The key (and lifetime) that integrity-protects the `requestState` of 2026-07-28
    /// input-required results. Without one, none is minted and a retry carrying one is refused.
    pub fn request_state_key(mut self, key: RequestStateKey) -> Self {
        self.request_state_key = Some(key);
        self
    }

    /// Makes every `requestState` single use: a retry presenting a state that `guard` has
    /// already seen redeemed (and that has not expired) is refused with -32602. Share one
    /// guard (it is a cloneable handle) among every server that verifies states with the same
    /// key, e.g. all HTTP exchange machines. Enable it when an input round authorises a
    /// one-time action (a payment, a deletion): without it, binding + expiry bound a replay
    /// to the same request within the state's lifetime, and a client may legitimately retry
    /// with the same state (a lost response, a rejected answer).
    pub fn request_state_replay_guard(mut self, guard: ReplayGuard) -> Self {
        self.replay_guard = Some(guard);
        self
    }

    /// Listen streams (`subscriptions/listen`) one server holds at most
    /// ([`DEFAULT_MAX_LISTENERS`] by default); one more is refused with an internal error.
    /// `0` serves no listen stream, and `server/discover` then declares no `listChanged` /
    /// `subscribe`.
    pub fn max_listeners(mut self, max: usize) -> Self {
        self.max_listeners = max;
        self
    }

    /// What 2026-07-28 clients are told in `server/discover`: the same capabilities (the
    /// `listChanged` / `subscribe` ones travel on listen streams, so they go when no listen
    /// stream may open), and the stateful versions the session config allows after the
    /// stateless ones.
    fn profile(&self, capabilities: &ServerCapabilities) -> ServerProfile {
        let mut caps = capabilities.clone();
        if self.max_listeners == 0 {
            for family in [&mut caps.tools, &mut caps.prompts].into_iter().flatten() {
                family.list_changed = None;
            }
            if let Some(resources) = &mut caps.resources {
                resources.list_changed = None;
                resources.subscribe = None;
            }
        }
        let mut profile = ServerProfile::new(self.info.clone(), caps).dual_era();
        let allowed = &self.config.supported_versions;
        profile
            .supported_versions
            .retain(|v| !v.is_stateful() || allowed.contains(v));
        profile.instructions = self.instructions.clone();
        profile
    }

    fn capabilities(&self) -> ServerCapabilities {
        let r = &self.registry;
        let listed = || ListChangedCapability {
            list_changed: Some(true),
            ..Default::default()
        };
        ServerCapabilities {
            logging: Some(Map::new()),
            completions: r.completion.as_ref().map(|_| Map::new()),
            tools: (self.enable_tools || !r.tools.is_empty()).then(listed),
            prompts: (self.enable_prompts || !r.prompts.is_empty()).then(listed),
            resources: (self.enable_resources
                || !r.resources.is_empty()
                || !r.templates.is_empty())
            .then(|| ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// Enables the tasks extension (2026-07-28, `io.modelcontextprotocol/tasks`) with the
    /// shared table `tasks`: `server/discover` advertises it, tools registered with
    /// `Tool::task_support` may run as tasks, and `tasks/get|update|cancel` are served. Give
    /// every machine of one server the same table (clones share it).
    pub fn tasks(mut self, tasks: Tasks) -> Self {
        self.tasks = Some(tasks);
        self
    }

    /// Builds the server like [`ServerBuilder::build`] after checking that every registered
    /// tool's schemas compile and its `x-mcp-header` annotations ([`super::check_header_annotations`]): a tool that a
    /// 2026-07-28 client would drop from its listing is a registration error here.
    pub fn try_build(self, now: Instant) -> Result<Server, BuildError> {
        Ok(self.try_build_factory()?.server(now))
    }

    /// Builds the server (wrapping `Session::server`). Unchecked: see
    /// [`ServerBuilder::try_build`].
    pub fn build(self, now: Instant) -> Server {
        self.build_factory().server(now)
    }

    /// [`ServerBuilder::build_factory`] after the checks of [`ServerBuilder::try_build`].
    pub fn try_build_factory(self) -> Result<ServerFactory, BuildError> {
        for (name, tool) in &self.registry.tools {
            if let Some(e) = tool.schema_error() {
                return Err(BuildError::InvalidSchema {
                    tool: name.clone(),
                    reason: e.clone(),
                });
            }
            if let Err(reason) = super::check_header_annotations(tool.input_schema.document()) {
                return Err(BuildError::InvalidHeaderAnnotation {
                    tool: name.clone(),
                    reason,
                });
            }
        }
        Ok(self.build_factory())
    }

    /// Builds the definitions once, for many servers: every [`ServerFactory::server`] shares
    /// the registered tools (with their schemas and handlers), resources, templates, prompts,
    /// completion provider and declared capabilities, and holds only its own session state.
    /// An HTTP endpoint serving many sessions calls it once and `server(now)` per session.
    /// Unchecked: see [`ServerBuilder::try_build_factory`].
    pub fn build_factory(mut self) -> ServerFactory {
        let tools = std::mem::take(&mut self.registry.tools);
        for tool in tools.into_values() {
            self.registry.insert_tool(Arc::unwrap_or_clone(tool));
        }
        let setup = Arc::new(ServerSetup {
            info: self.info.clone(),
            capabilities: self.capabilities(),
            instructions: self.instructions.clone(),
        });
        let mut profile = self.profile(&setup.capabilities);
        if self.tasks.is_some() {
            let extensions = profile.capabilities.extensions.get_or_insert_with(Map::new);
            extensions.insert(TASKS_EXTENSION.into(), serde_json::json!({}));
        }
        ServerFactory {
            shared: Arc::new(Definitions {
                config: self.config,
                setup,
                profile: Arc::new(profile),
                registry: Arc::new(self.registry),
                cache: self.stateless_cache,
                state_key: self.request_state_key,
                max_listeners: self.max_listeners,
                replay_guard: self.replay_guard,
                tasks: self.tasks,
            }),
        }
    }
}

/// A server's definitions, built once by [`ServerBuilder::build_factory`], making servers
/// that share them. Cloning it is cheap (one `Arc`), and it is `Send + Sync`, so an HTTP
/// endpoint's per-session factory can hold it.
#[derive(Clone)]
pub struct ServerFactory {
    shared: Arc<Definitions>,
}

/// What every server of one factory shares (the setup and profile by pointer, so a session
/// holds no copy of the server's info and capabilities).
struct Definitions {
    config: Config,
    setup: Arc<ServerSetup>,
    profile: Arc<ServerProfile>,
    registry: Arc<Registry>,
    cache: CacheHints,
    state_key: Option<RequestStateKey>,
    max_listeners: usize,
    replay_guard: Option<ReplayGuard>,
    tasks: Option<Tasks>,
}

impl ServerFactory {
    /// A new server (a new session) answering from the shared definitions.
    pub fn server(&self, now: Instant) -> Server {
        let d = &*self.shared;
        let mut stateless = Stateless::new(d.profile.clone(), now);
        stateless.tasks = d.tasks.clone();
        stateless.cache = d.cache;
        stateless.state_key = d.state_key.clone();
        stateless.listeners.max = d.max_listeners;
        stateless.replay_guard = d.replay_guard.clone();
        Server::from_parts(
            d.config.clone(),
            d.setup.clone(),
            d.registry.clone(),
            stateless,
            now,
        )
    }
}

impl std::fmt::Debug for ServerFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerFactory")
            .field("info", &self.shared.setup.info)
            .finish_non_exhaustive()
    }
}

/// Why a registration was refused: by [`ServerBuilder::try_build`],
/// [`ServerHandle::add_tool`](super::ServerHandle::add_tool) or
/// [`ResourceTemplate::new`](super::ResourceTemplate::new).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// A tool's input schema has an invalid `x-mcp-header` annotation.
    InvalidHeaderAnnotation {
        /// The tool.
        tool: String,
        /// What is wrong, naming the property.
        reason: crate::app::client::stateless::InvalidHeaderAnnotation,
    },
    /// A tool's input or output schema does not compile.
    InvalidSchema {
        /// The tool.
        tool: String,
        /// Why.
        reason: crate::app::server::schema::InvalidSchema,
    },
    /// A resource template is not an RFC 6570 level-1 template.
    InvalidTemplate {
        /// The template text.
        template: String,
        /// Why.
        reason: String,
    },
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::InvalidHeaderAnnotation { tool, reason } => {
                write!(f, "tool `{tool}`: {reason}")
            }
            BuildError::InvalidSchema { tool, reason } => write!(f, "tool `{tool}`: {reason}"),
            BuildError::InvalidTemplate { template, reason } => {
                write!(f, "invalid URI template `{template}`: {reason}")
            }
        }
    }
}

impl std::error::Error for BuildError {}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Instant;

    use serde_json::json;

    use super::super::{CallToolResult, Server, Tool};
    use super::ServerFactory;
    use crate::model::Implementation;

    fn echo(name: &str) -> Tool {
        Tool::new(
            name,
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        )
        .sync_handler(|_, _| Ok(CallToolResult::text("hi")))
    }

    fn factory() -> ServerFactory {
        Server::builder(Implementation::new("shared", "1"))
            .tool(echo("echo"))
            .build_factory()
    }

    /// A template beyond level 1 is refused as a registration, naming the template.
    #[test]
    fn a_template_that_does_not_parse_is_a_build_error() {
        let refused = super::super::ResourceTemplate::new("test://x/{id", "x").err();
        let Some(super::BuildError::InvalidTemplate { template, reason }) = refused else {
            panic!("not refused: {refused:?}");
        };
        assert_eq!(template, "test://x/{id");
        assert!(!reason.is_empty());
        assert!(super::super::ResourceTemplate::new("test://x/{id}", "x").is_ok());
    }

    #[test]
    fn a_factory_is_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<ServerFactory>();
    }

    #[test]
    fn servers_of_one_factory_share_one_registry() {
        let now = Instant::now();
        let factory = factory();
        let a = factory.server(now);
        let b = factory.clone().server(now);
        assert!(Arc::ptr_eq(&a.registry, &b.registry));
        assert!(Arc::ptr_eq(&a.registry, &factory.shared.registry));
        // Two separate builds share nothing.
        let c = factory_built_apart(now);
        assert!(!Arc::ptr_eq(&a.registry, &c.registry));
    }

    fn factory_built_apart(now: Instant) -> Server {
        Server::builder(Implementation::new("shared", "1"))
            .tool(echo("echo"))
            .build(now)
    }

    #[test]
    fn a_change_in_one_server_parts_from_the_shared_registry_alone() {
        let now = Instant::now();
        let factory = factory();
        let mut a = factory.server(now);
        let b = factory.server(now);
        a.handle().add_tool(echo("late")).unwrap();
        a.handle_timeout(now);
        assert!(a.registry.tools.contains_key("late"));
        assert!(!b.registry.tools.contains_key("late"));
        assert!(Arc::ptr_eq(&b.registry, &factory.shared.registry));
        assert!(!Arc::ptr_eq(&a.registry, &b.registry));
        // The copy holds the same tool definitions, not copies of them.
        let (Some(mine), Some(theirs)) =
            (a.registry.tools.get("echo"), b.registry.tools.get("echo"))
        else {
            panic!("echo is registered in both");
        };
        assert!(Arc::ptr_eq(mine, theirs));
    }
}
