//! Splits an `http://host:port/path` URL into what the HTTP clients need: the address to
//! connect to, the `Host` authority and the request path. One parser for the stateful, the
//! auto-detecting and the 2026-07-28 clients, so they accept and reject the same URLs.

use std::io;

/// The parts of an `http://` endpoint URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HttpUrl {
    /// `host:port` to connect to (port 80 when the URL has none; IPv6 hosts in brackets).
    pub(crate) addr: String,
    /// The URL's authority as written, sent as the `Host` header.
    pub(crate) authority: String,
    /// The path and query (`/` when the URL has none).
    pub(crate) path: String,
}

impl HttpUrl {
    /// Parses `url`; only `http://` URLs with a host are accepted (no TLS).
    pub(crate) fn parse(url: &str) -> io::Result<Self> {
        let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidInput, message);
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| invalid(format!("bad URL {url}: {e}")))?;
        if uri.scheme_str() != Some("http") {
            return Err(invalid(format!("only http:// URLs are supported: {url}")));
        }
        let authority = uri
            .authority()
            .ok_or_else(|| invalid("the URL has no host".to_owned()))?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let port = authority.port_u16().unwrap_or(80);
        let addr = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let path = uri
            .path_and_query()
            .map(|p| p.as_str().to_owned())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "/".to_owned());
        Ok(HttpUrl {
            addr,
            authority: authority.as_str().to_owned(),
            path,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(url: &str) -> (String, String, String) {
        let u = HttpUrl::parse(url).unwrap();
        (u.addr, u.authority, u.path)
    }

    #[test]
    fn host_port_and_path() {
        assert_eq!(
            parts("http://127.0.0.1:3000/mcp?x=1"),
            (
                "127.0.0.1:3000".into(),
                "127.0.0.1:3000".into(),
                "/mcp?x=1".into()
            )
        );
    }

    #[test]
    fn default_port_and_path() {
        assert_eq!(
            parts("http://example.test"),
            ("example.test:80".into(), "example.test".into(), "/".into())
        );
    }

    #[test]
    fn ipv6_host_keeps_brackets() {
        assert_eq!(
            parts("http://[::1]:8080/mcp"),
            ("[::1]:8080".into(), "[::1]:8080".into(), "/mcp".into())
        );
        assert_eq!(parts("http://[::1]/").0, "[::1]:80");
    }

    #[test]
    fn rejects_other_schemes_and_garbage() {
        for url in ["https://127.0.0.1/mcp", "/mcp", "not a url", "ws://h/"] {
            let err = HttpUrl::parse(url).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{url}");
        }
    }
}
