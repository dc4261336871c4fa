//! The registries a server answers from, and the builder that fills them and derives the
//! capabilities the server declares.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::Map;

use super::listen::DEFAULT_MAX_LISTENERS;
use super::modern::Modern;
use super::{CompletionFn, Prompt, Resource, ResourceTemplate, Tool};
use super::{Server, Tasks};
use crate::config::Config;
use crate::model::modern::CacheHints;
use crate::model::{
    Implementation, ListChangedCapability, ResourcesCapability, ServerCapabilities,
};
use crate::session::ServerSetup;
use crate::stateless::{ReplayGuard, RequestStateKey, ServerProfile};
use crate::tasks::TASKS_EXTENSION;

/// Everything registered, each map ordered by its list key (keyset pagination needs order).
#[derive(Clone, Default)]
pub(crate) struct Registry {
    pub(crate) tools: BTreeMap<String, Tool>,
    pub(crate) resources: BTreeMap<String, Resource>,
    pub(crate) templates: BTreeMap<String, ResourceTemplate>,
    pub(crate) prompts: BTreeMap<String, Prompt>,
    pub(crate) completion: Option<CompletionFn>,
    /// Whether tool schemas assert `format`.
    pub(crate) formats: bool,
}

impl Registry {
    /// Registers a tool (replacing one of the same name), its schemas compiled with this
    /// server's `format` setting.
    pub(crate) fn insert_tool(&mut self, tool: Tool) {
        let tool = tool.with_formats(self.formats);
        self.tools.insert(tool.name.clone(), tool);
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
        self.registry.tools.insert(tool.name.clone(), tool);
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
            .insert(resource.uri.clone(), resource);
        self
    }

    /// Registers a resource template.
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        let key = template.template.as_str().to_owned();
        self.registry.templates.insert(key, template);
        self
    }

    /// Registers a prompt.
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.registry.prompts.insert(prompt.name.clone(), prompt);
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
        Ok(self.build(now))
    }

    /// Builds the server (wrapping `Session::server`). Unchecked: see
    /// [`ServerBuilder::try_build`].
    pub fn build(mut self, now: Instant) -> Server {
        let tools = std::mem::take(&mut self.registry.tools);
        for tool in tools.into_values() {
            self.registry.insert_tool(tool);
        }
        let setup = ServerSetup {
            info: self.info.clone(),
            capabilities: self.capabilities(),
            instructions: self.instructions.clone(),
        };
        let mut profile = self.profile(&setup.capabilities);
        if self.tasks.is_some() {
            let extensions = profile.capabilities.extensions.get_or_insert_with(Map::new);
            extensions.insert(TASKS_EXTENSION.into(), serde_json::json!({}));
        }
        let mut modern = Modern::new(profile, now);
        modern.tasks = self.tasks;
        modern.cache = self.stateless_cache;
        modern.state_key = self.request_state_key;
        modern.listeners.max = self.max_listeners;
        modern.replay_guard = self.replay_guard;
        Server::from_parts(self.config, setup, self.registry, modern, now)
    }
}

/// Why [`ServerBuilder::try_build`] refused the registrations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// A tool's input schema has an invalid `x-mcp-header` annotation.
    InvalidHeaderAnnotation {
        /// The tool.
        tool: String,
        /// What is wrong, naming the property.
        reason: crate::app::client::modern::InvalidHeaderAnnotation,
    },
    /// A tool's input or output schema does not compile.
    InvalidSchema {
        /// The tool.
        tool: String,
        /// Why.
        reason: crate::app::schema::InvalidSchema,
    },
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::InvalidHeaderAnnotation { tool, reason } => {
                write!(f, "tool `{tool}`: {reason}")
            }
            BuildError::InvalidSchema { tool, reason } => write!(f, "tool `{tool}`: {reason}"),
        }
    }
}

impl std::error::Error for BuildError {}
