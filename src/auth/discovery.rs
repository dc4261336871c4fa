//! The ordered URL lists a client tries during discovery: protected-resource metadata
//! (RFC 9728) and authorization-server metadata (RFC 8414 and OpenID Connect Discovery),
//! as the MCP authorization spec (2025-06-18, 2025-11-25) orders them.

use crate::url::HttpUrl;

const PRM_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
const OAUTH_WELL_KNOWN: &str = "/.well-known/oauth-authorization-server";
const OIDC_WELL_KNOWN: &str = "/.well-known/openid-configuration";

fn push_unique(list: &mut Vec<String>, url: String) {
    if !list.contains(&url) {
        list.push(url);
    }
}

/// PRM URLs to try for `server_url`: the `resource_metadata` URL from the challenge (if any),
/// then the path-based well-known URI, then the root one. Empty if `server_url` is not an
/// absolute http(s) URL.
#[must_use]
pub fn protected_resource_metadata_urls(
    server_url: &str,
    from_challenge: Option<&str>,
) -> Vec<String> {
    let mut urls = Vec::new();
    if let Some(url) = from_challenge.filter(|u| HttpUrl::parse(u).is_ok()) {
        push_unique(&mut urls, url.to_owned());
    }
    if let Ok(server) = HttpUrl::parse(server_url) {
        let origin = server.origin();
        push_unique(
            &mut urls,
            format!("{origin}{PRM_WELL_KNOWN}{}", server.trimmed_path()),
        );
        push_unique(&mut urls, format!("{origin}{PRM_WELL_KNOWN}"));
    }
    urls
}

/// AS metadata URLs to try for `issuer`: with a path, RFC 8414 path-inserted, OIDC
/// path-inserted, then OIDC path-appended; without one, the RFC 8414 and OIDC root URIs.
#[must_use]
pub fn authorization_server_metadata_urls(issuer: &str) -> Vec<String> {
    let Ok(url) = HttpUrl::parse(issuer) else {
        return Vec::new();
    };
    let origin = url.origin();
    let path = url.trimmed_path();
    if path.is_empty() {
        vec![
            format!("{origin}{OAUTH_WELL_KNOWN}"),
            format!("{origin}{OIDC_WELL_KNOWN}"),
        ]
    } else {
        vec![
            format!("{origin}{OAUTH_WELL_KNOWN}{path}"),
            format!("{origin}{OIDC_WELL_KNOWN}{path}"),
            format!("{origin}{path}{OIDC_WELL_KNOWN}"),
        ]
    }
}

/// The 2025-03-26 fallback when no PRM exists: the authorization base URL is the MCP
/// server's origin (path discarded) and its metadata sits at the RFC 8414 root URI.
#[must_use]
pub fn legacy_metadata_url(server_url: &str) -> Option<(String, String)> {
    let origin = HttpUrl::parse(server_url).ok()?.origin();
    Some((format!("{origin}{OAUTH_WELL_KNOWN}"), origin))
}
