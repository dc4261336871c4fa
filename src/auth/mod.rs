//! OAuth 2.1 authorization for MCP clients as sans-IO pieces: parsers for the messages of the
//! flow, and [`AuthFlow`], a state machine that builds the HTTP-shaped requests to perform
//! and takes their responses. The core never sends them: the application (or an
//! adapter) does, and passes in the current time and random bytes.
//!
//! Covers the MCP authorization spec of 2025-03-26 (metadata at the server root, default
//! endpoints), 2025-06-18 and 2025-11-25 (RFC 9728 protected-resource metadata, RFC 8414 /
//! OIDC discovery, RFC 8707 resource indicators, PKCE S256, dynamic registration, client ID
//! metadata documents, scope selection and step-up), plus `client_credentials` with
//! `private_key_jwt` (SEP-1046), cross-app access (SEP-990), `offline_access` (SEP-2207) and
//! RFC 9207 issuer checks. See `docs/auth.md`.
//!
//! The server side, an MCP server as a protected resource ([`ProtectedResource`]): its RFC 9728
//! metadata, bearer extraction, audience and scope checks, and the 400/401/403 challenges.

mod bearer;
mod challenge;
#[cfg(test)]
mod challenge_tests;
mod cross_app;
mod discovery;
mod flow;
mod flow_rules;
mod flow_types;
mod jwt;
mod metadata;
mod pkce;
mod request;
#[cfg(test)]
mod request_tests;
mod resource;
mod resource_challenge;
mod resource_guard;
mod secret;

pub use bearer::presented_bearer;
pub use challenge::{BearerChallenge, MAX_CHALLENGE_PARAMS};
pub use cross_app::CrossAppAccess;
pub use discovery::{
    authorization_server_metadata_urls, legacy_metadata_url, protected_resource_metadata_urls,
};
pub use flow::AuthFlow;
pub use flow_types::{AuthConfig, AuthEvent, Registration};
pub use jwt::{client_assertion, JwtSigningKey, ASSERTION_LIFETIME, CLIENT_ASSERTION_TYPE};
pub use metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
pub use request::{
    application_type, parse_redirect, parse_token_response, select_scope, ClientAuthMethod,
    ClientCredentials,
};
pub use resource::{ProtectedResource, MAX_SCOPE_RULES};
pub use resource_guard::{TokenInfo, TokenValidation, MAX_SCOPED_MESSAGES};
pub use secret::Secret;

/// Why authorization failed. Messages never contain a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// A discovery document was missing required members or was not JSON.
    BadMetadata(String),
    /// No protected-resource or authorization-server metadata could be found.
    DiscoveryFailed(String),
    /// The PRM `resource` does not identify the MCP server the client talks to.
    ResourceMismatch {
        /// The resource the metadata names.
        resource: String,
        /// The MCP server URL.
        server: String,
    },
    /// No way to obtain a client identity (no pre-registration, metadata document or DCR).
    RegistrationUnavailable,
    /// The registration endpoint refused or answered garbage.
    RegistrationFailed(String),
    /// The authorization server answered the redirect with an error, or without a code.
    AuthorizationDenied(String),
    /// The redirect's `state` differs from the one sent.
    StateMismatch,
    /// The token endpoint refused or answered garbage.
    BadTokenResponse(String),
    /// More authorization attempts than allowed (step-up loops).
    RetryLimit(u32),
    /// A 401's `WWW-Authenticate` held no Bearer challenge that could be read, and the
    /// discovery that went on without it failed.
    UnreadableChallenge {
        /// The header's values (joined with `, `), quoted: at most 200 characters, control
        /// characters escaped ([`crate::http::quote_peer_text`]).
        header: String,
        /// How discovery without it failed.
        then: Box<AuthError>,
    },
    /// The call does not fit the flow's current state.
    UnexpectedInput(&'static str),
    /// A signing key could not be read, or `private_key_jwt` is configured without one.
    BadKey(String),
    /// The redirect's `iss` (RFC 9207) is missing where required, or names another server.
    IssuerMismatch {
        /// The issuer the authorization server metadata names.
        expected: String,
        /// The `iss` the redirect carried (`None`: absent).
        got: Option<String>,
    },
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadMetadata(m) => write!(f, "bad metadata: {m}"),
            Self::DiscoveryFailed(m) => write!(f, "discovery failed: {m}"),
            Self::ResourceMismatch { resource, server } => {
                write!(f, "resource {resource} does not match server {server}")
            }
            Self::RegistrationUnavailable => f.write_str("no client registration method available"),
            Self::RegistrationFailed(m) => write!(f, "client registration failed: {m}"),
            Self::AuthorizationDenied(m) => write!(f, "authorization denied: {m}"),
            Self::StateMismatch => f.write_str("redirect state does not match"),
            Self::BadTokenResponse(m) => write!(f, "token request failed: {m}"),
            Self::RetryLimit(n) => write!(f, "gave up after {n} authorization attempts"),
            Self::UnreadableChallenge { header, then } => write!(
                f,
                "the server's WWW-Authenticate header could not be read as a Bearer challenge \
                 ({header}); discovery without it failed: {then}"
            ),
            Self::UnexpectedInput(m) => write!(f, "unexpected input: {m}"),
            Self::BadKey(m) => write!(f, "signing key: {m}"),
            Self::IssuerMismatch { expected, got } => match got {
                Some(got) => write!(f, "redirect issuer {got} is not {expected}"),
                None => write!(f, "redirect lacks the issuer {expected}"),
            },
        }
    }
}

impl std::error::Error for AuthError {}
