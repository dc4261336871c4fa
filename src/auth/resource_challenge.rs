//! The refusals a protected MCP server answers with: 401 (credentials missing or token
//! refused), 403 `insufficient_scope` and 400 `invalid_request`, each carrying a
//! `WWW-Authenticate: Bearer` challenge (RFC 6750 §3) with the RFC 9728 `resource_metadata`
//! pointer and the `scope` the request needs, and a small JSON body naming the error.

use bytes::Bytes;

use crate::http::{Body, HttpResponse};

use super::resource::ProtectedResource;

/// The RFC 6750 §3.1 error codes a resource server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BearerError {
    /// Malformed request (400).
    InvalidRequest,
    /// Token expired, revoked, malformed or for another resource (401).
    InvalidToken,
    /// The token lacks scopes the request needs (403).
    InsufficientScope,
}

impl BearerError {
    /// The code as sent in `error="..."`.
    #[must_use]
    pub(crate) fn code(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidToken => "invalid_token",
            Self::InsufficientScope => "insufficient_scope",
        }
    }

    fn status(self) -> u16 {
        match self {
            Self::InvalidRequest => 400,
            Self::InvalidToken => 401,
            Self::InsufficientScope => 403,
        }
    }
}

/// Appends `, name="value"` (or `name="value"` first), escaping `"` and `\`.
fn push_param(out: &mut String, name: &str, value: &str) {
    if !out.ends_with(' ') {
        out.push_str(", ");
    }
    out.push_str(name);
    out.push_str("=\"");
    for c in value.chars().filter(|c| !c.is_control()) {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

impl ProtectedResource {
    /// The `WWW-Authenticate` value: `Bearer` with realm (if set), error and description (if
    /// any), the scope (if not empty) and `resource_metadata`.
    #[must_use]
    pub(crate) fn challenge(&self, error: Option<(BearerError, &str)>, scope: &[String]) -> String {
        let mut out = String::from("Bearer ");
        if let Some(realm) = &self.realm {
            push_param(&mut out, "realm", realm);
        }
        if let Some((error, description)) = error {
            push_param(&mut out, "error", error.code());
            push_param(&mut out, "error_description", description);
        }
        if !scope.is_empty() {
            push_param(&mut out, "scope", &scope.join(" "));
        }
        push_param(&mut out, "resource_metadata", &self.metadata_url);
        out
    }

    /// 401 for a request without bearer credentials: no error code (RFC 6750 §3.1), the
    /// scopes the request needs.
    #[must_use]
    pub fn unauthorized(&self, scope: &[String]) -> HttpResponse {
        HttpResponse::status(401).with_header_value("WWW-Authenticate", self.challenge(None, scope))
    }

    /// The refusal for `error` (400, 401 or 403 by its code), explained by `description`.
    #[must_use]
    pub(crate) fn refusal(
        &self,
        error: BearerError,
        description: &str,
        scope: &[String],
    ) -> HttpResponse {
        let body = serde_json::json!({"error": error.code(), "error_description": description});
        HttpResponse {
            status: error.status(),
            headers: vec![
                (
                    "WWW-Authenticate".into(),
                    self.challenge(Some((error, description)), scope).into(),
                ),
                ("Content-Type".into(), "application/json".into()),
            ],
            body: Body::Full(Bytes::from(body.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::challenge::BearerChallenge;

    fn resource() -> ProtectedResource {
        ProtectedResource::new("https://mcp.example/mcp", ["https://as.example"]).expect("valid")
    }

    #[test]
    fn a_401_challenge_parses_back() {
        let resp = resource().unauthorized(&["files:read".into(), "files:list".into()]);
        assert_eq!(resp.status, 401);
        let value = resp.get("www-authenticate").expect("challenge");
        assert_eq!(
            value,
            "Bearer scope=\"files:read files:list\", resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\""
        );
        let parsed = BearerChallenge::find([value]).expect("bearer");
        assert_eq!(parsed.error, None);
        assert_eq!(parsed.scope.as_deref(), Some("files:read files:list"));
    }

    #[test]
    fn a_403_names_the_error_scope_and_description() {
        let r = resource().realm("a \"quoted\" realm");
        let resp = r.refusal(
            BearerError::InsufficientScope,
            "needs files:write",
            &["files:read".into(), "files:write".into()],
        );
        assert_eq!(resp.status, 403);
        let value = resp.get("www-authenticate").expect("challenge");
        assert!(
            value.starts_with(
                "Bearer realm=\"a \\\"quoted\\\" realm\", error=\"insufficient_scope\""
            ),
            "{value}"
        );
        let parsed = BearerChallenge::find([value]).expect("bearer");
        assert_eq!(parsed.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(
            parsed.error_description.as_deref(),
            Some("needs files:write")
        );
        assert_eq!(parsed.scope.as_deref(), Some("files:read files:write"));
        assert_eq!(
            parsed.resource_metadata.as_deref(),
            Some("https://mcp.example/.well-known/oauth-protected-resource/mcp")
        );
        let body: serde_json::Value = serde_json::from_str(resp.body_text()).expect("json");
        assert_eq!(body["error"], "insufficient_scope");
    }

    #[test]
    fn statuses_follow_the_error_code() {
        let r = resource();
        assert_eq!(r.refusal(BearerError::InvalidRequest, "x", &[]).status, 400);
        assert_eq!(r.refusal(BearerError::InvalidToken, "x", &[]).status, 401);
    }
}
