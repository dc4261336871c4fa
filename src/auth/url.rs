//! The URL questions discovery and the redirect leg ask, answered with [`HttpUrl`]: whether
//! a resource identifier covers a server URL, a query parameter of a redirect, and a query
//! appended to an endpoint.

use crate::url::{HttpUrl, Url};

/// Whether protected-resource metadata naming `resource` may serve `server_url`: same origin
/// and the resource path equal to, or a segment-wise prefix of, the server path.
#[must_use]
pub fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Ok(resource), Ok(server)) = (HttpUrl::parse(resource), HttpUrl::parse(server_url)) else {
        return false;
    };
    if !resource.same_origin(&server) || resource.query().is_some() {
        return false;
    }
    let (r, s) = (resource.trimmed_path(), server.trimmed_path());
    r == s || (s.starts_with(r) && s.as_bytes().get(r.len()) == Some(&b'/'))
}

/// The decoded value of query parameter `name` in absolute URL `url` (first occurrence).
#[must_use]
pub fn query_param(url: &str, name: &str) -> Option<String> {
    Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.into_owned())
}

/// Appends `query` (already encoded) to `base`, with `?` or `&` as fits.
#[must_use]
pub fn with_query(base: &str, query: &str) -> String {
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}{query}")
}
