//! Just enough of URLs for the client side: parse an absolute `http(s)` URL, resolve the
//! `endpoint` event's URI reference against the SSE URL (RFC 3986 §5.2, with dot segments),
//! and tell whether two URLs share an origin (scheme, host, port; default ports implied).

use std::fmt;

/// References longer than this are refused (a hostile server could send anything).
const MAX_URL_LEN: usize = 8192;

/// An absolute `http` or `https` URL, split into what a client needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpUrl {
    /// `http` or `https`, lower case.
    pub scheme: String,
    /// `host[:port]` as written (user info refused).
    pub authority: String,
    /// The path (starting with `/`) and the query, without the fragment.
    pub path_and_query: String,
}

/// Why a URL or reference was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UrlError {
    /// Not an absolute `http(s)` URL or not a valid reference.
    Invalid,
    /// The reference resolves to another origin (the HTTP+SSE client only POSTs to the SSE
    /// URL's origin, so a server cannot redirect its messages elsewhere).
    CrossOrigin,
}

impl HttpUrl {
    /// Parses an absolute `http://` or `https://` URL.
    pub fn parse(text: &str) -> Result<HttpUrl, UrlError> {
        if text.len() > MAX_URL_LEN || text.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(UrlError::Invalid);
        }
        let (scheme, rest) = text.split_once("://").ok_or(UrlError::Invalid)?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(UrlError::Invalid);
        }
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.is_empty() || authority.contains('@') {
            return Err(UrlError::Invalid);
        }
        let tail = tail.split('#').next().unwrap_or("");
        let path_and_query = match tail.as_bytes().first() {
            Some(b'/') => tail.to_string(),
            _ => format!("/{tail}"),
        };
        Ok(HttpUrl {
            scheme,
            authority: authority.to_string(),
            path_and_query,
        })
    }

    /// The origin, normalized: lower-case scheme and host, default port made explicit.
    pub fn origin(&self) -> String {
        let authority = self.authority.to_ascii_lowercase();
        let has_port = authority
            .rsplit_once(':')
            .is_some_and(|(_, port)| !port.contains(']'));
        if has_port {
            format!("{}://{authority}", self.scheme)
        } else {
            let port = if self.scheme == "https" { 443 } else { 80 };
            format!("{}://{authority}:{port}", self.scheme)
        }
    }

    /// Resolves URI reference `reference` against this URL; it must stay on this origin.
    pub fn resolve_same_origin(&self, reference: &str) -> Result<HttpUrl, UrlError> {
        let reference = reference.trim();
        if reference.len() > MAX_URL_LEN || reference.bytes().any(|b| b < b' ' || b == 0x7f) {
            return Err(UrlError::Invalid);
        }
        let reference = reference.split('#').next().unwrap_or("");
        let resolved = if has_scheme(reference) {
            HttpUrl::parse(reference)?
        } else if let Some(rest) = reference.strip_prefix("//") {
            HttpUrl::parse(&format!("{}://{rest}", self.scheme))?
        } else {
            let (base_path, _) = split_query(&self.path_and_query);
            let merged = if reference.is_empty() {
                self.path_and_query.clone()
            } else if reference.starts_with('/') {
                reference.to_string()
            } else if reference.starts_with('?') {
                format!("{base_path}{reference}")
            } else {
                let dir = base_path
                    .rfind('/')
                    .and_then(|i| base_path.get(..=i))
                    .unwrap_or("");
                format!("{dir}{reference}")
            };
            let (path, query) = split_query(&merged);
            HttpUrl {
                scheme: self.scheme.clone(),
                authority: self.authority.clone(),
                path_and_query: format!("{}{query}", remove_dot_segments(path)),
            }
        };
        if resolved.origin() != self.origin() {
            return Err(UrlError::CrossOrigin);
        }
        Ok(resolved)
    }
}

impl fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}://{}{}",
            self.scheme, self.authority, self.path_and_query
        )
    }
}

/// Whether `reference` starts with `scheme:` (a letter, then letters, digits, `+ - .`).
fn has_scheme(reference: &str) -> bool {
    let Some((scheme, _)) = reference.split_once(':') else {
        return false;
    };
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
}

/// `path?query` → (`path`, `?query`).
fn split_query(text: &str) -> (&str, &str) {
    match text.find('?') {
        Some(i) => text.split_at(i),
        None => (text, ""),
    }
}

/// RFC 3986 §5.2.4 for an absolute path: drops `.` segments and lets `..` climb (never above
/// the root).
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." | ".." => {
                if *seg == ".." {
                    out.pop();
                }
                if i == last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
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
        assert_eq!(a.origin(), b.origin());
        let v6 = HttpUrl::parse("https://[::1]/sse").unwrap();
        assert_eq!(v6.origin(), "https://[::1]:443");
        assert!(HttpUrl::parse("ftp://x/").is_err());
        assert!(HttpUrl::parse("http://user@x/").is_err());
        assert!(HttpUrl::parse("http:///x").is_err());
        assert_eq!(HttpUrl::parse("http://x").unwrap().path_and_query, "/");
    }
}
