//! The little URL handling discovery needs: split an absolute http(s) URL into origin, path
//! and query, compare resource identifiers, and read query parameters from a redirect.
//! Not a general URL parser: no relative references, no IDNA.

/// An absolute `http`/`https` URL split into parts (the fragment dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    /// `http` or `https`, lowercased.
    pub scheme: String,
    /// Host and optional port, host lowercased.
    pub authority: String,
    /// The path, `""` when absent; never contains `?` or `#`.
    pub path: String,
    /// The query without `?`, if any.
    pub query: Option<String>,
}

impl HttpUrl {
    /// Parses an absolute http(s) URL; `None` for anything else.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let (scheme, rest) = text.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let rest = rest.split('#').next().unwrap_or("");
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, rest) = rest.split_at(end);
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let (path, query) = match rest.split_once('?') {
            Some((p, q)) => (p, Some(q.to_owned())),
            None => (rest, None),
        };
        Some(Self {
            scheme,
            authority: authority.to_ascii_lowercase(),
            path: path.to_owned(),
            query,
        })
    }

    /// `scheme://authority`.
    #[must_use]
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
    }

    /// The path without its trailing slash (`""` for the root).
    #[must_use]
    pub fn trimmed_path(&self) -> &str {
        self.path.trim_end_matches('/')
    }

    /// The canonical resource identifier (RFC 8707): origin plus path without a trailing
    /// slash, no query or fragment.
    #[must_use]
    pub fn canonical(&self) -> String {
        format!("{}{}", self.origin(), self.trimmed_path())
    }
}

/// Whether protected-resource metadata naming `resource` may serve `server_url`: same origin
/// and the resource path equal to, or a segment-wise prefix of, the server path.
#[must_use]
pub fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Some(resource), Some(server)) = (HttpUrl::parse(resource), HttpUrl::parse(server_url))
    else {
        return false;
    };
    if resource.origin() != server.origin() || resource.query.is_some() {
        return false;
    }
    let (r, s) = (resource.trimmed_path(), server.trimmed_path());
    r == s || (s.starts_with(r) && s.as_bytes().get(r.len()) == Some(&b'/'))
}

/// The decoded value of query parameter `name` in `url` (first occurrence).
#[must_use]
pub fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split('#').next()?.split_once('?')?.1;
    form_urlencoded::parse(query.as_bytes())
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.into_owned())
}

/// Appends `query` (already encoded) to `base`, with `?` or `&` as fits.
#[must_use]
pub fn with_query(base: &str, query: &str) -> String {
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}{query}")
}
