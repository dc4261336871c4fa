//! The per-request decision of a protected MCP server, in two steps the transport calls:
//! [`ProtectedResource::authenticate`] on the request head with the application's verdict on
//! the token (400 malformed, 401 missing/invalid/expired/for another resource), then
//! [`ProtectedResource::authorize`] once the body is read (403 when the token lacks the
//! scopes of the JSON-RPC method or tool called). [`ProtectedResource::decide`] does both.
//!
//! Token validation itself (introspection, JWT signatures) is the application's: it answers
//! with a [`TokenValidation`]. The audience check (RFC 8707: the token was issued for this
//! server) is made here, so a callback that forgets it still cannot let a token for another
//! resource through.

use serde_json::Value;

use crate::http::{HttpRequestHead, HttpResponse};

use super::bearer::{presented_bearer, PresentedBearer};
use super::resource::ProtectedResource;
use super::resource_challenge::BearerError;
use super::secret::Secret;
use crate::url::HttpUrl;

/// The most JSON-RPC messages of one batch whose scopes are looked up; a longer batch needs
/// every configured scope.
pub const MAX_SCOPED_MESSAGES: usize = 256;

/// What the application knows of a token it accepted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TokenInfo {
    /// Whom the token was issued to (`sub`).
    pub subject: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// The resources it was issued for (`aud`, RFC 8707 `resource`).
    pub audience: Vec<String>,
}

/// The application's verdict on a bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenValidation {
    /// A token the application issued or verified; audience and scopes are still checked.
    Valid(TokenInfo),
    /// Unknown, revoked or forged.
    Invalid,
    /// Past its lifetime.
    Expired,
}

impl ProtectedResource {
    /// Step one: the bearer token of `head`, judged by `validate` (called only for a
    /// well-formed token), then bound to this resource by audience.
    pub fn authenticate(
        &self,
        head: &HttpRequestHead,
        validate: impl FnOnce(&Secret) -> TokenValidation,
    ) -> Result<TokenInfo, HttpResponse> {
        let token = match presented_bearer(head) {
            PresentedBearer::Missing => return Err(self.unauthorized(&self.base_scopes)),
            PresentedBearer::Malformed(why) => {
                return Err(self.refusal(BearerError::InvalidRequest, why, &self.base_scopes))
            }
            PresentedBearer::Token(token) => token,
        };
        let refuse = |why| self.refusal(BearerError::InvalidToken, why, &self.base_scopes);
        match validate(&token) {
            TokenValidation::Invalid => Err(refuse("the access token is not valid")),
            TokenValidation::Expired => Err(refuse("the access token expired")),
            TokenValidation::Valid(info) if !self.audience_matches(&info.audience) => {
                Err(refuse("the access token was not issued for this resource"))
            }
            TokenValidation::Valid(info) => Ok(info),
        }
    }

    /// Step two: whether `token` holds every scope the request `body` (a JSON-RPC message or
    /// batch; empty for GET and DELETE) needs. The 403 names the granted scopes plus the
    /// missing ones, so re-authorizing with it loses nothing (the spec's recommended set).
    pub fn authorize(&self, token: &TokenInfo, body: &[u8]) -> Result<(), HttpResponse> {
        let required = self.scopes_for(body);
        let missing: Vec<String> = required
            .into_iter()
            .filter(|s| !token.scopes.contains(s))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let description = format!(
            "this request needs the scope{} {}",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(" ")
        );
        let mut scope = token.scopes.clone();
        scope.extend(missing);
        Err(self.refusal(BearerError::InsufficientScope, &description, &scope))
    }

    /// Both steps for one request: serve it on behalf of the token (`Ok`), or answer with the
    /// refusal (400, 401 or 403, with its challenge).
    pub fn decide(
        &self,
        head: &HttpRequestHead,
        body: &[u8],
        validate: impl FnOnce(&Secret) -> TokenValidation,
    ) -> Result<TokenInfo, HttpResponse> {
        self.authenticate(head, validate)
            .and_then(|info| self.authorize(&info, body).map(|()| info))
    }

    /// Whether one of `audience` names this resource (compared canonically).
    fn audience_matches(&self, audience: &[String]) -> bool {
        audience.iter().any(|aud| {
            aud == &self.resource
                || HttpUrl::parse(aud)
                    .ok()
                    .filter(|u| u.query().is_none())
                    .is_some_and(|u| u.canonical() == self.resource)
        })
    }

    /// The scopes a request with `body` needs: the required ones, then those of each
    /// message's method and (for `tools/call`) tool. A body that is not JSON, or a batch
    /// over [`MAX_SCOPED_MESSAGES`], needs every configured scope: a body this check cannot
    /// read must not slip past it.
    #[must_use]
    pub fn scopes_for(&self, body: &[u8]) -> Vec<String> {
        let mut scopes = self.base_scopes.clone();
        if self.method_scopes.is_empty() && self.tool_scopes.is_empty() {
            return scopes;
        }
        let trimmed = body.trim_ascii();
        if trimmed.is_empty() {
            return scopes;
        }
        let messages = match serde_json::from_slice::<Value>(trimmed) {
            Ok(Value::Array(batch)) if batch.len() <= MAX_SCOPED_MESSAGES => batch,
            Ok(Value::Array(_)) | Err(_) => return self.every_scope(scopes),
            Ok(one) => vec![one],
        };
        for message in &messages {
            let method = message.get("method").and_then(Value::as_str);
            let tool = (method == Some("tools/call"))
                .then(|| message.pointer("/params/name").and_then(Value::as_str))
                .flatten();
            let rules = self
                .method_scopes
                .iter()
                .filter(|(m, _)| Some(m.as_str()) == method)
                .chain(
                    self.tool_scopes
                        .iter()
                        .filter(|(t, _)| Some(t.as_str()) == tool),
                );
            for (_, needed) in rules {
                add_unique(&mut scopes, needed);
            }
        }
        scopes
    }

    fn every_scope(&self, mut scopes: Vec<String>) -> Vec<String> {
        for (_, needed) in self.method_scopes.iter().chain(&self.tool_scopes) {
            add_unique(&mut scopes, needed);
        }
        scopes
    }
}

fn add_unique(scopes: &mut Vec<String>, more: &[String]) {
    for scope in more {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
}
