//! The HTTP-shaped values the endpoint takes and returns.

use bytes::Bytes;

/// The HTTP methods the MCP endpoint distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpMethod {
    /// Client-to-server messages.
    Post,
    /// Opens (or resumes) a server-to-client SSE stream.
    Get,
    /// Terminates a session.
    Delete,
    /// Anything else (answered 405).
    Other,
}

impl HttpMethod {
    /// Maps a method token (case-sensitive, as HTTP defines) to the enum.
    pub fn parse(token: &str) -> HttpMethod {
        match token {
            "POST" => HttpMethod::Post,
            "GET" => HttpMethod::Get,
            "DELETE" => HttpMethod::Delete,
            _ => HttpMethod::Other,
        }
    }
}

/// Method, path and headers of one HTTP request (the body comes separately).
#[derive(Clone, Debug)]
pub struct HttpRequestHead {
    /// The request method.
    pub method: HttpMethod,
    /// The request path (the endpoint does not route by path; the adapter mounts it).
    pub path: String,
    /// Header fields as received; names compare case-insensitively.
    pub headers: Vec<(String, String)>,
}

impl HttpRequestHead {
    /// A head with no headers.
    pub fn new(method: HttpMethod, path: impl Into<String>) -> Self {
        HttpRequestHead {
            method,
            path: path.into(),
            headers: Vec::new(),
        }
    }

    /// Adds one header field (builder style).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The first value of header `name` (case-insensitive), if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Identifies one response stream (one HTTP response body being written), for
/// [`Endpoint::poll_stream`](super::Endpoint::poll_stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u64);

/// The body of a response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// No body (202, 204, most errors without a JSON-RPC body).
    Empty,
    /// The whole body, ready now (a JSON object).
    Full(Bytes),
    /// The body is produced over time: pull it with `poll_stream(id)` until `End`. SSE when
    /// the `Content-Type` says `text/event-stream`, one JSON object otherwise.
    Stream(StreamId),
}

/// Status, headers and body of one HTTP response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// Header fields to send.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Body,
}

impl HttpResponse {
    /// A response with no headers and no body.
    pub fn status(status: u16) -> Self {
        HttpResponse {
            status,
            headers: Vec::new(),
            body: Body::Empty,
        }
    }

    /// The first value of header `name` (case-insensitive), if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn with_header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }

    /// The full body as text (empty for `Empty` and `Stream`); handy in tests and logs.
    pub fn body_text(&self) -> &str {
        match &self.body {
            Body::Full(b) => std::str::from_utf8(b).unwrap_or(""),
            _ => "",
        }
    }
}
