//! Resources: descriptions, templates, contents, and the params and results of `resources/*`
//! and `notifications/resources/updated`.
//!
//! Version differences: `title` (2025-06-18), `icons` (2025-11-25), `size` (2025-03-26 in
//! practice; schema 2024-11-05 lacks it), `_meta` on resources and contents (2025-06-18).

use super::{Annotations, Icon};

mcp_object! {
    /// A resource the server can read.
    #[derive(Default)]
    pub struct Resource {
        /// The resource's URI.
        pub uri: String,
        /// Programmatic name.
        pub name: String,
        /// Display name (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        /// What the resource is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
        /// MIME type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mime_type: Option<String>,
        /// Size in bytes before encoding.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub size: Option<u64>,
        /// Display hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub annotations: Option<Annotations>,
        /// Icons (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub icons: Option<Vec<Icon>>,
    }
    meta: "Metadata."
}

mcp_object! {
    /// A family of resources described by an RFC 6570 URI template.
    #[derive(Default)]
    pub struct ResourceTemplate {
        /// The URI template.
        pub uri_template: String,
        /// Programmatic name.
        pub name: String,
        /// Display name (2025-06-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        /// What the resources are.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
        /// MIME type of every matching resource, when they share one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mime_type: Option<String>,
        /// Display hints.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub annotations: Option<Annotations>,
        /// Icons (2025-11-25).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub icons: Option<Vec<Icon>>,
    }
    meta: "Metadata."
}

mcp_object! {
    /// The contents of a resource: text or base64 blob, told apart by which member is present.
    #[derive(Default)]
    pub struct ResourceContents {
        /// The resource's URI.
        pub uri: String,
        /// MIME type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mime_type: Option<String>,
        /// Text contents (`TextResourceContents`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub text: Option<String>,
        /// Base64 contents (`BlobResourceContents`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub blob: Option<String>,
    }
    meta: "Metadata (2025-06-18)."
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            text: Some(text.into()),
            ..Default::default()
        }
    }

    /// Binary contents, already base64-encoded.
    pub fn blob(uri: impl Into<String>, base64: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            blob: Some(base64.into()),
            ..Default::default()
        }
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
        self.mime_type = Some(mime.into());
        self
    }
}

page_result! {
    /// Result of `resources/list`.
    ListResourcesResult {
        /// One page of resources.
        resources: Resource
    }
}

page_result! {
    /// Result of `resources/templates/list`.
    ListResourceTemplatesResult {
        /// One page of templates.
        resource_templates: ResourceTemplate
    }
}

mcp_object! {
    /// Result of `resources/read`.
    #[derive(Default)]
    pub struct ReadResourceResult {
        /// The contents (a template read may yield several resources).
        pub contents: Vec<ResourceContents>,
    }
    meta: "Result metadata."
}
