//! Builders for the HTTP requests of the OAuth flow and parsers for their answers: the
//! authorization URL, the token request (authorization_code, refresh_token,
//! client_credentials, token exchange, jwt-bearer; client_secret_basic / client_secret_post /
//! none / private_key_jwt), the RFC 7591
//! registration request, scope selection and the redirect `Location` reader.

use bytes::Bytes;
use serde::Deserialize;

use super::cross_app::{GRANT_JWT_BEARER, GRANT_TOKEN_EXCHANGE};
use super::jwt::CLIENT_ASSERTION_TYPE;
use super::metadata::parse_json;
use super::pkce::{Pkce, METHOD_S256};
use super::secret::Secret;
use super::AuthError;
use crate::encoding::{base64_standard, form_encode, percent_encode};
use crate::http::{HttpMethod, HttpText};
use crate::outgoing::{ExchangeId, OutgoingRequest};
use crate::url::{query_param, with_query};
use ::url::{Host, Url};

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuthMethod {
    /// HTTP Basic with the form-encoded id and secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// A public client: `client_id` in the body only.
    None,
    /// A signed JWT assertion (RFC 7523 §2.2; ES256, `iss` = `sub` = `client_id`).
    PrivateKeyJwt,
}

impl ClientAuthMethod {
    /// The RFC 7591 name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::None => "none",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// Parses an RFC 7591 name this crate supports.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "client_secret_basic" => Some(Self::ClientSecretBasic),
            "client_secret_post" => Some(Self::ClientSecretPost),
            "none" => Some(Self::None),
            "private_key_jwt" => Some(Self::PrivateKeyJwt),
            _ => None,
        }
    }
}

/// A client's identity at the authorization server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The client identifier (a URL for a client ID metadata document).
    pub client_id: String,
    /// The client secret, for confidential clients.
    pub client_secret: Option<Secret>,
    /// How to authenticate at the token endpoint.
    pub auth_method: ClientAuthMethod,
}

/// The grant of a token request.
#[derive(Debug, Clone)]
pub(crate) enum Grant<'a> {
    /// Exchange an authorization code (with its PKCE verifier and redirect URI).
    AuthorizationCode {
        /// The code from the redirect.
        code: &'a Secret,
        /// The PKCE verifier of this authorization.
        verifier: &'a Secret,
        /// The redirect URI used in the authorization request.
        redirect_uri: &'a str,
    },
    /// Use a refresh token.
    RefreshToken(&'a Secret),
    /// Machine-to-machine: the client's own credentials, with an optional scope.
    ClientCredentials {
        /// Space-separated scopes.
        scope: Option<&'a str>,
    },
    /// RFC 8693 token exchange (SEP-990: an ID token for an ID-JAG at the IdP).
    TokenExchange {
        /// The token traded in.
        subject_token: &'a Secret,
        /// Its type URN.
        subject_token_type: &'a str,
        /// The type URN asked for.
        requested_token_type: &'a str,
        /// Who the issued token is for (the authorization server's issuer).
        audience: &'a str,
        /// Space-separated scopes.
        scope: Option<&'a str>,
    },
    /// RFC 7523 JWT bearer grant (SEP-990: the ID-JAG at the authorization server).
    JwtBearer {
        /// The signed grant.
        assertion: &'a Secret,
        /// Space-separated scopes.
        scope: Option<&'a str>,
    },
}

/// The scope to request: the challenge's, else every scope the PRM lists, else none (SEP-835).
#[must_use]
pub fn select_scope(
    challenge_scope: Option<&str>,
    scopes_supported: Option<&[String]>,
) -> Option<String> {
    if let Some(scope) = challenge_scope.filter(|s| !s.trim().is_empty()) {
        return Some(scope.to_owned());
    }
    scopes_supported
        .filter(|s| !s.is_empty())
        .map(|s| s.join(" "))
}

/// Parameters of an authorization request.
#[derive(Debug, Clone)]
pub(crate) struct AuthorizationParams<'a> {
    /// The client identifier.
    pub client_id: &'a str,
    /// Where the authorization server redirects the user agent.
    pub redirect_uri: &'a str,
    /// The PKCE pair of this attempt.
    pub pkce: &'a Pkce,
    /// The anti-CSRF state value.
    pub state: &'a str,
    /// The scope, if any.
    pub scope: Option<&'a str>,
    /// The RFC 8707 resource indicator.
    pub resource: &'a str,
}

/// The authorization URL (response_type=code with PKCE S256, state, scope and resource).
#[must_use]
pub(crate) fn authorization_url(endpoint: &str, p: &AuthorizationParams<'_>) -> String {
    let mut pairs = vec![
        ("response_type", "code"),
        ("client_id", p.client_id),
        ("redirect_uri", p.redirect_uri),
        ("code_challenge", p.pkce.challenge.as_str()),
        ("code_challenge_method", METHOD_S256),
        ("state", p.state),
    ];
    if let Some(scope) = p.scope {
        pairs.push(("scope", scope));
    }
    pairs.push(("resource", p.resource));
    with_query(endpoint, &form_encode(&pairs))
}

/// The token request for `grant` with the client's authentication and the RFC 8707 resource.
#[must_use]
pub(crate) fn token_request(
    endpoint: &str,
    grant: &Grant<'_>,
    client: &ClientCredentials,
    resource: Option<&str>,
) -> OutgoingRequest {
    token_request_with_assertion(endpoint, grant, client, resource, None)
}

/// (The request builders number their request `ExchangeId(0)`: the caller, such as
/// [`AuthFlow`](super::AuthFlow), gives it its own id.)
///
/// [`token_request`] for a client that authenticates with a signed `assertion`
/// ([`ClientAuthMethod::PrivateKeyJwt`], see [`client_assertion`](super::jwt::client_assertion)).
#[must_use]
pub(crate) fn token_request_with_assertion(
    endpoint: &str,
    grant: &Grant<'_>,
    client: &ClientCredentials,
    resource: Option<&str>,
    assertion: Option<&Secret>,
) -> OutgoingRequest {
    let mut pairs: Vec<(&str, &str)> = match grant {
        Grant::AuthorizationCode {
            code,
            verifier,
            redirect_uri,
        } => vec![
            ("grant_type", "authorization_code"),
            ("code", code.expose()),
            ("code_verifier", verifier.expose()),
            ("redirect_uri", redirect_uri),
        ],
        Grant::RefreshToken(token) => vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", token.expose()),
        ],
        Grant::ClientCredentials { scope } => {
            let mut p = vec![("grant_type", "client_credentials")];
            if let Some(scope) = scope {
                p.push(("scope", scope));
            }
            p
        }
        Grant::TokenExchange {
            subject_token,
            subject_token_type,
            requested_token_type,
            audience,
            scope,
        } => {
            let mut p = vec![
                ("grant_type", GRANT_TOKEN_EXCHANGE),
                ("requested_token_type", requested_token_type),
                ("audience", audience),
                ("subject_token", subject_token.expose()),
                ("subject_token_type", subject_token_type),
            ];
            if let Some(scope) = scope {
                p.push(("scope", scope));
            }
            p
        }
        Grant::JwtBearer { assertion, scope } => {
            let mut p = vec![
                ("grant_type", GRANT_JWT_BEARER),
                ("assertion", assertion.expose()),
            ];
            if let Some(scope) = scope {
                p.push(("scope", scope));
            }
            p
        }
    };
    if let Some(resource) = resource {
        pairs.push(("resource", resource));
    }
    let mut headers = vec![
        (
            "content-type",
            HttpText::from_static("application/x-www-form-urlencoded"),
        ),
        ("accept", HttpText::from_static("application/json")),
    ];
    let secret = client.client_secret.as_ref().map(Secret::expose);
    match (client.auth_method, secret) {
        (ClientAuthMethod::ClientSecretBasic, Some(secret)) => {
            // RFC 6749 §2.3.1: id and secret are form-encoded before base64.
            let pair = format!(
                "{}:{}",
                percent_encode(&client.client_id),
                percent_encode(secret)
            );
            headers.push((
                "authorization",
                format!("Basic {}", base64_standard(pair.as_bytes())).into(),
            ));
        }
        (ClientAuthMethod::ClientSecretPost, Some(secret)) => {
            pairs.push(("client_id", &client.client_id));
            pairs.push(("client_secret", secret));
        }
        (ClientAuthMethod::PrivateKeyJwt, _) if assertion.is_some() => {
            pairs.push(("client_id", &client.client_id));
            pairs.push(("client_assertion_type", CLIENT_ASSERTION_TYPE));
            pairs.push(("client_assertion", assertion.map_or("", Secret::expose)));
        }
        _ => pairs.push(("client_id", &client.client_id)),
    }
    OutgoingRequest {
        id: ExchangeId(0),
        method: HttpMethod::Post,
        url: Some(endpoint.into()),
        headers,
        named_headers: Vec::new(),
        body: Bytes::from(form_encode(&pairs)),
    }
}

/// Fields of an RFC 7591 registration request.
#[derive(Debug, Clone)]
pub(crate) struct RegistrationParams<'a> {
    /// The client's display name.
    pub client_name: &'a str,
    /// The redirect URI to register.
    pub redirect_uri: &'a str,
    /// The token endpoint auth method to ask for.
    pub auth_method: ClientAuthMethod,
    /// The scope to register, if any.
    pub scope: Option<&'a str>,
}

/// The RFC 7591 dynamic client registration request.
#[must_use]
pub(crate) fn registration_request(endpoint: &str, p: &RegistrationParams<'_>) -> OutgoingRequest {
    let mut doc = serde_json::json!({
        "client_name": p.client_name,
        "redirect_uris": [p.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": p.auth_method.as_str(),
        "application_type": application_type(p.redirect_uri),
    });
    if let (Some(scope), Some(map)) = (p.scope, doc.as_object_mut()) {
        map.insert("scope".into(), scope.into());
    }
    OutgoingRequest {
        id: ExchangeId(0),
        method: HttpMethod::Post,
        url: Some(endpoint.into()),
        headers: vec![
            ("content-type", HttpText::from_static("application/json")),
            ("accept", HttpText::from_static("application/json")),
        ],
        named_headers: Vec::new(),
        body: Bytes::from(doc.to_string()),
    }
}

/// The OpenID registration `application_type` (SEP-837 makes it required for MCP clients):
/// `native` when the redirect comes back to this machine (a loopback host or a private-use
/// scheme), `web` for a redirect to an ordinary web origin.
#[must_use]
pub fn application_type(redirect_uri: &str) -> &'static str {
    // Not a URL, or a private-use scheme (`com.example.app:/callback`): a native app's.
    let Ok(url) = Url::parse(redirect_uri) else {
        return "native";
    };
    if !matches!(url.scheme(), "http" | "https") {
        return "native";
    }
    let loopback = match url.host() {
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if loopback {
        "native"
    } else {
        "web"
    }
}

#[derive(Deserialize)]
struct RegistrationBody {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// Reads an RFC 7591 registration response; `requested` is the method asked for, used when
/// the server does not echo one.
pub(crate) fn parse_registration(
    body: &[u8],
    requested: ClientAuthMethod,
) -> Result<ClientCredentials, AuthError> {
    let reg: RegistrationBody = parse_json(body, "registration response")?;
    let auth_method = reg
        .token_endpoint_auth_method
        .as_deref()
        .and_then(ClientAuthMethod::from_name)
        .unwrap_or(requested);
    Ok(ClientCredentials {
        client_id: reg.client_id,
        client_secret: reg.client_secret.map(Secret::new),
        auth_method,
    })
}

/// A token endpoint's successful answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenResponse {
    /// The access token.
    pub access_token: Secret,
    /// The token type (`Bearer`).
    pub token_type: String,
    /// Lifetime in seconds, if given.
    pub expires_in: Option<u64>,
    /// A refresh token, if given.
    pub refresh_token: Option<Secret>,
    /// The granted scope, if given.
    pub scope: Option<String>,
}

#[derive(Deserialize)]
struct TokenBody {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

/// Reads a token response body; the token type must be Bearer (or absent).
pub fn parse_token_response(body: &[u8]) -> Result<TokenResponse, AuthError> {
    let t: TokenBody = parse_json(body, "token response")?;
    let token_type = t.token_type.unwrap_or_else(|| "Bearer".into());
    if !token_type.eq_ignore_ascii_case("bearer") || t.access_token.is_empty() {
        return Err(AuthError::BadTokenResponse(format!(
            "unusable token (type {token_type})"
        )));
    }
    Ok(TokenResponse {
        access_token: Secret::new(t.access_token),
        token_type,
        expires_in: t.expires_in,
        refresh_token: t.refresh_token.map(Secret::new),
        scope: t.scope,
    })
}

/// The `code` and `state` of a redirect URL (the `Location` of the authorization endpoint's
/// answer). An `error` parameter (RFC 6749 section 4.1.2.1) becomes
/// [`AuthError::AuthorizationDenied`] naming it and its `error_description`, both quoted
/// ([`crate::http::quote_peer_text`]).
pub fn parse_redirect(location: &str) -> Result<(Secret, Option<String>), AuthError> {
    if let Some(error) = query_param(location, "error") {
        let mut message = crate::http::quote_peer_text(&error);
        if let Some(description) = query_param(location, "error_description") {
            message.push_str(": ");
            message.push_str(&crate::http::quote_peer_text(&description));
        }
        return Err(AuthError::AuthorizationDenied(message));
    }
    let code = query_param(location, "code")
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            // Often a login page the user agent was sent to instead: name where.
            AuthError::AuthorizationDenied(format!(
                "the redirect to {} carries no code",
                crate::http::quote_peer_text(location)
            ))
        })?;
    Ok((Secret::new(code), query_param(location, "state")))
}
