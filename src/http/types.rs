//! The HTTP-shaped values the endpoint takes and returns.

use std::sync::Arc;

use bytes::Bytes;

use super::peer::Peer;
use crate::http_shape::{HttpMethod, HttpText};

/// Method, path and headers of one HTTP request (the body comes separately).
#[derive(Clone, Debug)]
pub struct HttpRequestHead {
    /// The request method.
    pub method: HttpMethod,
    /// The request path (the endpoint does not route by path; the adapter mounts it).
    pub path: String,
    /// Header fields as received; names compare case-insensitively.
    pub headers: Vec<(HttpText, HttpText)>,
    /// Who sent it, as the embedding server knows (for [`PeerLimit`](super::PeerLimit)).
    pub peer: Peer,
}

impl HttpRequestHead {
    /// A head with no headers.
    pub fn new(method: HttpMethod, path: impl Into<String>) -> Self {
        HttpRequestHead {
            method,
            path: path.into(),
            headers: Vec::new(),
            peer: Peer::default(),
        }
    }

    /// Adds one header field (builder style).
    pub fn header(mut self, name: impl Into<HttpText>, value: impl Into<HttpText>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Adds the header fields `fields()` yields. A name the server transports know in its
    /// lower-case form (what HTTP/1 parsers hand on) is taken as a literal; the other names
    /// and every value are copied into one buffer that they share (one allocation for the
    /// whole list instead of two per field). `fields` may be called twice (a list of more
    /// than 24 fields, or with a value that is not UTF-8, is copied by a second walk). A
    /// value that is not UTF-8 is taken with U+FFFD for its invalid sequences.
    pub fn with_fields<'a, I>(mut self, fields: impl Fn() -> I) -> Self
    where
        I: Iterator<Item = (&'a str, &'a [u8])>,
    {
        if !self.push_fields_inline(fields()) {
            self.push_fields_copied(fields());
        }
        self
    }

    /// The common head: at most [`INLINE_FIELDS`] fields, all UTF-8, in one walk, their
    /// spans kept on the stack. `false` (nothing added) for any other list.
    fn push_fields_inline<'a>(
        &mut self,
        fields: impl Iterator<Item = (&'a str, &'a [u8])>,
    ) -> bool {
        // Per field: its name's literal, or its span in `bytes`; then its value's end.
        let mut spans = [(None, 0u32, 0u32); INLINE_FIELDS];
        let mut count = 0;
        let mut bytes = Vec::with_capacity(INLINE_TEXT);
        for (name, value) in fields {
            let Some(span) = spans.get_mut(count) else {
                return false;
            };
            let literal = known_name(name);
            if literal.is_none() {
                bytes.extend_from_slice(name.as_bytes());
            }
            let middle = bytes.len();
            bytes.extend_from_slice(value);
            let (Ok(middle), Ok(end)) = (u32::try_from(middle), u32::try_from(bytes.len())) else {
                return false;
            };
            *span = (literal, middle, end);
            count += 1;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            return false;
        };
        let buf: Arc<str> = Arc::from(text);
        self.headers.reserve_exact(count);
        let mut start = 0;
        for &(literal, middle, end) in spans.iter().take(count) {
            let (middle, end) = (middle as usize, end as usize);
            let name = match literal {
                Some(name) => Some(HttpText::from_static(name)),
                None => HttpText::shared(&buf, start..middle),
            };
            // The spans were cut at the pushes above, so they are slices of `buf`.
            if let (Some(name), Some(value)) = (name, HttpText::shared(&buf, middle..end)) {
                self.headers.push((name, value));
            }
            start = end;
        }
        true
    }

    /// Any list: sized by a first walk, copied by a second, invalid UTF-8 replaced.
    fn push_fields_copied<'a>(&mut self, fields: impl Iterator<Item = (&'a str, &'a [u8])>) {
        let mut bytes = Vec::new();
        let mut spans = Vec::new();
        for (name, value) in fields {
            let start = bytes.len();
            bytes.extend_from_slice(name.as_bytes());
            let middle = bytes.len();
            bytes.extend_from_slice(value);
            spans.push((start, middle, bytes.len()));
        }
        // Only a list with an invalid value is redone field by field (the spans then move
        // with the replacement characters).
        let text = String::from_utf8(bytes).unwrap_or_else(|e| {
            let bytes = e.into_bytes();
            let mut text = String::with_capacity(bytes.len());
            for span in spans.iter_mut() {
                let start = text.len();
                let part = |range: std::ops::Range<usize>| bytes.get(range).unwrap_or_default();
                text.push_str(&String::from_utf8_lossy(part(span.0..span.1)));
                let middle = text.len();
                text.push_str(&String::from_utf8_lossy(part(span.1..span.2)));
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

/// Fields of a head kept on the stack while its text is copied (more take the general path).
const INLINE_FIELDS: usize = 24;

/// Bytes reserved for a head's copied text at first (a typical MCP request's values).
const INLINE_TEXT: usize = 256;

/// The literal of a field name the server transports (or most clients) send, in the
/// lower-case form HTTP/1 parsers hand on: such a name needs no copy.
fn known_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "host" => "host",
        "accept" => "accept",
        "origin" => "origin",
        "content-type" => "content-type",
        "content-length" => "content-length",
        "mcp-session-id" => "mcp-session-id",
        "mcp-protocol-version" => "mcp-protocol-version",
        "last-event-id" => "last-event-id",
        "authorization" => "authorization",
        "user-agent" => "user-agent",
        "accept-encoding" => "accept-encoding",
        "connection" => "connection",
        _ => return None,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn names_and_values(head: &HttpRequestHead) -> Vec<(&str, &str)> {
        head.headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect()
    }

    /// Every field comes out in order with its text, whether its name is one of the known
    /// lower-case names (taken as a literal), an unknown or mixed-case one (copied), or its
    /// value is empty; a known name is not copied.
    #[test]
    fn fields_are_kept_in_order_with_their_text() {
        let fields: Vec<(&str, &[u8])> = vec![
            ("host", b"127.0.0.1:8080"),
            ("x-custom", b"one"),
            ("Accept", b"application/json, text/event-stream"),
            ("mcp-session-id", b""),
            (
                "content-type",
                "application/json; charset=\u{e9}".as_bytes(),
            ),
            ("x-custom", b"two"),
        ];
        let head =
            HttpRequestHead::new(HttpMethod::Post, "/mcp").with_fields(|| fields.iter().copied());
        let expected: Vec<(&str, &str)> = fields
            .iter()
            .map(|(n, v)| (*n, std::str::from_utf8(v).expect("utf-8")))
            .collect();
        assert_eq!(names_and_values(&head), expected);
        assert_eq!(head.headers[0].0.as_static(), Some("host"));
        assert_eq!(head.headers[1].0.as_static(), None);
        assert_eq!(head.headers[2].0.as_static(), None, "not in lower case");
        assert_eq!(head.get("X-CUSTOM"), Some("one"));
        assert_eq!(head.get("mcp-session-id"), Some(""));
    }

    /// A list longer than the inline spans and a list with a value that is not UTF-8 take the
    /// copying path: the same fields, invalid sequences replaced.
    #[test]
    fn long_lists_and_invalid_values_are_copied_whole() {
        let names: Vec<String> = (0..INLINE_FIELDS + 3).map(|i| format!("x-{i}")).collect();
        let long: Vec<(&str, &[u8])> = names
            .iter()
            .map(|n| (n.as_str(), n.as_bytes()))
            .chain([("host", b"h".as_slice())])
            .collect();
        let head =
            HttpRequestHead::new(HttpMethod::Post, "/mcp").with_fields(|| long.iter().copied());
        assert_eq!(head.headers.len(), INLINE_FIELDS + 4);
        assert!(head
            .headers
            .iter()
            .all(|(n, v)| n.as_str() == v.as_str() || (n.as_str() == "host" && v.as_str() == "h")));
        let invalid: Vec<(&str, &[u8])> = vec![("host", b"a\xffb"), ("accept", b"*/*")];
        let head =
            HttpRequestHead::new(HttpMethod::Post, "/mcp").with_fields(|| invalid.iter().copied());
        assert_eq!(
            names_and_values(&head),
            vec![("host", "a\u{fffd}b"), ("accept", "*/*")]
        );
    }
}
