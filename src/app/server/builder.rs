//! The registries a server answers from, and the builder that fills them and derives the
//! capabilities the server declares.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::Map;

use super::Server;
use super::{CompletionFn, Prompt, Resource, ResourceTemplate, Tool};
use crate::config::Config;
use crate::model::{
    Implementation, ListChangedCapability, ResourcesCapability, ServerCapabilities,
};
use crate::session::ServerSetup;

/// Everything registered, each map ordered by its list key (keyset pagination needs order).
#[derive(Clone, Default)]
pub(crate) struct Registry {
    pub(crate) tools: BTreeMap<String, Tool>,
    pub(crate) resources: BTreeMap<String, Resource>,
    pub(crate) templates: BTreeMap<String, ResourceTemplate>,
    pub(crate) prompts: BTreeMap<String, Prompt>,
    pub(crate) completion: Option<CompletionFn>,
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

    /// Registers a tool (replacing one of the same name).
    pub fn tool(mut self, tool: Tool) -> Self {
        self.registry.tools.insert(tool.name.clone(), tool);
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

    /// Builds the server (wrapping `Session::server`).
    pub fn build(self, now: Instant) -> Server {
        let setup = ServerSetup {
            info: self.info.clone(),
            capabilities: self.capabilities(),
            instructions: self.instructions.clone(),
        };
        Server::from_parts(self.config, setup, self.registry, now)
    }
}
