//! The bearer-token hook: the application validates the token of `Authorization: Bearer ...`;
//! anything else is answered 401 with a `WWW-Authenticate: Bearer` challenge (RFC 6750, with
//! the RFC 9728 `resource_metadata` pointer when one is configured).

use std::fmt;
use std::sync::Arc;

use hyper::header::{HeaderMap, AUTHORIZATION};

type Validate = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Requires a bearer token on every request to the endpoint, checked by an application
/// callback (e.g. against a token introspection cache).
#[derive(Clone)]
pub struct BearerAuth {
    validate: Validate,
    realm: String,
    resource_metadata: Option<String>,
}

impl fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerAuth")
            .field("realm", &self.realm)
            .field("resource_metadata", &self.resource_metadata)
            .finish()
    }
}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AuthFailure {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token the callback refused.
    Invalid,
}

impl BearerAuth {
    /// `validate(token)` says whether the bearer token is acceptable.
    pub fn new(validate: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        BearerAuth {
            validate: Arc::new(validate),
            realm: "mcp".to_owned(),
            resource_metadata: None,
        }
    }

    /// The `realm` of the challenge (default `mcp`).
    pub fn realm(mut self, realm: impl Into<String>) -> Self {
        self.realm = realm.into();
        self
    }

    /// The protected-resource metadata URL announced in the challenge (RFC 9728), where an
    /// MCP client discovers the authorization server.
    pub fn resource_metadata(mut self, url: impl Into<String>) -> Self {
        self.resource_metadata = Some(url.into());
        self
    }

    /// Checks the `Authorization` header.
    pub(crate) fn check(&self, headers: &HeaderMap) -> Result<(), AuthFailure> {
        let token = headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|t| !t.is_empty())
            .ok_or(AuthFailure::Missing)?;
        if (self.validate)(token) {
            Ok(())
        } else {
            Err(AuthFailure::Invalid)
        }
    }

    /// The `WWW-Authenticate` value for a refusal.
    pub(crate) fn challenge(&self, failure: AuthFailure) -> String {
        let mut value = format!("Bearer realm=\"{}\"", self.realm);
        if failure == AuthFailure::Invalid {
            value.push_str(", error=\"invalid_token\"");
        }
        if let Some(url) = &self.resource_metadata {
            value.push_str(&format!(", resource_metadata=\"{url}\""));
        }
        value
    }
}
