//! The admission checks both server transports (Streamable HTTP and the HTTP+SSE pair)
//! apply before reading a request's meaning: Host/Origin (DNS rebinding), a JSON body within
//! the size limit, and the `MCP-Protocol-Version` header. One place, so the two transports a
//! server mounts side by side can never drift apart on policy.

use super::config::EndpointConfig;
use super::headers::is_json_content_type;
use super::reply::{error, Refusal};
use super::types::{HttpRequestHead, HttpResponse};
use crate::model::ProtocolVersion;

/// The header fields the server transports read on most requests, found in one pass over the
/// head (a lookup by name per check would walk the whole list each time). The first field of
/// a name wins, as [`HttpRequestHead::get`] does.
#[derive(Default)]
pub(crate) struct KnownFields<'a> {
    pub(crate) host: Option<&'a str>,
    pub(crate) origin: Option<&'a str>,
    pub(crate) accept: Option<&'a str>,
    pub(crate) content_type: Option<&'a str>,
    pub(crate) session_id: Option<&'a str>,
    pub(crate) protocol_version: Option<&'a str>,
    pub(crate) last_event_id: Option<&'a str>,
}

impl<'a> KnownFields<'a> {
    /// The known fields of `head`.
    pub(crate) fn of(head: &'a HttpRequestHead) -> Self {
        let mut known = KnownFields::default();
        for (name, value) in &head.headers {
            let name = name.as_str();
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
                if slot.is_none() && same_name(name, wanted) {
                    *slot = Some(value.as_str());
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

/// 403 unless `Host` and `Origin` pass the policy.
pub(crate) fn check_host_origin(
    config: &EndpointConfig,
    fields: &KnownFields<'_>,
) -> Result<(), HttpResponse> {
    let hosts = &config.hosts;
    if hosts.host_allowed(fields.host) && hosts.origin_allowed(fields.origin) {
        Ok(())
    } else {
        Err(error(403, "Forbidden: Host or Origin not allowed"))
    }
}

/// 415 unless the body is declared `application/json`; 413 past `max_body`.
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
    if body_len > config.max_body {
        return Err(error(413, "Payload Too Large"));
    }
    Ok(())
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
    fn check_host_origin(
        config: &EndpointConfig,
        head: &HttpRequestHead,
    ) -> Result<(), HttpResponse> {
        super::check_host_origin(config, &KnownFields::of(head))
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
        let near = post(&[("hosts", "a"), ("acceptx", "b"), ("accept-x", "c")]);
        let f = KnownFields::of(&near);
        assert_eq!((f.host, f.accept), (None, None));
    }

    #[test]
    fn each_check_refuses_with_its_status() {
        let config = EndpointConfig {
            max_body: 10,
            ..EndpointConfig::default()
        };
        let evil = post(&[("Host", "evil.example")]);
        assert_eq!(check_host_origin(&config, &evil).unwrap_err().status, 403);
        let origin = post(&[("Origin", "http://evil.example")]);
        assert_eq!(check_host_origin(&config, &origin).unwrap_err().status, 403);
        assert!(check_host_origin(&config, &post(&[("Host", "localhost:1")])).is_ok());
        let json = post(&[("Content-Type", "application/json")]);
        assert_eq!(
            check_json_body(&config, &post(&[]), 1).unwrap_err().status,
            415
        );
        assert_eq!(check_json_body(&config, &json, 11).unwrap_err().status, 413);
        assert!(check_json_body(&config, &json, 10).is_ok());
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
