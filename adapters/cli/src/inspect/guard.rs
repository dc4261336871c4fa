//! Who may use the inspector: every request names the one-time token in its path
//! (`/t/<token>/…`), its `Host` is the address the inspector listens on (against DNS
//! rebinding), and a browser's `Origin` and `Sec-Fetch-Site`, when sent, say same origin.
//! Anything else is refused with 403 before it reaches the API.

use std::net::SocketAddr;

use mcp_sansio::encoding::constant_time_eq;

/// The random bytes of a token (hex-encoded in the URL).
const TOKEN_BYTES: usize = 32;

/// The checks of one inspector.
pub(crate) struct Guard {
    token: String,
    hosts: Vec<String>,
}

/// Why a request was refused (said in the 403 body).
pub(crate) type Refusal = &'static str;

impl Guard {
    /// A guard for the inspector at `addr` with a fresh random token.
    pub(crate) fn new(addr: SocketAddr) -> std::io::Result<Self> {
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
        let token = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Guard::with_token(addr, token))
    }

    fn with_token(addr: SocketAddr, token: String) -> Self {
        let port = addr.port();
        let mut hosts = vec![addr.to_string()];
        if addr.ip().is_loopback() {
            hosts.extend([
                format!("localhost:{port}"),
                format!("127.0.0.1:{port}"),
                format!("[::1]:{port}"),
            ]);
        }
        Guard { token, hosts }
    }

    /// The page's URL path: `/t/<token>/`.
    pub(crate) fn base_path(&self) -> String {
        format!("/t/{}/", self.token)
    }

    /// Checks a request; `Ok(rest)` is its path after `/t/<token>/` (query cut off).
    pub(crate) fn check<'a>(
        &self,
        path: &'a str,
        header: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<&'a str, Refusal> {
        let host = header("host").ok_or("no Host header")?;
        if !self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Err("the Host header does not name this inspector");
        }
        if let Some(origin) = header("origin") {
            let same = origin
                .strip_prefix("http://")
                .is_some_and(|o| o.eq_ignore_ascii_case(host));
            if !same {
                return Err("cross-origin requests are refused");
            }
        }
        if let Some(site) = header("sec-fetch-site") {
            if site != "same-origin" && site != "none" {
                return Err("cross-site requests are refused");
            }
        }
        let path = path.split('?').next().unwrap_or(path);
        let rest = path.strip_prefix("/t/").ok_or("no token in the path")?;
        let (token, rest) = rest.split_once('/').unwrap_or((rest, ""));
        if !constant_time_eq(token.as_bytes(), self.token.as_bytes()) {
            return Err("wrong token");
        }
        Ok(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<'a>(
        guard: &Guard,
        path: &'a str,
        headers: &'a [(&str, &str)],
    ) -> Result<&'a str, Refusal> {
        guard.check(path, |name| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| *v)
        })
    }

    #[test]
    fn only_the_token_host_and_same_origin_pass() {
        let guard = Guard::with_token("127.0.0.1:4000".parse().unwrap(), "abc".into());
        let host = [("Host", "127.0.0.1:4000")];
        assert_eq!(
            check(&guard, "/t/abc/api/state?x=1", &host),
            Ok("api/state")
        );
        assert_eq!(check(&guard, "/t/abc", &host), Ok(""));
        assert!(check(&guard, "/t/abd/api/state", &host).is_err());
        assert!(check(&guard, "/api/state", &host).is_err());
        assert!(check(&guard, "/t/abc/", &[("Host", "evil.example:4000")]).is_err());
        assert!(check(&guard, "/t/abc/", &[]).is_err());
        let local = [
            ("Host", "localhost:4000"),
            ("Origin", "http://localhost:4000"),
        ];
        assert_eq!(check(&guard, "/t/abc/", &local), Ok(""));
        let cross = [
            ("Host", "localhost:4000"),
            ("Origin", "http://evil.example"),
        ];
        assert!(check(&guard, "/t/abc/", &cross).is_err());
        let site = [("Host", "localhost:4000"), ("Sec-Fetch-Site", "cross-site")];
        assert!(check(&guard, "/t/abc/", &site).is_err());
    }
}
