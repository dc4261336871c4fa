//! Reads the bearer token of an incoming request (RFC 6750 §2.1, as MCP narrows it): only the
//! `Authorization` header carries it, exactly once, scheme case-insensitive, token in
//! `b64token` syntax. A token in the query string is refused (MCP forbids it), as is a
//! malformed header; another scheme counts as no bearer credentials at all.

use crate::http::HttpRequestHead;

use super::secret::Secret;
use crate::encoding::percent_decode;

/// The longest bearer token accepted; longer is a malformed request, never a panic.
pub(crate) const MAX_TOKEN_LEN: usize = 16 * 1024;

/// What the request presents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PresentedBearer {
    /// No `Authorization: Bearer` credentials (no header, or another scheme): answer 401
    /// without an error code (RFC 6750 §3.1).
    Missing,
    /// A request the resource server must refuse as `invalid_request` (400); the text says
    /// why, without the token.
    Malformed(&'static str),
    /// A well-formed token, for the application to validate.
    Token(Secret),
}

/// Extracts the bearer token of `head`. Never panics, whatever the headers hold.
#[must_use]
pub fn presented_bearer(head: &HttpRequestHead) -> PresentedBearer {
    if query_has_access_token(&head.path) {
        return PresentedBearer::Malformed("access tokens are not accepted in the query string");
    }
    let mut values = head
        .headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .map(|(_, value)| value.as_str());
    let Some(value) = values.next() else {
        return PresentedBearer::Missing;
    };
    if values.next().is_some() {
        return PresentedBearer::Malformed("more than one Authorization header");
    }
    parse_authorization(value)
}

/// Parses one `Authorization` value: `Bearer <b64token>` with optional surrounding space.
fn parse_authorization(value: &str) -> PresentedBearer {
    let value = value.trim_matches([' ', '\t']);
    let (scheme, rest) = value.split_once([' ', '\t']).unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return PresentedBearer::Missing;
    }
    let token = rest.trim_matches([' ', '\t']);
    if token.is_empty() {
        return PresentedBearer::Malformed("the Bearer credentials hold no token");
    }
    if token.len() > MAX_TOKEN_LEN {
        return PresentedBearer::Malformed("the bearer token is too long");
    }
    if !is_b64token(token) {
        return PresentedBearer::Malformed("the bearer token is not a b64token");
    }
    PresentedBearer::Token(Secret::new(token))
}

/// RFC 6750 §2.1: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// Whether the request target's query names an `access_token` parameter (RFC 6750 §2.3,
/// which MCP forbids: "Access tokens MUST NOT be included in the URI query string").
fn query_has_access_token(target: &str) -> bool {
    let Some((_, query)) = target.split('#').next().unwrap_or("").split_once('?') else {
        return false;
    };
    query
        .split('&')
        .take(1024)
        .map(|pair| pair.split_once('=').map_or(pair, |(name, _)| name))
        .any(|name| percent_decode(name) == "access_token")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::HttpMethod;

    fn head(values: &[&str]) -> HttpRequestHead {
        values.iter().fold(
            HttpRequestHead::new(HttpMethod::Post, "/mcp"),
            |head, value| head.header("Authorization", *value),
        )
    }

    fn token(value: &str) -> PresentedBearer {
        PresentedBearer::Token(Secret::new(value))
    }

    #[test]
    fn the_scheme_is_case_insensitive_and_space_is_trimmed() {
        assert_eq!(presented_bearer(&head(&["Bearer abc"])), token("abc"));
        assert_eq!(presented_bearer(&head(&["bEaReR  abc  "])), token("abc"));
        assert_eq!(
            presented_bearer(&head(&["BEARER\ta.b-c_~+/=="])),
            token("a.b-c_~+/==")
        );
    }

    #[test]
    fn no_header_or_another_scheme_is_missing() {
        assert_eq!(presented_bearer(&head(&[])), PresentedBearer::Missing);
        assert_eq!(
            presented_bearer(&head(&["Basic dXNlcjpw"])),
            PresentedBearer::Missing
        );
        assert_eq!(
            presented_bearer(&head(&["Bearerabc"])),
            PresentedBearer::Missing
        );
    }

    #[test]
    fn malformed_credentials_are_invalid_requests() {
        for value in [
            "Bearer",
            "Bearer   ",
            "Bearer a b",
            "Bearer =abc",
            "Bearer a\"b",
            "Bearer ===",
            "Bearer é",
        ] {
            assert!(
                matches!(
                    presented_bearer(&head(&[value])),
                    PresentedBearer::Malformed(_)
                ),
                "{value:?}"
            );
        }
        let long = format!("Bearer {}", "a".repeat(MAX_TOKEN_LEN + 1));
        assert!(matches!(
            presented_bearer(&head(&[&long])),
            PresentedBearer::Malformed(_)
        ));
    }

    #[test]
    fn two_authorization_headers_are_refused() {
        assert!(matches!(
            presented_bearer(&head(&["Bearer a", "Bearer a"])),
            PresentedBearer::Malformed(_)
        ));
    }

    #[test]
    fn a_token_in_the_query_string_is_refused_even_with_a_header() {
        for target in [
            "/mcp?access_token=abc",
            "/mcp?x=1&access%5Ftoken=abc",
            "/mcp?access_token",
        ] {
            let head = HttpRequestHead::new(HttpMethod::Post, target)
                .header("Authorization", "Bearer abc");
            assert!(
                matches!(presented_bearer(&head), PresentedBearer::Malformed(_)),
                "{target}"
            );
        }
        let head = HttpRequestHead::new(HttpMethod::Post, "/messages?sessionId=abc")
            .header("Authorization", "Bearer abc");
        assert_eq!(presented_bearer(&head), token("abc"));
    }
}
