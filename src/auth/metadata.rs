//! Typed discovery documents: RFC 9728 protected-resource metadata and RFC 8414 / OpenID
//! Connect authorization-server metadata. Unknown members are kept in `extra`, so nothing a
//! server sends is lost. Bodies over [`MAX_METADATA_LEN`] bytes are refused.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::pkce::METHOD_S256;
use super::AuthError;

/// The largest metadata document accepted.
pub(crate) const MAX_METADATA_LEN: usize = 256 * 1024;

/// RFC 9728 protected-resource metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtectedResourceMetadata {
    /// The protected resource's identifier (its URL).
    pub resource: String,
    /// Issuer URLs of the authorization servers that protect it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How the token may be presented (`header`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// Every other member, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// RFC 8414 / OpenID Connect Discovery authorization-server metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// Where the user authorizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes and refresh tokens become access tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// RFC 7591 dynamic client registration endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Scopes the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Supported `response_type` values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// Supported grant types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// Supported client authentication methods at the token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Supported PKCE methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether an https URL to a client ID metadata document may serve as `client_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// Every other member, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ProtectedResourceMetadata {
    /// Parses and checks a PRM document: a `resource` and at least one authorization server.
    pub fn parse(body: &[u8]) -> Result<Self, AuthError> {
        let doc: Self = parse_json(body, "protected resource metadata")?;
        if doc.authorization_servers.is_empty() {
            return Err(AuthError::BadMetadata(
                "protected resource metadata lists no authorization_servers".into(),
            ));
        }
        Ok(doc)
    }
}

impl AuthorizationServerMetadata {
    /// Parses and checks AS metadata: both endpoints present and S256 PKCE advertised (MCP
    /// clients must refuse a server that does not advertise PKCE support).
    pub fn parse(body: &[u8]) -> Result<Self, AuthError> {
        let doc: Self = parse_json(body, "authorization server metadata")?;
        if doc.authorization_endpoint.is_none() || doc.token_endpoint.is_none() {
            return Err(AuthError::BadMetadata(
                "authorization server metadata lacks authorization_endpoint or token_endpoint"
                    .into(),
            ));
        }
        let s256 = doc
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == METHOD_S256));
        if !s256 {
            return Err(AuthError::BadMetadata(
                "authorization server does not advertise PKCE S256".into(),
            ));
        }
        Ok(doc)
    }

    /// The 2025-03-26 fallback when no metadata exists: `/authorize`, `/token` and
    /// `/register` at the authorization base URL (the MCP server's origin).
    #[must_use]
    pub fn default_endpoints(origin: &str) -> Self {
        Self {
            issuer: origin.to_owned(),
            authorization_endpoint: Some(format!("{origin}/authorize")),
            token_endpoint: Some(format!("{origin}/token")),
            registration_endpoint: Some(format!("{origin}/register")),
            scopes_supported: None,
            response_types_supported: None,
            grant_types_supported: None,
            token_endpoint_auth_methods_supported: None,
            code_challenge_methods_supported: Some(vec![METHOD_S256.into()]),
            client_id_metadata_document_supported: None,
            extra: Map::new(),
        }
    }
}

pub(super) fn parse_json<T: for<'de> Deserialize<'de>>(
    body: &[u8],
    what: &str,
) -> Result<T, AuthError> {
    if body.len() > MAX_METADATA_LEN {
        return Err(AuthError::BadMetadata(format!("{what} is too large")));
    }
    serde_json::from_slice(body).map_err(|e| AuthError::BadMetadata(format!("{what}: {e}")))
}
