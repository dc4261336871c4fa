//! The bearer-token guard of the endpoint, in one of two forms:
//! - [`BearerAuth::protect`]: the MCP server as an OAuth protected resource. The core
//!   [`ProtectedResource`] decides everything (metadata at its well-known URIs, 400/401/403
//!   challenges, audience and per-method/per-tool scopes); the application only validates
//!   tokens. This module passes it the request head, then the body.
//! - [`BearerAuth::new`]: a plain yes/no hook; anything refused is answered 401 with a
//!   `WWW-Authenticate: Bearer` challenge (RFC 6750, with the RFC 9728 `resource_metadata`
//!   pointer when one is configured).

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use mcp_sansio::auth::{ProtectedResource, Secret, TokenInfo, TokenValidation};
use mcp_sansio::http::{Body, HttpRequestHead, HttpResponse};

type Hook = Arc<dyn Fn(&str) -> bool + Send + Sync>;
type Validate = Arc<dyn Fn(&Secret) -> TokenValidation + Send + Sync>;

/// Requires a bearer token on every request to the endpoint, checked by an application
/// callback (e.g. against a token introspection cache).
#[derive(Clone)]
pub struct BearerAuth {
    guard: Guard,
}

#[derive(Clone)]
enum Guard {
    Hook {
        validate: Hook,
        realm: String,
        resource_metadata: Option<String>,
    },
    Protected {
        resource: Arc<ProtectedResource>,
        validate: Validate,
    },
}

impl fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.guard {
            Guard::Hook {
                realm,
                resource_metadata,
                ..
            } => f
                .debug_struct("BearerAuth")
                .field("realm", realm)
                .field("resource_metadata", resource_metadata)
                .finish(),
            Guard::Protected { resource, .. } => f
                .debug_struct("BearerAuth")
                .field("resource", &resource.resource())
                .finish(),
        }
    }
}

/// A request past the head check: the token it carries, when the resource is protected.
pub(crate) struct Admitted(Option<TokenInfo>);

impl Admitted {
    /// The subject of the token admitted, when the guard knows it.
    pub(crate) fn subject(&self) -> Option<&str> {
        self.0.as_ref().map(|t| t.subject.as_str())
    }
}

impl BearerAuth {
    /// `validate(token)` says whether the bearer token is acceptable.
    pub fn new(validate: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        BearerAuth {
            guard: Guard::Hook {
                validate: Arc::new(validate),
                realm: "mcp".to_owned(),
                resource_metadata: None,
            },
        }
    }

    /// Protects the endpoint as `resource` (build it with the server's URL, e.g. from
    /// [`HttpServer::url`](super::HttpServer::url), and its authorization servers):
    /// `validate` judges each token; audience and scopes are checked by `resource`, and its
    /// metadata is served at its well-known URIs.
    pub fn protect(
        resource: ProtectedResource,
        validate: impl Fn(&Secret) -> TokenValidation + Send + Sync + 'static,
    ) -> Self {
        BearerAuth {
            guard: Guard::Protected {
                resource: Arc::new(resource),
                validate: Arc::new(validate),
            },
        }
    }

    /// The `realm` of the challenge (default `mcp`; for [`protect`](Self::protect), set it
    /// on the [`ProtectedResource`]).
    pub fn realm(mut self, value: impl Into<String>) -> Self {
        if let Guard::Hook { realm, .. } = &mut self.guard {
            *realm = value.into();
        }
        self
    }

    /// The protected-resource metadata URL announced in the challenge (RFC 9728), where an
    /// MCP client discovers the authorization server (for [`protect`](Self::protect), the
    /// resource's own URL is announced).
    pub fn resource_metadata(mut self, url: impl Into<String>) -> Self {
        if let Guard::Hook {
            resource_metadata, ..
        } = &mut self.guard
        {
            *resource_metadata = Some(url.into());
        }
        self
    }

    /// Whether requests to `path` are for the protected-resource metadata.
    pub(crate) fn serves_metadata(&self, path: &str) -> bool {
        matches!(&self.guard, Guard::Protected { resource, .. } if resource.is_metadata_path(path))
    }

    /// The metadata document's answer, for a request [`serves_metadata`](Self::serves_metadata).
    pub(crate) fn metadata_response(&self, head: &HttpRequestHead) -> Option<HttpResponse> {
        match &self.guard {
            Guard::Protected { resource, .. } => resource.handle_metadata_request(head),
            Guard::Hook { .. } => None,
        }
    }

    /// Checks the head's credentials; the refusal to send otherwise.
    pub(crate) fn admit(&self, head: &HttpRequestHead) -> Result<Admitted, HttpResponse> {
        match &self.guard {
            Guard::Protected { resource, validate } => resource
                .authenticate(head, |token| validate(token))
                .map(|info| Admitted(Some(info))),
            Guard::Hook {
                validate,
                realm,
                resource_metadata,
            } => {
                let token = head
                    .get("authorization")
                    .and_then(|v| {
                        let (scheme, token) = v.trim().split_once(' ')?;
                        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
                    })
                    .filter(|t| !t.is_empty());
                match token {
                    Some(token) if validate(token) => Ok(Admitted(None)),
                    token => Err(hook_refusal(
                        realm,
                        resource_metadata.as_deref(),
                        token.is_some(),
                    )),
                }
            }
        }
    }

    /// Checks the scopes the request body needs against the admitted token.
    pub(crate) fn authorize(&self, admitted: &Admitted, body: &[u8]) -> Result<(), HttpResponse> {
        match (&self.guard, &admitted.0) {
            (Guard::Protected { resource, .. }, Some(token)) => resource.authorize(token, body),
            _ => Ok(()),
        }
    }
}

/// The yes/no hook's 401.
fn hook_refusal(realm: &str, resource_metadata: Option<&str>, invalid: bool) -> HttpResponse {
    let mut value = format!("Bearer realm=\"{realm}\"");
    if invalid {
        value.push_str(", error=\"invalid_token\"");
    }
    if let Some(url) = resource_metadata {
        value.push_str(&format!(", resource_metadata=\"{url}\""));
    }
    HttpResponse {
        status: 401,
        headers: vec![
            ("WWW-Authenticate".into(), value.into()),
            ("Content-Type".into(), "text/plain".into()),
        ],
        body: Body::Full(Bytes::from_static(b"Unauthorized")),
    }
}
