//! The values a client's authorization flow is configured with and reports: its settings, the
//! token it holds, how it registered, and the events the application acts on.

use std::time::{Duration, Instant};

use super::cross_app::CrossAppAccess;
use super::jwt::JwtSigningKey;
use super::request::ClientCredentials;
use super::secret::Secret;
use super::AuthError;

/// Settings of one client's authorization against one MCP server.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// The MCP server URL (the protected resource).
    pub server_url: String,
    /// The redirect URI registered for this client.
    pub redirect_uri: String,
    /// The `client_name` sent at dynamic registration.
    pub client_name: String,
    /// Credentials obtained out of band; when set, no registration happens.
    pub pre_registered: Option<ClientCredentials>,
    /// An https URL of this client's ID metadata document, used as `client_id` when the
    /// authorization server advertises `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
    /// Use the `client_credentials` grant (machine to machine, needs `pre_registered`)
    /// instead of an authorization code.
    pub client_credentials_grant: bool,
    /// The most authorizations (user round trips) before giving up; step-up loops end here.
    pub max_authorizations: u32,
    /// How long before expiry the token is refreshed.
    pub refresh_margin: Duration,
    /// The scope to ask for when the challenge names none (instead of the PRM's
    /// `scopes_supported`).
    pub scope: Option<String>,
    /// The key that signs `private_key_jwt` assertions (with `pre_registered` credentials
    /// whose method is [`PrivateKeyJwt`](super::ClientAuthMethod::PrivateKeyJwt)).
    pub signing_key: Option<JwtSigningKey>,
    /// SEP-990: obtain the token from an enterprise IdP's ID token (token exchange, then the
    /// jwt-bearer grant with `pre_registered` credentials) instead of a user redirect.
    pub cross_app: Option<CrossAppAccess>,
}

impl AuthConfig {
    /// Defaults: dynamic registration, at most 3 authorizations, refresh 30 s before expiry.
    #[must_use]
    pub fn new(server_url: impl Into<String>, redirect_uri: impl Into<String>) -> Self {
        Self {
            server_url: server_url.into(),
            redirect_uri: redirect_uri.into(),
            client_name: "mcp-sansio".into(),
            pre_registered: None,
            client_metadata_url: None,
            client_credentials_grant: false,
            max_authorizations: 3,
            refresh_margin: Duration::from_secs(30),
            scope: None,
            signing_key: None,
            cross_app: None,
        }
    }
}

/// How the client obtained its identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    /// Credentials from the configuration.
    PreRegistered,
    /// A client ID metadata document URL as `client_id`.
    MetadataDocument,
    /// RFC 7591 dynamic registration.
    Dynamic,
}

/// A bearer token and what is known about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The access token (redacted in Debug).
    pub access: Secret,
    /// The refresh token, if granted.
    pub refresh: Option<Secret>,
    /// When the access token expires, if the server said.
    pub expires_at: Option<Instant>,
    /// The granted (or, if not echoed, requested) scope.
    pub scope: Option<String>,
}

/// What the application must know or do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthEvent {
    /// Send the user agent to `url`; then call
    /// [`AuthFlow::handle_redirect`](super::AuthFlow::handle_redirect) with where it was
    /// redirected.
    Authorize {
        /// The authorization URL.
        url: String,
    },
    /// The client has a registration.
    Registered(Registration),
    /// A token is ready: retry the MCP request with
    /// [`AuthFlow::access_token`](super::AuthFlow::access_token).
    Authorized,
    /// Authorization failed; a later challenge may start over.
    Failed(AuthError),
}
