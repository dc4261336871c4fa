//! The admission checks both server transports (Streamable HTTP and the HTTP+SSE pair)
//! apply before reading a request's meaning: Host/Origin (DNS rebinding), fields that must
//! appear once, a JSON body within the size limit, and the `MCP-Protocol-Version` header. One place, so the two transports a
//! server mounts side by side can never drift apart on policy.

use super::config::EndpointConfig;
use super::headers::is_json_content_type;
use super::reply::{error, Refusal};
use super::types::{HttpRequestHead, HttpResponse};
use crate::model::ProtocolVersion;

/// The header fields the server transports read on most requests, found in one pass over the
/// head (a lookup by name per check would walk the whole list each time). The first field of
/// a name wins, as [`HttpRequestHead::get`] does; a second one of any but `Accept` (a list
/// that may span lines) is recorded in `repeated`, and [`check_fields`] refuses it.
#[derive(Default)]
pub(crate) struct KnownFields<'a> {
    pub(crate) host: Option<&'a str>,
    pub(crate) origin: Option<&'a str>,
    pub(crate) accept: Option<&'a str>,
    pub(crate) content_type: Option<&'a str>,
    pub(crate) session_id: Option<&'a str>,
    pub(crate) protocol_version: Option<&'a str>,
    pub(crate) last_event_id: Option<&'a str>,
    /// The declared body length (`Content-Length`; the HTTP parser refuses a conflicting
    /// second one, so it is not recorded in `repeated`).
    pub(crate) content_length: Option<&'a str>,
    /// The first `Content-Encoding` field naming a coding other than `identity`.
    pub(crate) content_encoding: Option<&'a str>,
    /// The first field that must appear once and came again (its name as received).
    pub(crate) repeated: Option<&'a str>,
}

impl<'a> KnownFields<'a> {
    /// The known fields of `head`.
    pub(crate) fn of(head: &'a HttpRequestHead) -> Self {
        let mut known = KnownFields::default();
        for (name, value) in &head.headers {
            let name = name.as_str();
            if name.len() == 14 && same_name(name, "content-length") {
                known.content_length = known.content_length.or(Some(value.as_str()));
                continue;
            }
            if name.len() == 16 && same_name(name, "content-encoding") {
                if known.content_encoding.is_none() && !is_identity(value.as_str()) {
                    known.content_encoding = Some(value.as_str());
                }
                continue;
            }
            // The length picks the candidates without reading the name.
            let slot = match name.len() {
                4 => Some(("host", &mut known.host)),
                6 if same_name(name, "origin") => Some(("origin", &mut known.origin)),
                6 => Some(("accept", &mut known.accept)),
                12 => Some(("content-type", &mut known.content_type)),
                13 => Some(("last-event-id", &mut known.last_event_id)),
                14 => Some(("mcp-session-id", &mut known.session_id)),
                20 => Some(("mcp-protocol-version", &mut known.protocol_version)),
                _ => None,
            };
            if let Some((wanted, slot)) = slot {
                if !same_name(name, wanted) {
                    continue;
                }
                if slot.is_none() {
                    *slot = Some(value.as_str());
                } else if wanted != "accept" && known.repeated.is_none() {
                    known.repeated = Some(name);
                }
            }
        }
        known
    }
}

/// Whether field name `name` is `lower` (a lower-case name), in any case. HTTP/1 parsers and
/// HTTP/2 hand names in lower case already, so the exact comparison usually decides.
fn same_name(name: &str, lower: &str) -> bool {
    name == lower || name.eq_ignore_ascii_case(lower)
}

/// 403 unless `Host` and `Origin` pass the policy; 400 when a field that must appear once
/// (`Host`, `Origin`, `Content-Type`, `Mcp-Session-Id`, `MCP-Protocol-Version`,
/// `Last-Event-ID`) came twice: two session ids or versions have no one meaning, and a proxy
/// in front may have read the other one.
pub(crate) fn check_fields(
    config: &EndpointConfig,
    fields: &KnownFields<'_>,
) -> Result<(), HttpResponse> {
    let hosts = &config.hosts;
    if !(hosts.host_allowed(fields.host) && hosts.origin_allowed(fields.origin)) {
        return Err(error(403, "Forbidden: Host or Origin not allowed"));
    }
    if let Some(name) = fields.repeated {
        let message = format!("Bad Request: header {name} must appear once");
        return Err(error(400, &message));
    }
    Ok(())
}

/// 415 unless the body is declared `application/json` with no content coding; 413 past
/// `max_body`, or when its declared `Content-Length` is past it (the adapter then need not
/// read more than the first bytes, which carry the request's id).
pub(crate) fn check_json_body(
    config: &EndpointConfig,
    fields: &KnownFields<'_>,
    body_len: usize,
) -> Result<(), HttpResponse> {
    if !fields.content_type.is_some_and(is_json_content_type) {
        return Err(error(
            415,
            "Unsupported Media Type: Content-Type must be application/json",
        ));
    }
    check_content_coding(fields.content_encoding)?;
    if body_len > config.max_body || declared_too_large(config, fields.content_length) {
        return Err(error(413, "Payload Too Large"));
    }
    Ok(())
}

/// Whether a `Content-Encoding` value names no coding but `identity` (the body is as sent).
fn is_identity(value: &str) -> bool {
    value
        .split(',')
        .map(str::trim)
        .all(|coding| coding.is_empty() || coding.eq_ignore_ascii_case("identity"))
}

/// The longest `Content-Encoding` value a refusal quotes.
const QUOTED_CODING: usize = 64;

/// 415 with `Accept-Encoding: identity` when the body is sent in a content coding (`gzip`,
/// `br`, ...): the server reads bodies as sent, and would otherwise take compressed bytes for
/// JSON. `coding` is the first `Content-Encoding` value naming one (see [`KnownFields`]).
pub(crate) fn check_content_coding(coding: Option<&str>) -> Result<(), HttpResponse> {
    let Some(coding) = coding else {
        return Ok(());
    };
    let quoted: String = coding
        .chars()
        .filter(|c| !c.is_control())
        .take(QUOTED_CODING)
        .collect();
    let message = format!(
        "Unsupported Media Type: Content-Encoding {quoted:?} is not supported (identity only)"
    );
    Err(error(415, &message).with_header("Accept-Encoding", "identity"))
}

/// The first `Content-Encoding` field of `head` naming a coding other than `identity`.
pub(crate) fn content_coding(head: &HttpRequestHead) -> Option<&str> {
    head.headers
        .iter()
        .filter(|(name, _)| same_name(name.as_str(), "content-encoding"))
        .map(|(_, value)| value.as_str())
        .find(|value| !is_identity(value))
}

/// Whether a `Content-Length` value declares a body past `max_body`.
pub(crate) fn declared_too_large(config: &EndpointConfig, content_length: Option<&str>) -> bool {
    content_length
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > config.max_body as u64)
}

/// The version an `MCP-Protocol-Version` header names (`None`: no header); 400 when it names
/// a version the config does not support.
pub(crate) fn header_version(
    config: &EndpointConfig,
    fields: &KnownFields<'_>,
) -> Result<Option<ProtocolVersion>, Refusal> {
    let Some(text) = fields.protocol_version else {
        return Ok(None);
    };
    ProtocolVersion::parse(text.trim())
        .filter(|v| config.supported_versions.contains(v))
        .map(Some)
        .ok_or(Refusal::new(
            400,
            -32000,
            "Bad Request: unsupported MCP-Protocol-Version",
        ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::HttpMethod;

    fn post(headers: &[(&str, &str)]) -> HttpRequestHead {
        let mut head = HttpRequestHead::new(HttpMethod::Post, "/x");
        for (n, v) in headers {
            head = head.header(*n, *v);
        }
        head
    }

    /// The checks as the transports run them: fields found once, then checked.
    fn check_fields(config: &EndpointConfig, head: &HttpRequestHead) -> Result<(), HttpResponse> {
        super::check_fields(config, &KnownFields::of(head))
    }

    fn check_json_body(
        config: &EndpointConfig,
        head: &HttpRequestHead,
        len: usize,
    ) -> Result<(), HttpResponse> {
        super::check_json_body(config, &KnownFields::of(head), len)
    }

    fn header_version(
        config: &EndpointConfig,
        head: &HttpRequestHead,
    ) -> Result<Option<ProtocolVersion>, Refusal> {
        super::header_version(config, &KnownFields::of(head))
    }

    #[test]
    fn known_fields_are_found_in_any_case_and_the_first_wins() {
        let head = post(&[
            ("HOST", "a"),
            ("Origin", "o"),
            ("accept", "x/y"),
            ("Host", "b"),
            ("Mcp-Session-Id", "s"),
            ("X-Other-Name", "z"),
            ("MCP-Protocol-Version", "v"),
            ("Last-Event-ID", "e"),
            ("content-type", "c"),
        ]);
        let f = KnownFields::of(&head);
        assert_eq!(
            [
                f.host,
                f.origin,
                f.accept,
                f.session_id,
                f.protocol_version,
                f.last_event_id,
                f.content_type
            ],
            [
                Some("a"),
                Some("o"),
                Some("x/y"),
                Some("s"),
                Some("v"),
                Some("e"),
                Some("c")
            ]
        );
        assert_eq!(f.repeated, Some("Host"));
        let near = post(&[("hosts", "a"), ("acceptx", "b"), ("accept-x", "c")]);
        let f = KnownFields::of(&near);
        assert_eq!((f.host, f.accept, f.repeated), (None, None, None));
    }

    #[test]
    fn a_content_coding_other_than_identity_is_found_in_any_field_and_refused() {
        let config = EndpointConfig::default();
        let json = ("Content-Type", "application/json");
        for ok in [
            vec![json],
            vec![json, ("Content-Encoding", "identity")],
            vec![json, ("content-encoding", " Identity ,")],
        ] {
            assert!(check_json_body(&config, &post(&ok), 2).is_ok(), "{ok:?}");
        }
        let second = post(&[
            json,
            ("Content-Encoding", "identity"),
            ("Content-Encoding", "gzip"),
        ]);
        assert_eq!(KnownFields::of(&second).content_encoding, Some("gzip"));
        assert_eq!(content_coding(&second), Some("gzip"));
        let refused = check_json_body(&config, &second, 2).unwrap_err();
        assert_eq!(refused.status, 415);
        assert_eq!(refused.get("Accept-Encoding"), Some("identity"));
        let hostile = format!("br\u{1b}[31m{}", "x".repeat(1000));
        let refused = check_content_coding(Some(&hostile)).unwrap_err();
        let text = refused.body_text();
        assert!(text.len() < 300 && !text.contains("1b"), "{text}");
    }

    #[test]
    fn a_field_that_must_appear_once_is_refused_when_repeated() {
        let config = EndpointConfig::default();
        for name in [
            "Mcp-Session-Id",
            "mcp-protocol-version",
            "Last-Event-ID",
            "Origin",
        ] {
            let value = if name == "Origin" {
                "http://localhost"
            } else {
                "x"
            };
            let head = post(&[(name, value), ("Host", "localhost"), (name, value)]);
            let refused = check_fields(&config, &head).unwrap_err();
            assert_eq!(refused.status, 400, "{name}");
            let crate::http::Body::Full(body) = &refused.body else {
                panic!("a JSON-RPC error body");
            };
            let body = String::from_utf8_lossy(body);
            assert!(
                body.contains(&format!("header {name} must appear once")),
                "{body}"
            );
        }
        let lists = post(&[
            ("Accept", "application/json"),
            ("Accept", "text/event-stream"),
        ]);
        assert!(check_fields(&config, &lists).is_ok());
    }

    #[test]
    fn each_check_refuses_with_its_status() {
        let config = EndpointConfig {
            max_body: 10,
            ..EndpointConfig::default()
        };
        let evil = post(&[("Host", "evil.example")]);
        assert_eq!(check_fields(&config, &evil).unwrap_err().status, 403);
        let origin = post(&[("Origin", "http://evil.example")]);
        assert_eq!(check_fields(&config, &origin).unwrap_err().status, 403);
        assert!(check_fields(&config, &post(&[("Host", "localhost:1")])).is_ok());
        let json = post(&[("Content-Type", "application/json")]);
        assert_eq!(
            check_json_body(&config, &post(&[]), 1).unwrap_err().status,
            415
        );
        assert_eq!(check_json_body(&config, &json, 11).unwrap_err().status, 413);
        assert!(check_json_body(&config, &json, 10).is_ok());
        // A declared length past the limit is refused on the first bytes alone.
        let declared = post(&[
            ("Content-Type", "application/json"),
            ("content-length", "11"),
        ]);
        assert_eq!(
            check_json_body(&config, &declared, 3).unwrap_err().status,
            413
        );
        let within = post(&[
            ("Content-Type", "application/json"),
            ("Content-Length", "10"),
        ]);
        assert!(check_json_body(&config, &within, 10).is_ok());
        assert_eq!(header_version(&config, &post(&[])).unwrap(), None);
        let known = post(&[("MCP-Protocol-Version", "2025-06-18")]);
        assert_eq!(
            header_version(&config, &known).unwrap(),
            Some(ProtocolVersion::V2025_06_18)
        );
        let unknown = post(&[("MCP-Protocol-Version", "1999-01-01")]);
        assert_eq!(header_version(&config, &unknown).unwrap_err().status, 400);
    }
}
