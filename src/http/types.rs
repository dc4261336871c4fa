//! The HTTP-shaped values the endpoint takes and returns.

use std::sync::Arc;

use bytes::Bytes;

use super::text::HttpText;

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
    pub headers: Vec<(HttpText, HttpText)>,
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
    pub fn header(mut self, name: impl Into<HttpText>, value: impl Into<HttpText>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Adds the header fields `fields()` yields, their text copied into one buffer that they
    /// share (one allocation for the whole list instead of two per field). `fields` is called
    /// twice: once to size the buffer, once to fill it. A value that is not UTF-8 is taken
    /// with U+FFFD for its invalid sequences.
    pub fn with_fields<'a, I>(mut self, fields: impl Fn() -> I) -> Self
    where
        I: Iterator<Item = (&'a str, &'a [u8])>,
    {
        let (count, len) = fields().fold((0, 0), |(n, len), (name, value)| {
            (n + 1, len + name.len() + value.len())
        });
        let mut bytes = Vec::with_capacity(len);
        let mut spans = Vec::with_capacity(count);
        for (name, value) in fields() {
            let start = bytes.len();
            bytes.extend_from_slice(name.as_bytes());
            let middle = bytes.len();
            bytes.extend_from_slice(value);
            spans.push((start, middle, bytes.len()));
        }
        // One UTF-8 check for the whole list; only a list with an invalid value is redone
        // field by field (the spans then move with the replacement characters).
        let text = String::from_utf8(bytes).unwrap_or_else(|e| {
            let bytes = e.into_bytes();
            let mut text = String::with_capacity(bytes.len());
            for span in spans.iter_mut() {
                let start = text.len();
                text.push_str(&String::from_utf8_lossy(&bytes[span.0..span.1]));
                let middle = text.len();
                text.push_str(&String::from_utf8_lossy(&bytes[span.1..span.2]));
                *span = (start, middle, text.len());
            }
            text
        });
        let buf: Arc<str> = Arc::from(text);
        self.headers.reserve_exact(spans.len());
        for (start, middle, end) in spans {
            // The spans were cut at the pushes above, so they are slices of `buf`.
            if let (Some(name), Some(value)) = (
                HttpText::shared(&buf, start..middle),
                HttpText::shared(&buf, middle..end),
            ) {
                self.headers.push((name, value));
            }
        }
        self
    }

    /// The first value of header `name` (case-insensitive), if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        // Lengths first: most names differ in length, and a length needs no text.
        self.headers
            .iter()
            .find(|(n, _)| n.len() == name.len() && n.eq_ignore_ascii_case(name))
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
    pub headers: Vec<(HttpText, HttpText)>,
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

    /// Adds a field whose name and value are literals (nothing allocated).
    pub(crate) fn with_header(self, name: &'static str, value: &'static str) -> Self {
        self.with_header_value(name, HttpText::from_static(value))
    }

    /// Adds a field with a literal name.
    pub(crate) fn with_header_value(
        mut self,
        name: &'static str,
        value: impl Into<HttpText>,
    ) -> Self {
        self.headers
            .push((HttpText::from_static(name), value.into()));
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
