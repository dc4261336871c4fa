//! The server's side of the HTTP trace: each request's line, MCP headers and JSON body as it
//! reaches the endpoint, and each response's status line, MCP headers and frames (a JSON body
//! whole, an SSE body event by event as it is written).

use bytes::Bytes;
use hyper::Response;
use mcp_sansio::http::{HttpMethod, HttpRequestHead};
use mcp_sansio::trace::Direction;

use super::body::ResponseBody;
use crate::HttpTrace;

/// A request the endpoint is about to take: its head, then its body as a frame (a POST's).
pub(super) fn request(trace: &HttpTrace, head: &HttpRequestHead, body: &Bytes) {
    let method = match head.method {
        HttpMethod::Post => "POST",
        HttpMethod::Get => "GET",
        HttpMethod::Delete => "DELETE",
        HttpMethod::Other => "OTHER",
    };
    let start = format!("{method} {}", head.path);
    let fields = head
        .headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()));
    trace.head(Direction::Recv, &start, fields);
    trace.frame(Direction::Recv, body);
}

/// A response on its way out: its head now, its body's frames as they are written.
pub(super) fn response(
    trace: &HttpTrace,
    resp: Response<ResponseBody>,
    max_body: usize,
) -> Response<ResponseBody> {
    let (parts, mut body) = resp.into_parts();
    trace.status(Direction::Send, parts.status.as_u16(), &parts.headers);
    match &mut body {
        ResponseBody::Full(Some(bytes)) => trace.whole_body(Direction::Send, &parts.headers, bytes),
        ResponseBody::Stream(stream) => {
            stream.tap = trace.body_tap(Direction::Send, &parts.headers, max_body)
        }
        ResponseBody::Full(None) | ResponseBody::Empty | ResponseBody::Fed(_) => {}
    }
    Response::from_parts(parts, body)
}
