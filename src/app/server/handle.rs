//! `ServerHandle`: changes registrations from anywhere (a handler, another thread) through the
//! server's outbox; the server applies them in order and sends the list_changed notifications.

use std::fmt;
use std::sync::Arc;

use super::outbox::{OutboxItem, RegistryChange, Shared};
use super::{BuildError, Prompt, Resource, ResourceTemplate, Tool};
use crate::model::LoggingLevel;
use crate::runtime::Outbox;

/// A cloneable, `Send` handle on a running server.
#[derive(Clone)]
pub struct ServerHandle {
    outbox: Outbox<OutboxItem>,
    shared: Arc<Shared>,
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerHandle").finish_non_exhaustive()
    }
}

impl ServerHandle {
    pub(crate) fn new(outbox: Outbox<OutboxItem>, shared: Arc<Shared>) -> Self {
        ServerHandle { outbox, shared }
    }

    fn change(&self, change: RegistryChange) {
        // Registry changes are never dropped: losing one would desynchronise the lists.
        self.outbox.push_required(OutboxItem::Change(change));
    }

    /// Adds (or replaces) a tool; a tool whose input or output schema does not compile is
    /// refused, with the reason.
    pub fn add_tool(&self, tool: Tool) -> Result<(), BuildError> {
        if let Some(reason) = tool.schema_error().cloned() {
            return Err(BuildError::InvalidSchema {
                tool: tool.def.name,
                reason,
            });
        }
        self.change(RegistryChange::AddTool(Box::new(tool)));
        Ok(())
    }

    /// Removes a tool by name.
    pub fn remove_tool(&self, name: impl Into<String>) {
        self.change(RegistryChange::RemoveTool(name.into()));
    }

    /// Adds (or replaces) a resource.
    pub fn add_resource(&self, resource: Resource) {
        self.change(RegistryChange::AddResource(Box::new(resource)));
    }

    /// Removes a resource by URI.
    pub fn remove_resource(&self, uri: impl Into<String>) {
        self.change(RegistryChange::RemoveResource(uri.into()));
    }

    /// Adds (or replaces) a resource template.
    pub fn add_resource_template(&self, template: ResourceTemplate) {
        self.change(RegistryChange::AddTemplate(Box::new(template)));
    }

    /// Removes a resource template by its template text.
    pub fn remove_resource_template(&self, uri_template: impl Into<String>) {
        self.change(RegistryChange::RemoveTemplate(uri_template.into()));
    }

    /// Adds (or replaces) a prompt.
    pub fn add_prompt(&self, prompt: Prompt) {
        self.change(RegistryChange::AddPrompt(Box::new(prompt)));
    }

    /// Removes a prompt by name.
    pub fn remove_prompt(&self, name: impl Into<String>) {
        self.change(RegistryChange::RemovePrompt(name.into()));
    }

    /// Sends `notifications/resources/updated` for `uri` if the client subscribed to it.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.outbox
            .push(OutboxItem::ResourceUpdated { uri: uri.into() });
    }

    /// Whether the server's session has closed. Application tasks that outlive requests
    /// (timers, watchers) check it to stop with the session: what they push afterwards is
    /// never sent.
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// Whether a message at `level` passes the client's `logging/setLevel`.
    pub fn log_enabled(&self, level: LoggingLevel) -> bool {
        self.shared.passes(level)
    }
}
