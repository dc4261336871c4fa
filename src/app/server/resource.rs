//! Resources and resource templates: definitions, the read a handler sees, and contents.

use super::builder::BuildError;
use super::context::RequestContext;
use super::types::{handler_setters, Handler};
use crate::app::server::uri_template::UriTemplate;
use crate::model::{self, Icon, ResourceContents};

/// A `resources/read` as the handler sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceRead {
    /// The requested URI.
    pub uri: String,
    /// Template variables matched from the URI (empty for a fixed resource).
    pub variables: Vec<(String, String)>,
}

impl ResourceRead {
    /// The value of template variable `name`.
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Generates the title/description/mimeType/icons setters.
macro_rules! meta_setters {
    () => {
        /// A human-readable title.
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.def.title = Some(title.into());
            self
        }

        /// A description.
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.def.description = Some(description.into());
            self
        }

        /// The MIME type.
        pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
            self.def.mime_type = Some(mime.into());
            self
        }

        /// Icons.
        pub fn icons(mut self, icons: Vec<Icon>) -> Self {
            self.def.icons = Some(icons);
            self
        }
    };
}

/// A fixed resource to register: its wire definition ([`model::Resource`]) and its read
/// handler.
#[derive(Clone)]
pub struct Resource {
    pub(crate) def: model::Resource,
    pub(crate) handler: Option<Handler<ResourceRead, Vec<ResourceContents>>>,
}

impl Resource {
    /// A resource at `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource::from_definition(model::Resource {
            uri: uri.into(),
            name: name.into(),
            ..model::Resource::default()
        })
    }

    /// A resource from its wire definition (as a client lists it, or as a proxy relays it).
    pub fn from_definition(def: model::Resource) -> Self {
        Resource { def, handler: None }
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.def.uri
    }

    /// The definition `resources/list` shows.
    pub fn definition(&self) -> &model::Resource {
        &self.def
    }

    meta_setters!();
    handler_setters!(ResourceRead, Vec<ResourceContents>);
}

/// A family of resources named by an RFC 6570 level-1 template, to register: its wire
/// definition ([`model::ResourceTemplate`]), the parsed template, and its read handler.
#[derive(Clone)]
pub struct ResourceTemplate {
    pub(crate) def: model::ResourceTemplate,
    pub(crate) template: UriTemplate,
    pub(crate) handler: Option<Handler<ResourceRead, Vec<ResourceContents>>>,
}

impl ResourceTemplate {
    /// A template such as `test://template/{id}/data`; errors when it is not level 1
    /// ([`BuildError::InvalidTemplate`]).
    pub fn new(uri_template: &str, name: impl Into<String>) -> Result<Self, BuildError> {
        ResourceTemplate::from_definition(model::ResourceTemplate {
            uri_template: uri_template.to_owned(),
            name: name.into(),
            ..model::ResourceTemplate::default()
        })
    }

    /// A template from its wire definition; errors when its template is not level 1.
    pub fn from_definition(def: model::ResourceTemplate) -> Result<Self, BuildError> {
        let template =
            UriTemplate::parse(&def.uri_template).map_err(|e| BuildError::InvalidTemplate {
                template: def.uri_template.clone(),
                reason: e.0,
            })?;
        Ok(ResourceTemplate {
            template,
            def,
            handler: None,
        })
    }

    /// The template text.
    pub fn uri_template(&self) -> &str {
        self.template.as_str()
    }

    /// The definition `resources/templates/list` shows.
    pub fn definition(&self) -> &model::ResourceTemplate {
        &self.def
    }

    meta_setters!();
    handler_setters!(ResourceRead, Vec<ResourceContents>);
}
