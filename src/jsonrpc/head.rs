//! `FrameHead`: what the first bytes of a frame too long to read say about it (its top-level
//! `"id"`, and whether it is a request or a response), so that an oversized message can still be
//! answered or matched by id without buffering it.
//!
//! The scan is tolerant and bounded: it reads at most [`HEAD_SCAN_LEN`] bytes of one JSON
//! object, walks its top-level members (skipping nested values and strings), and stops at the
//! end of the prefix, at the first byte that breaks the grammar, or once it knows the id and the
//! kind. It never fails: what it could not read is `None`/`HeadKind::Unknown`.

use super::RequestId;

/// How many leading bytes of an oversized frame are scanned for its id.
pub const HEAD_SCAN_LEN: usize = 8 * 1024;

/// What kind of message the prefix shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum HeadKind {
    /// A `"method"` member at the top level (a request, or a notification without an id).
    Request,
    /// A `"result"` or `"error"` member at the top level.
    Response,
    /// Neither seen in the prefix (or not an object, e.g. a batch).
    #[default]
    Unknown,
}

/// What the bounded prefix of an oversized frame says about it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameHead {
    /// The top-level `"id"`, when it was read whole within the prefix (`null` reads as `None`).
    pub id: Option<RequestId>,
    /// Request or response, when a deciding member was seen.
    pub(crate) kind: HeadKind,
}

impl FrameHead {
    /// Scans at most [`HEAD_SCAN_LEN`] bytes of `prefix` (the start of one frame).
    pub fn scan(prefix: &[u8]) -> FrameHead {
        let bytes = prefix.get(..HEAD_SCAN_LEN).unwrap_or(prefix);
        let mut head = FrameHead::default();
        let _ = scan_members(bytes, &mut head);
        head
    }
}

/// Walks the top-level members; `None` where the prefix ends or stops making sense.
fn scan_members(bytes: &[u8], head: &mut FrameHead) -> Option<()> {
    let mut i = blank(bytes, 0);
    if *bytes.get(i)? != b'{' {
        return None;
    }
    let mut id_seen = false;
    loop {
        i = blank(bytes, i + 1);
        if *bytes.get(i)? != b'"' {
            return None;
        }
        let key_end = string_end(bytes, i)?;
        let key = bytes.get(i + 1..key_end - 1)?;
        i = blank(bytes, key_end);
        if *bytes.get(i)? != b':' {
            return None;
        }
        // The kind is known from the key alone: a result cut by the prefix still says so.
        match key {
            b"method" => head.kind = HeadKind::Request,
            b"result" | b"error" => head.kind = HeadKind::Response,
            _ => {}
        }
        let start = blank(bytes, i + 1);
        let end = value_end(bytes, start)?;
        if key == b"id" {
            head.id = std::str::from_utf8(bytes.get(start..end)?)
                .ok()
                .and_then(RequestId::from_json_text);
            id_seen = true;
        }
        if id_seen && head.kind != HeadKind::Unknown {
            return Some(());
        }
        i = blank(bytes, end);
        if *bytes.get(i)? != b',' {
            return None;
        }
    }
}

fn blank(bytes: &[u8], mut i: usize) -> usize {
    while bytes
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    {
        i += 1;
    }
    i
}

/// The index just past the string starting at `bytes[start] == b'"'`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        match *bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The index just past the value starting at `start` (strings, nesting and scalars skipped
/// loosely: the grammar inside is not checked).
fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match *bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            loop {
                match *bytes.get(i)? {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let len = bytes
                .get(start..)?
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))?;
            Some(start + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> FrameHead {
        FrameHead::scan(text.as_bytes())
    }

    #[test]
    fn reads_the_id_and_kind_of_a_truncated_request() {
        let head = scan(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"aaaa"#);
        assert_eq!(head.id, Some(RequestId::number(7)));
        assert_eq!(head.kind, HeadKind::Request);
    }

    #[test]
    fn id_after_nested_params_and_escaped_strings() {
        let text =
            r#" { "method" : "a", "params": {"s":"q\"}]","l":[1,{"id":9}]}, "id" : "k\"1" }"#;
        let head = scan(text);
        assert_eq!(head.id, Some(RequestId::string("k\"1")));
        assert_eq!(head.kind, HeadKind::Request);
    }

    #[test]
    fn response_kind_and_string_id() {
        let head = scan(r#"{"jsonrpc":"2.0","id":"1","result":{"tools":[{"name":"#);
        assert_eq!(head.id, Some(RequestId::string("1")));
        assert_eq!(head.kind, HeadKind::Response);
    }

    #[test]
    fn id_past_the_prefix_or_cut_is_unknown() {
        let head = scan(r#"{"jsonrpc":"2.0","method":"x","params":{"data":"aaaa"#);
        assert_eq!((head.id, head.kind), (None, HeadKind::Request));
        assert_eq!(
            scan(r#"{"id":12"#).id,
            None,
            "a number cut short is not read"
        );
        let mut long = String::from(r#"{"method":"x","params":""#);
        long.push_str(&"a".repeat(HEAD_SCAN_LEN));
        long.push_str(r#"","id":3}"#);
        assert_eq!(scan(&long).id, None, "only the bounded prefix is read");
    }

    #[test]
    fn not_an_object_or_garbage_reads_nothing() {
        for text in [
            "[{\"id\":1}]",
            "",
            "nope",
            "{\"id\" 1}",
            "{\"id\":tru}",
            "{\"id\":null,",
        ] {
            assert_eq!(scan(text).id, None, "{text}");
        }
    }
}
