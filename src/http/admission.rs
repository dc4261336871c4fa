//! The admission checks both server transports (Streamable HTTP and the legacy HTTP+SSE pair)
//! apply before reading a request's meaning: Host/Origin (DNS rebinding), a JSON body within
//! the size limit, and the `MCP-Protocol-Version` header. One place, so the two transports a
//! server mounts side by side can never drift apart on policy.

use super::config::EndpointConfig;
use super::headers::is_json_content_type;
use super::reply::{error, rpc_error};
use super::types::{HttpRequestHead, HttpResponse};
use crate::model::ProtocolVersion;

/// The header naming the protocol version of a request.
const VERSION_HEADER: &str = "mcp-protocol-version";

/// 403 unless `Host` and `Origin` pass the policy.
pub(crate) fn check_host_origin(
    config: &EndpointConfig,
    head: &HttpRequestHead,
) -> Result<(), HttpResponse> {
    let hosts = &config.hosts;
    if hosts.host_allowed(head.get("host")) && hosts.origin_allowed(head.get("origin")) {
        Ok(())
    } else {
        Err(error(403, "Forbidden: Host or Origin not allowed"))
    }
}

/// 415 unless the body is declared `application/json`; 413 past `max_body`.
pub(crate) fn check_json_body(
    config: &EndpointConfig,
    head: &HttpRequestHead,
    body_len: usize,
) -> Result<(), HttpResponse> {
    if !head.get("content-type").is_some_and(is_json_content_type) {
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
    head: &HttpRequestHead,
) -> Result<Option<ProtocolVersion>, HttpResponse> {
    let Some(text) = head.get(VERSION_HEADER) else {
        return Ok(None);
    };
    ProtocolVersion::parse(text.trim())
        .filter(|v| config.supported_versions.contains(v))
        .map(Some)
        .ok_or_else(|| rpc_error(400, -32000, "Bad Request: unsupported MCP-Protocol-Version"))
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
