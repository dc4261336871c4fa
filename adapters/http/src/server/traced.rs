//! The server's side of the HTTP trace: each request's line, MCP headers and JSON body as it
//! reaches the endpoint, and each response's status line, MCP headers and frames (a JSON body
//! whole, an SSE body event by event as it is written). With the `otel` feature each exchange
//! also has an HTTP server span ([`Exchange`]): current while its request frames reach the
//! sink, ended with its response body.

use bytes::Bytes;
use hyper::{Request, Response};
use mcp_sansio::http::{HttpMethod, HttpRequestHead};
use mcp_sansio::trace::Direction;

use super::body::ResponseBody;
use super::shared::Shared;
use crate::HttpTrace;

/// One traced exchange: with the `otel` feature, its HTTP server span.
pub(super) struct Exchange {
    #[cfg(feature = "otel")]
    span: mcp_sansio_otel::HttpServerSpan,
}

impl Exchange {
    /// The exchange `req` opens.
    pub(super) fn start<B>(req: &Request<B>) -> Exchange {
        #[cfg(feature = "otel")]
        {
            let version = match req.version() {
                hyper::Version::HTTP_10 => "1.0",
                hyper::Version::HTTP_2 => "2",
                _ => "1.1",
            };
            let headers = req.headers();
            let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
            let method = req.method().as_str();
            let span =
                mcp_sansio_otel::HttpServerSpan::start(method, req.uri().path(), version, header);
            Exchange { span }
        }
        #[cfg(not(feature = "otel"))]
        {
            let _ = req;
            Exchange {}
        }
    }
}

/// A request the endpoint is about to take: its head, then its body as a frame (a POST's).
pub(super) fn request(
    trace: &HttpTrace,
    exchange: &Exchange,
    head: &HttpRequestHead,
    body: &Bytes,
) {
    #[cfg(feature = "otel")]
    exchange.span.in_scope(|| report(trace, head, body));
    #[cfg(not(feature = "otel"))]
    {
        let _ = exchange;
        report(trace, head, body);
    }
}

/// The head and body of a request, to the sink.
fn report(trace: &HttpTrace, head: &HttpRequestHead, body: &Bytes) {
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
    exchange: Exchange,
    resp: Response<ResponseBody>,
    max_body: usize,
) -> Response<ResponseBody> {
    let (parts, mut body) = resp.into_parts();
    trace.status(Direction::Send, parts.status.as_u16(), &parts.headers);
    #[cfg(feature = "otel")]
    exchange.span.status(parts.status.as_u16());
    match &mut body {
        ResponseBody::Full(Some(bytes)) => trace.whole_body(Direction::Send, &parts.headers, bytes),
        ResponseBody::Stream(stream) => {
            stream.tap = trace.body_tap(Direction::Send, &parts.headers, max_body);
            // The exchange lasts as long as its body.
            #[cfg(feature = "otel")]
            {
                stream.span = Some(exchange.span);
            }
        }
        ResponseBody::Full(None) | ResponseBody::Empty | ResponseBody::Fed(_) => {}
    }
    #[cfg(not(feature = "otel"))]
    let _ = exchange;
    Response::from_parts(parts, body)
}

/// Reports the sessions the endpoint ended since the last call (DELETE, expiry, eviction).
pub(super) fn ended_sessions(trace: &HttpTrace, shared: &Shared) {
    let mut ended = Vec::new();
    shared.try_with(|core| {
        while let Some(sid) = core.endpoint.streamable().poll_ended_session() {
            ended.push(sid);
        }
    });
    for sid in ended {
        trace.ended(Some(&sid));
    }
}
