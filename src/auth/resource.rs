//! The protected-resource side of MCP authorization (an MCP server as an OAuth 2.1 resource
//! server): [`ProtectedResource`] holds the server's resource identifier, its authorization
//! servers and scope rules, builds its RFC 9728 metadata document and answers requests for it
//! at the well-known URIs (path-inserted and root). The per-request decision lives in
//! `resource_guard`, the challenge headers in `resource_challenge`.

use bytes::Bytes;
use serde_json::Map;

use crate::http::{Body, HttpMethod, HttpRequestHead, HttpResponse};

use super::metadata::ProtectedResourceMetadata;
use super::AuthError;
use crate::url::HttpUrl;

/// The RFC 9728 well-known URI suffix.
pub(crate) const PRM_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The most scope rules (per method plus per tool) one resource holds.
pub const MAX_SCOPE_RULES: usize = 1024;

/// An MCP server as an OAuth protected resource: what it announces and what it requires.
#[derive(Debug, Clone)]
pub struct ProtectedResource {
    pub(super) resource: String,
    pub(super) metadata: ProtectedResourceMetadata,
    pub(super) metadata_url: String,
    metadata_paths: Vec<String>,
    pub(super) realm: Option<String>,
    pub(super) base_scopes: Vec<String>,
    pub(super) method_scopes: Vec<(String, Vec<String>)>,
    pub(super) tool_scopes: Vec<(String, Vec<String>)>,
}

impl ProtectedResource {
    /// The resource `resource_url` (the MCP endpoint URL, e.g. `https://mcp.example/mcp`;
    /// made canonical: lowercase scheme and host, no trailing slash) protected by the given
    /// authorization servers (issuer URLs). Errors when the URL is not absolute http(s), has
    /// a query, or no authorization server is named (RFC 9728 via MCP: at least one).
    pub fn new<S: Into<String>>(
        resource_url: &str,
        authorization_servers: impl IntoIterator<Item = S>,
    ) -> Result<Self, AuthError> {
        let url = HttpUrl::parse(resource_url)
            .ok()
            .filter(|u| u.query().is_none() && !resource_url.contains('#'))
            .ok_or_else(|| {
                AuthError::BadMetadata(format!(
                    "resource {resource_url:?} is not an absolute http(s) URL without query"
                ))
            })?;
        let servers: Vec<String> = authorization_servers.into_iter().map(Into::into).collect();
        if servers.is_empty() || servers.iter().any(|s| HttpUrl::parse(s).is_err()) {
            return Err(AuthError::BadMetadata(
                "a protected resource needs at least one http(s) authorization server".into(),
            ));
        }
        let resource = url.canonical();
        let path = url.trimmed_path().to_owned();
        let metadata_url = format!("{}{PRM_WELL_KNOWN}{path}", url.origin());
        let mut metadata_paths = vec![format!("{PRM_WELL_KNOWN}{path}")];
        if !path.is_empty() {
            metadata_paths.push(PRM_WELL_KNOWN.to_owned());
        }
        Ok(Self {
            metadata: ProtectedResourceMetadata {
                resource: resource.clone(),
                authorization_servers: servers,
                scopes_supported: None,
                bearer_methods_supported: Some(vec!["header".into()]),
                resource_name: None,
                extra: Map::new(),
            },
            resource,
            metadata_url,
            metadata_paths,
            realm: None,
            base_scopes: Vec::new(),
            method_scopes: Vec::new(),
            tool_scopes: Vec::new(),
        })
    }

    /// Announces `scopes` as `scopes_supported` in the metadata.
    #[must_use]
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.metadata.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// A human-readable `resource_name` for the metadata.
    #[must_use]
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.metadata.resource_name = Some(name.into());
        self
    }

    /// The `realm` of every challenge (none by default).
    #[must_use]
    pub fn realm(mut self, realm: impl Into<String>) -> Self {
        self.realm = Some(realm.into());
        self
    }

    /// Scopes every request needs (also the `scope` of a 401 challenge).
    #[must_use]
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.base_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes a request with JSON-RPC `method` needs on top of the required ones. Rules past
    /// [`MAX_SCOPE_RULES`] are ignored.
    #[must_use]
    pub fn method_scopes<S: Into<String>>(
        mut self,
        method: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        if self.rule_count() < MAX_SCOPE_RULES {
            let scopes = scopes.into_iter().map(Into::into).collect();
            self.method_scopes.push((method.into(), scopes));
        }
        self
    }

    /// Scopes a `tools/call` of tool `name` needs on top of the required and method ones.
    /// Rules past [`MAX_SCOPE_RULES`] are ignored.
    #[must_use]
    pub fn tool_scopes<S: Into<String>>(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        if self.rule_count() < MAX_SCOPE_RULES {
            let scopes = scopes.into_iter().map(Into::into).collect();
            self.tool_scopes.push((name.into(), scopes));
        }
        self
    }

    fn rule_count(&self) -> usize {
        self.method_scopes.len() + self.tool_scopes.len()
    }

    /// The canonical resource identifier (what token audiences are compared with).
    #[must_use]
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The metadata document.
    #[must_use]
    pub fn metadata(&self) -> &ProtectedResourceMetadata {
        &self.metadata
    }

    /// The metadata's URL, path-inserted (RFC 9728 §3.1): announced in every challenge.
    #[must_use]
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// Whether `path` (query ignored) is one of the well-known URIs the metadata is served
    /// at: the path-inserted one and, for a resource with a path, the root one.
    #[must_use]
    pub fn is_metadata_path(&self, path: &str) -> bool {
        let path = path.split(['?', '#']).next().unwrap_or("");
        let path = if path.len() > 1 {
            path.trim_end_matches('/')
        } else {
            path
        };
        self.metadata_paths.iter().any(|p| p == path)
    }

    /// Answers a request for the metadata document: `None` when `head` is for another path;
    /// otherwise 200 with the JSON document for GET and 405 for other methods. Browser-based
    /// clients read it cross-origin, so any origin may.
    #[must_use]
    pub fn handle_metadata_request(&self, head: &HttpRequestHead) -> Option<HttpResponse> {
        if !self.is_metadata_path(&head.path) {
            return None;
        }
        let resp = match head.method {
            HttpMethod::Get => {
                let body = serde_json::to_vec(&self.metadata).unwrap_or_default();
                HttpResponse {
                    status: 200,
                    headers: vec![("Content-Type".into(), "application/json".into())],
                    body: Body::Full(Bytes::from(body)),
                }
            }
            _ => HttpResponse::status(405).with_header("Allow", "GET"),
        };
        Some(resp.with_header("Access-Control-Allow-Origin", "*"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(url: &str) -> ProtectedResource {
        ProtectedResource::new(url, ["https://as.example"]).expect("valid")
    }

    #[test]
    fn the_resource_is_canonical_and_its_metadata_url_path_inserted() {
        let r = resource("HTTPS://MCP.Example:8443/public/mcp/");
        assert_eq!(r.resource(), "https://mcp.example:8443/public/mcp");
        assert_eq!(
            r.metadata_url(),
            "https://mcp.example:8443/.well-known/oauth-protected-resource/public/mcp"
        );
        assert!(r.is_metadata_path("/.well-known/oauth-protected-resource/public/mcp"));
        assert!(r.is_metadata_path("/.well-known/oauth-protected-resource"));
        assert!(r.is_metadata_path("/.well-known/oauth-protected-resource/?x=1"));
        assert!(!r.is_metadata_path("/.well-known/oauth-protected-resource/other"));
        assert!(!r.is_metadata_path("/public/mcp"));
    }

    #[test]
    fn a_root_resource_has_one_well_known_path() {
        let r = resource("http://127.0.0.1:9000");
        assert_eq!(
            r.metadata_url(),
            "http://127.0.0.1:9000/.well-known/oauth-protected-resource"
        );
        assert!(r.is_metadata_path("/.well-known/oauth-protected-resource"));
    }

    #[test]
    fn bad_configurations_are_refused() {
        let none: [&str; 0] = [];
        assert!(ProtectedResource::new("https://mcp.example/mcp", none).is_err());
        assert!(ProtectedResource::new("https://mcp.example/mcp", ["not a url"]).is_err());
        assert!(ProtectedResource::new("/mcp", ["https://as.example"]).is_err());
        assert!(
            ProtectedResource::new("https://mcp.example/mcp?x=1", ["https://as.example"]).is_err()
        );
        assert!(
            ProtectedResource::new("https://mcp.example/mcp#f", ["https://as.example"]).is_err()
        );
    }

    #[test]
    fn the_document_parses_back_with_every_member() {
        let r = resource("https://mcp.example/mcp")
            .scopes_supported(["files:read", "files:write"])
            .resource_name("Files");
        let head =
            HttpRequestHead::new(HttpMethod::Get, "/.well-known/oauth-protected-resource/mcp");
        let resp = r.handle_metadata_request(&head).expect("served");
        assert_eq!(resp.status, 200);
        assert_eq!(resp.get("content-type"), Some("application/json"));
        let doc = ProtectedResourceMetadata::parse(resp.body_text().as_bytes()).expect("parses");
        assert_eq!(doc.resource, "https://mcp.example/mcp");
        assert_eq!(doc.authorization_servers, ["https://as.example"]);
        assert_eq!(
            doc.scopes_supported.as_deref(),
            Some(&["files:read".to_owned(), "files:write".to_owned()][..])
        );
        assert_eq!(
            doc.bearer_methods_supported.as_deref(),
            Some(&["header".to_owned()][..])
        );
        assert_eq!(doc.resource_name.as_deref(), Some("Files"));
    }

    #[test]
    fn other_methods_and_paths() {
        let r = resource("https://mcp.example/mcp");
        let post = HttpRequestHead::new(HttpMethod::Post, "/.well-known/oauth-protected-resource");
        assert_eq!(
            r.handle_metadata_request(&post).map(|r| r.status),
            Some(405)
        );
        let mcp = HttpRequestHead::new(HttpMethod::Get, "/mcp");
        assert!(r.handle_metadata_request(&mcp).is_none());
    }
}
