//! The workspace's one URL type. Parsing, serialization and reference resolution are the
//! `url` crate's (WHATWG URL Standard); [`HttpUrl`] narrows its [`Url`] to what this engine
//! fetches, POSTs to or names as a resource: an absolute `http` or `https` URL with a host,
//! no user info and no fragment. Beside it, the URL questions the authorization flow asks
//! ([`resource_covers`], [`query_param`], [`with_query`]).

use std::fmt;
use std::str::FromStr;

use ::url::Position;
pub use ::url::Url;

/// Input longer than this is refused (a hostile server could send anything).
const MAX_URL_LEN: usize = 8192;

/// An absolute `http` or `https` URL with a host, without user info or fragment.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HttpUrl(Url);

/// Why a URL or reference was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlError {
    /// Not an absolute `http(s)` URL with a host and no user info, or not a valid reference.
    Invalid,
    /// The reference resolves to another origin.
    CrossOrigin,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UrlError::Invalid => "not an absolute http(s) URL",
            UrlError::CrossOrigin => "the URL is on another origin",
        })
    }
}

impl std::error::Error for UrlError {}

impl HttpUrl {
    /// Parses an absolute `http://` or `https://` URL. Text carrying ASCII control characters
    /// is refused rather than having them stripped.
    pub fn parse(text: &str) -> Result<HttpUrl, UrlError> {
        check_text(text)?;
        Url::parse(text)
            .map_err(|_| UrlError::Invalid)
            .and_then(HttpUrl::try_from)
    }

    /// The URL as the `url` crate's type.
    #[must_use]
    pub fn as_url(&self) -> &Url {
        &self.0
    }

    /// The serialized URL.
    #[must_use]
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// `http` or `https`.
    #[must_use]
    pub fn scheme(&self) -> &str {
        self.0.scheme()
    }

    /// The host as serialized (IPv6 addresses in brackets, names lower-cased and IDNA-encoded).
    #[must_use]
    pub fn host(&self) -> &str {
        self.0.host_str().unwrap_or_default()
    }

    /// The port, the scheme's default when the URL names none.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.0.port_or_known_default().unwrap_or_default()
    }

    /// `host[:port]` as serialized (a default port is not written), for a `Host` header.
    #[must_use]
    pub fn authority(&self) -> &str {
        self.0.authority()
    }

    /// The path (at least `/`).
    #[must_use]
    pub fn path(&self) -> &str {
        self.0.path()
    }

    /// The query without `?`, if any.
    #[must_use]
    pub fn query(&self) -> Option<&str> {
        self.0.query()
    }

    /// The path and query, as a request target.
    #[must_use]
    pub fn path_and_query(&self) -> &str {
        &self.0[Position::BeforePath..Position::AfterQuery]
    }

    /// The path without its trailing slash (`""` for the root).
    #[must_use]
    pub fn trimmed_path(&self) -> &str {
        self.path().trim_end_matches('/')
    }

    /// The origin as the URL Standard serializes it: `scheme://host[:port]`, a default port
    /// not written.
    #[must_use]
    pub fn origin(&self) -> String {
        self.0.origin().ascii_serialization()
    }

    /// Whether `other` has the same origin (scheme, host and port, default ports implied).
    #[must_use]
    pub fn same_origin(&self, other: &HttpUrl) -> bool {
        self.0.origin() == other.0.origin()
    }

    /// The canonical resource identifier (RFC 8707): origin plus path without a trailing
    /// slash, no query or fragment.
    #[must_use]
    pub fn canonical(&self) -> String {
        format!("{}{}", self.origin(), self.trimmed_path())
    }

    /// Resolves URI reference `reference` (surrounding whitespace ignored, any fragment
    /// dropped) against this URL; the result must be on this URL's origin.
    pub fn resolve_same_origin(&self, reference: &str) -> Result<HttpUrl, UrlError> {
        let reference = reference.trim();
        check_text(reference)?;
        let resolved = self
            .0
            .join(reference)
            .map_err(|_| UrlError::Invalid)
            .and_then(HttpUrl::try_from)?;
        if !self.same_origin(&resolved) {
            return Err(UrlError::CrossOrigin);
        }
        Ok(resolved)
    }
}

/// Refuses overlong text and ASCII control characters.
fn check_text(text: &str) -> Result<(), UrlError> {
    if text.len() > MAX_URL_LEN || text.bytes().any(|b| b < b' ' || b == 0x7f) {
        return Err(UrlError::Invalid);
    }
    Ok(())
}

impl TryFrom<Url> for HttpUrl {
    type Error = UrlError;

    fn try_from(mut url: Url) -> Result<HttpUrl, UrlError> {
        let http = matches!(url.scheme(), "http" | "https");
        let host = url.host_str().is_some_and(|h| !h.is_empty());
        let user_info = !url.username().is_empty() || url.password().is_some();
        if !http || !host || user_info {
            return Err(UrlError::Invalid);
        }
        url.set_fragment(None);
        Ok(HttpUrl(url))
    }
}

impl From<HttpUrl> for Url {
    fn from(url: HttpUrl) -> Url {
        url.0
    }
}

impl FromStr for HttpUrl {
    type Err = UrlError;

    fn from_str(text: &str) -> Result<HttpUrl, UrlError> {
        HttpUrl::parse(text)
    }
}

impl fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

// The URL questions discovery and the redirect leg ask: whether a resource identifier covers
// a server URL, a query parameter of a redirect, and a query appended to an endpoint.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_the_shapes_servers_send() {
        let base = HttpUrl::parse("http://127.0.0.1:3000/sse").unwrap();
        let r = |s: &str| base.resolve_same_origin(s).map(|u| u.to_string());
        assert_eq!(
            r("/messages?sessionId=ab").unwrap(),
            "http://127.0.0.1:3000/messages?sessionId=ab"
        );
        assert_eq!(
            r("messages/?session_id=1").unwrap(),
            "http://127.0.0.1:3000/messages/?session_id=1"
        );
        assert_eq!(
            r("http://127.0.0.1:3000/m?x=1").unwrap(),
            "http://127.0.0.1:3000/m?x=1"
        );
        assert_eq!(r("//127.0.0.1:3000/m").unwrap(), "http://127.0.0.1:3000/m");
        assert_eq!(r("./a/../b?q").unwrap(), "http://127.0.0.1:3000/b?q");
        assert_eq!(r("../../x").unwrap(), "http://127.0.0.1:3000/x");
        assert_eq!(r("/m#frag").unwrap(), "http://127.0.0.1:3000/m");
        assert_eq!(
            r("?sessionId=1").unwrap(),
            "http://127.0.0.1:3000/sse?sessionId=1"
        );
        assert_eq!(r("http://evil.example/m"), Err(UrlError::CrossOrigin));
        assert_eq!(r("https://127.0.0.1:3000/m"), Err(UrlError::CrossOrigin));
        assert_eq!(r("//127.0.0.1:3001/m"), Err(UrlError::CrossOrigin));
        assert_eq!(r("javascript:alert(1)"), Err(UrlError::Invalid));
        assert_eq!(r("/a\nb"), Err(UrlError::Invalid));
    }

    #[test]
    fn origins_imply_default_ports() {
        let a = HttpUrl::parse("http://LocalHost/sse").unwrap();
        let b = HttpUrl::parse("http://localhost:80/x").unwrap();
        assert!(a.same_origin(&b));
        assert_eq!(a.origin(), "http://localhost");
        let v6 = HttpUrl::parse("https://[::1]/sse").unwrap();
        assert_eq!(v6.origin(), "https://[::1]");
        assert_eq!((v6.host(), v6.port()), ("[::1]", 443));
        assert!(HttpUrl::parse("ftp://x/").is_err());
        assert!(HttpUrl::parse("http://user@x/").is_err());
        assert!(HttpUrl::parse("/relative").is_err());
        assert_eq!(HttpUrl::parse("http://x").unwrap().path_and_query(), "/");
    }

    #[test]
    fn request_target_and_authority() {
        let u = HttpUrl::parse("http://127.0.0.1:3000/mcp?x=1#f").unwrap();
        assert_eq!(u.authority(), "127.0.0.1:3000");
        assert_eq!(u.path_and_query(), "/mcp?x=1");
        assert_eq!(u.to_string(), "http://127.0.0.1:3000/mcp?x=1");
        assert_eq!(HttpUrl::parse("http://h:80/").unwrap().authority(), "h");
    }
}
