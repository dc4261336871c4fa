//! Header rules of the MCP endpoint: `Accept` (media ranges with q-values and wildcards),
//! `Content-Type`, and the Origin/Host policy against DNS rebinding.

use crate::url::HttpUrl;

/// Whether an `Accept` header value admits `media` (`type/subtype`, lower case): a matching
/// range (`type/subtype`, `type/*` or `*/*`, compared without regard to ASCII case) whose
/// q-value is not 0. The most specific matching range decides, as RFC 9110 says.
///
/// It runs on every request, so it works on the bytes in place: no lower-cased copies.
pub fn accepts(accept: &str, media: &str) -> bool {
    accepts_all(accept, [media])
}

/// Whether an `Accept` header value admits every one of `media` (each as [`accepts`] judges
/// it), in one pass over the header's ranges (a POST needs both JSON and SSE).
pub fn accepts_all<const N: usize>(accept: &str, media: [&str; N]) -> bool {
    let wanted = media.map(|m| {
        let m = m.as_bytes();
        (m, m.split(|&b| b == b'/').next().unwrap_or(m))
    });
    let mut best: [Option<(u8, bool)>; N] = [None; N]; // (specificity, acceptable)
    for range in accept.as_bytes().split(|&b| b == b',') {
        let mut parts = range.split(|&b| b == b';');
        let name = parts.next().unwrap_or_default().trim_ascii();
        let mut acceptable = None;
        for ((media, ty), best) in wanted.iter().zip(best.iter_mut()) {
            let specificity = if name.eq_ignore_ascii_case(media) {
                3
            } else if name
                .strip_suffix(b"/*")
                .is_some_and(|t| t.eq_ignore_ascii_case(ty))
            {
                2
            } else if name == b"*/*" {
                1
            } else {
                continue;
            };
            if best.is_none_or(|(s, _)| specificity > s) {
                // The parameters are read once per range, and only for a range that matched.
                let ok = *acceptable.get_or_insert_with(|| parts.clone().all(|p| !is_q_zero(p)));
                *best = Some((specificity, ok));
            }
        }
    }
    best.iter().all(|b| b.is_some_and(|(_, ok)| ok))
}

/// The `Accept` value most clients send with a POST (ours, the SDKs'): it admits both media
/// types a Streamable HTTP POST must accept, so it is recognised by one compare.
const POST_ACCEPT: &str = "application/json, text/event-stream";

/// Whether an `Accept` header value admits both `application/json` and `text/event-stream`
/// (what a Streamable HTTP POST must accept): [`accepts_all`], with the common value
/// recognised before any parsing.
pub fn accepts_json_and_sse(accept: &str) -> bool {
    accept == POST_ACCEPT || accepts_all(accept, ["application/json", "text/event-stream"])
}

/// Whether a media-range parameter is `q=0` (or `q=0.0…`): a weight of zero refuses the range.
fn is_q_zero(param: &[u8]) -> bool {
    let mut kv = param.splitn(2, |&b| b == b'=');
    let (Some(k), Some(v)) = (kv.next(), kv.next()) else {
        return false;
    };
    if !k.trim_ascii().eq_ignore_ascii_case(b"q") {
        return false;
    }
    std::str::from_utf8(v.trim_ascii())
        .ok()
        .and_then(|v| v.parse::<f32>().ok())
        .is_some_and(|q| q <= 0.0)
}

/// Whether a `Content-Type` value is `application/json` (parameters such as `charset` allowed).
pub fn is_json_content_type(value: &str) -> bool {
    if value == "application/json" {
        return true; // what nearly every client sends: no parameters to cut off
    }
    let media = value.split(';').next().unwrap_or("").trim();
    media.eq_ignore_ascii_case("application/json")
}

/// Which `Host` and `Origin` values the endpoint accepts (DNS-rebinding protection).
#[derive(Clone, Debug)]
pub struct HostPolicy {
    /// Host names (without port, IPv6 in brackets) accepted in `Host` and in `Origin`.
    /// Default: `localhost`, `127.0.0.1`, `[::1]`.
    pub allowed_hosts: Vec<String>,
    /// Whole origins (`scheme://host[:port]`) accepted in addition to `allowed_hosts`.
    pub allowed_origins: Vec<String>,
    /// Off: every `Host` and `Origin` passes (e.g. behind a proxy that already checks them).
    pub enabled: bool,
}

impl Default for HostPolicy {
    fn default() -> Self {
        HostPolicy {
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()],
            allowed_origins: Vec::new(),
            enabled: true,
        }
    }
}

impl HostPolicy {
    /// Whether a `Host` header value (`name[:port]`) is allowed. A missing `Host` passes:
    /// HTTP/1.1 servers reject it before us, and HTTP/2 adapters map `:authority` into it.
    pub fn host_allowed(&self, host: Option<&str>) -> bool {
        match host {
            None => true,
            Some(_) if !self.enabled => true,
            Some(h) => self.name_allowed(strip_port(trim(h))),
        }
    }

    /// Whether an `Origin` header value is allowed. Absent passes (not a browser); `null`
    /// and unparsable origins fail.
    pub fn origin_allowed(&self, origin: Option<&str>) -> bool {
        let Some(origin) = origin.map(str::trim) else {
            return true;
        };
        if !self.enabled
            || self
                .allowed_origins
                .iter()
                .any(|o| o.eq_ignore_ascii_case(origin))
        {
            return true;
        }
        // An origin is `scheme://host[:port]` (RFC 6454), read by the one URL parser: its
        // host comes out normalized (lower case, IDNA, IPv6 in brackets); a path, a query or
        // user info make it no origin.
        match HttpUrl::parse(origin) {
            Ok(url) if url.path() == "/" && url.query().is_none() && !origin.ends_with('/') => {
                self.name_allowed(url.host())
            }
            _ => false,
        }
    }

    fn name_allowed(&self, name: &str) -> bool {
        self.allowed_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(name))
    }
}

/// `str::trim`, with the usual value (visible ASCII at both ends, nothing to trim) seen
/// from its two end bytes.
fn trim(value: &str) -> &str {
    let visible = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_graphic());
    let bytes = value.as_bytes();
    if visible(bytes.first()) && visible(bytes.last()) {
        value
    } else {
        value.trim()
    }
}

/// `host:port` → `host`; `[v6]:port` → `[v6]`; anything else unchanged.
fn strip_port(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .and_then(|end| authority.get(..=end))
            .unwrap_or(authority);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_with_wildcards_and_q_values() {
        let both = "application/json, text/event-stream";
        assert!(accepts(both, "application/json") && accepts(both, "text/event-stream"));
        assert!(accepts("*/*", "text/event-stream"));
        assert!(accepts("application/*;q=0.5", "application/json"));
        assert!(!accepts("application/json", "text/event-stream"));
        assert!(!accepts("text/event-stream;q=0, */*", "text/event-stream"));
        assert!(accepts(
            "text/*;q=0, text/event-stream",
            "text/event-stream"
        ));
        assert!(!accepts("", "application/json"));
        assert!(
            accepts("Application/JSON", "application/json"),
            "case-insensitive"
        );
        assert!(accepts(" TEXT/* ; Q=1 ", "text/event-stream"));
        assert!(!accepts("application/json; Q = 0.0", "application/json"));
        assert!(!accepts("application/json;q=0.000", "application/json"));
        assert!(accepts("application/json;q=0.001", "application/json"));
        assert!(!accepts("application/jsonx, text/*", "application/json"));
    }

    #[test]
    fn accepts_all_agrees_with_accepts_for_each_media() {
        let media = ["application/json", "text/event-stream"];
        for accept in [
            "application/json, text/event-stream",
            "*/*",
            "application/json",
            "text/event-stream;q=0, */*",
            "text/*;q=0, text/event-stream, application/*",
            "*/*;q=0, application/json;q=0.5, TEXT/EVENT-STREAM",
            "",
            "application/json;q=0, text/event-stream, */*",
        ] {
            let each = media.iter().all(|m| accepts(accept, m));
            let one_pass = accepts_all(accept, media);
            assert_eq!(one_pass, each, "{accept}");
        }
        assert!(accepts_all("application/json, text/event-stream", media));
        assert!(!accepts_all("application/json", media));
    }

    #[test]
    fn the_common_post_accept_value_is_judged_as_the_parser_judges_it() {
        let media = ["application/json", "text/event-stream"];
        for accept in [
            POST_ACCEPT,
            "application/json,text/event-stream",
            "text/event-stream, application/json",
            "application/json",
            "application/json, text/event-stream;q=0",
            "",
        ] {
            assert_eq!(
                accepts_json_and_sse(accept),
                accepts_all(accept, media),
                "{accept}"
            );
        }
        assert!(accepts_all(POST_ACCEPT, media));
    }

    /// The quick trim and port cut agree with `str::trim` and `rsplit_once(':')`.
    #[test]
    fn host_trim_and_port_cut_agree_with_the_std_forms() {
        for value in [
            "localhost",
            " localhost:80 ",
            "\u{a0}x\u{a0}",
            "",
            " ",
            "a:",
            ":1",
            "a:b:8",
            "h:8x",
        ] {
            assert_eq!(trim(value), value.trim(), "{value:?}");
            let expected = match value.rsplit_once(':') {
                Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
                _ => value,
            };
            assert_eq!(strip_port(value), expected, "{value:?}");
        }
    }

    #[test]
    fn content_type_is_json_with_parameters() {
        assert!(is_json_content_type("application/json"));
        assert!(is_json_content_type("Application/JSON; charset=utf-8"));
        assert!(!is_json_content_type("text/plain"));
        assert!(!is_json_content_type("application/jsonx"));
    }

    #[test]
    fn loopback_hosts_with_ports_pass_and_others_fail() {
        let p = HostPolicy::default();
        for h in [
            "localhost:3000",
            "127.0.0.1:8080",
            "[::1]:9",
            "localhost",
            "LOCALHOST:1",
        ] {
            assert!(p.host_allowed(Some(h)), "{h}");
        }
        for h in [
            "evil.example",
            "evil.example:3000",
            "127.0.0.2:80",
            "[::2]:1",
        ] {
            assert!(!p.host_allowed(Some(h)), "{h}");
        }
        assert!(p.origin_allowed(Some("http://localhost:3000")));
        assert!(p.origin_allowed(Some("http://[::1]:3000")));
        assert!(!p.origin_allowed(Some("http://evil.example")));
        assert!(!p.origin_allowed(Some("null")));
        assert!(p.origin_allowed(None));
        // The host as the URL Standard reads it: case and IPv4 spellings are normalized.
        assert!(p.origin_allowed(Some("HTTP://LocalHost:3000")));
        assert!(p.origin_allowed(Some("http://0x7f.0.0.1:3000")));
        assert!(!p.origin_allowed(Some("http://localhost.evil.example")));
        // Not an origin: a path, a query, user info, another scheme, no host.
        for o in [
            "http://localhost:3000/",
            "http://localhost:3000/mcp",
            "http://localhost:3000?x",
            "http://user@localhost:3000",
            "file://localhost",
            "http://",
            "localhost:3000",
        ] {
            assert!(!p.origin_allowed(Some(o)), "{o}");
        }
    }
}
