//! Resources and resource templates: definitions, the read a handler sees, and contents.

use serde_json::{Map, Value};

use super::context::RequestContext;
use super::types::{handler_setters, icons_json, put, Handler};
use crate::app::server::uri_template::{TemplateError, UriTemplate};
use crate::model::{Icon, ResourceContents};

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

/// Fields shared by resources and resource templates.
#[derive(Clone, Debug, Default)]
struct ResourceMeta {
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    icons: Option<Vec<Icon>>,
}

impl ResourceMeta {
    fn fill(&self, m: &mut Map<String, Value>) {
        put(m, "title", self.title.clone().map(Value::String));
        put(
            m,
            "description",
            self.description.clone().map(Value::String),
        );
        put(m, "mimeType", self.mime_type.clone().map(Value::String));
        put(m, "icons", icons_json(&self.icons));
    }
}

/// Generates the title/description/mimeType/icons setters.
macro_rules! meta_setters {
    () => {
        /// A human-readable title.
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.meta.title = Some(title.into());
            self
        }

        /// A description.
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.meta.description = Some(description.into());
            self
        }

        /// The MIME type.
        pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
            self.meta.mime_type = Some(mime.into());
            self
        }

        /// Icons.
        pub fn icons(mut self, icons: Vec<Icon>) -> Self {
            self.meta.icons = Some(icons);
            self
        }
    };
}

/// A fixed resource and its read handler.
#[derive(Clone)]
pub struct Resource {
    pub(crate) uri: String,
    name: String,
    meta: ResourceMeta,
    pub(crate) handler: Option<Handler<ResourceRead, Vec<ResourceContents>>>,
}

impl Resource {
    /// A resource at `uri` called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            meta: ResourceMeta::default(),
            handler: None,
        }
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    meta_setters!();
    handler_setters!(ResourceRead, Vec<ResourceContents>);

    /// The `Resource` object of `resources/list`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("uri".into(), Value::String(self.uri.clone()));
        m.insert("name".into(), Value::String(self.name.clone()));
        self.meta.fill(&mut m);
        Value::Object(m)
    }
}

/// A family of resources named by an RFC 6570 level-1 template, and its read handler.
#[derive(Clone)]
pub struct ResourceTemplate {
    pub(crate) template: UriTemplate,
    name: String,
    meta: ResourceMeta,
    pub(crate) handler: Option<Handler<ResourceRead, Vec<ResourceContents>>>,
}

impl ResourceTemplate {
    /// A template such as `test://template/{id}/data`; errors when it is not level 1.
    pub fn new(uri_template: &str, name: impl Into<String>) -> Result<Self, TemplateError> {
        Ok(ResourceTemplate {
            template: UriTemplate::parse(uri_template)?,
            name: name.into(),
            meta: ResourceMeta::default(),
            handler: None,
        })
    }

    /// The template text.
    pub fn uri_template(&self) -> &str {
        self.template.as_str()
    }

    meta_setters!();
    handler_setters!(ResourceRead, Vec<ResourceContents>);

    /// The `ResourceTemplate` object of `resources/templates/list`.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "uriTemplate".into(),
            Value::String(self.template.as_str().to_owned()),
        );
        m.insert("name".into(), Value::String(self.name.clone()));
        self.meta.fill(&mut m);
        Value::Object(m)
    }
}
