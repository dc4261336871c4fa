//! The endpoint URL check shared by the stateful, the auto-detecting and the 2026-07-28
//! clients, so they accept and reject the same URLs: the core's [`HttpUrl`] (WHATWG URL
//! Standard), `http://` only (no TLS here).

use std::io;

use mcp_sansio::url::HttpUrl;

/// Parses `url`; only `http://` URLs with a host are accepted.
pub(crate) fn parse_endpoint(url: &str) -> io::Result<HttpUrl> {
    let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidInput, message);
    let parsed = HttpUrl::parse(url).map_err(|e| invalid(format!("bad URL {url}: {e}")))?;
    if parsed.scheme() != "http" {
        return Err(invalid(format!("only http:// URLs are supported: {url}")));
    }
    Ok(parsed)
}

/// `host:port` to connect to (the scheme's default port when the URL names none; IPv6 hosts
/// in brackets).
pub(crate) fn connect_addr(url: &HttpUrl) -> String {
    format!("{}:{}", url.host(), url.port())
}

/// What a client needs of its endpoint: the address to connect to, the `Host` authority and
/// the request target.
pub(crate) fn endpoint_parts(url: &HttpUrl) -> (String, String, String) {
    (
        connect_addr(url),
        url.authority().to_owned(),
        url.path_and_query().to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(url: &str) -> (String, String, String) {
        endpoint_parts(&parse_endpoint(url).unwrap())
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
            let err = parse_endpoint(url).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{url}");
        }
    }
}
