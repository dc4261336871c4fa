//! A fast read of the common tool result: text blocks only, in the compact form servers write
//! (`{"content":[{"type":"text","text":"…"}],"isError":…}`), without serde's per-member calls.
//!
//! A client parses a `CallToolResult` on every `tools/call`; most are one text block. This
//! reader accepts exactly that compact shape (any number of text blocks, each with `type`
//! first and `text` second, then an optional `isError`) and answers `None` for anything else,
//! including a string with a `\u` escape, a raw control character or invalid UTF-8, so the
//! caller falls back to the general serde reader, which gives the same value for every text
//! this one accepts (tested against it) and the errors for what it refuses.

use super::{CallToolResult, ContentBlock, TextContent};
use crate::jsonrpc::short_escape;

/// What every accepted text starts with.
const OPEN: &[u8] = b"{\"content\":[";
/// What every text block starts with, up to its string's opening quote.
const TEXT_BLOCK_OPEN: &[u8] = b"{\"type\":\"text\",\"text\":\"";

/// Reads `text` if it is a compact text-only tool result; `None` means "use the general reader"
/// (the text may still be a valid result, or not one at all).
pub(crate) fn read_texts_only(text: &[u8]) -> Option<CallToolResult> {
    let mut rest = text.strip_prefix(OPEN)?;
    let mut content = Vec::with_capacity(1);
    if let Some(after) = rest.strip_prefix(b"]") {
        rest = after;
    } else {
        // Bounded by the input: every block consumes at least `TEXT_BLOCK_OPEN`.
        loop {
            let (text, after) = read_string(rest.strip_prefix(TEXT_BLOCK_OPEN)?)?;
            content.push(ContentBlock::Text(TextContent {
                text,
                ..TextContent::default()
            }));
            match after.strip_prefix(b"}")?.split_first()? {
                (b',', after) => rest = after,
                (b']', after) => {
                    rest = after;
                    break;
                }
                _ => return None,
            }
        }
    }
    let is_error = match rest {
        b"}" => None,
        b",\"isError\":true}" => Some(true),
        b",\"isError\":false}" => Some(false),
        _ => return None,
    };
    Some(CallToolResult {
        content,
        is_error,
        ..CallToolResult::default()
    })
}

/// Reads a JSON string's body (`input` starts after its opening quote): the unescaped text
/// and what follows the closing quote. `None` for a `\u` escape, an unknown escape, a raw
/// control character, invalid UTF-8 or no closing quote.
fn read_string(input: &[u8]) -> Option<(String, &[u8])> {
    let end = string_end(input)?;
    let (body, after) = (&input[..end], &input[end + 1..]);
    // The unescaped text is never longer than its escaped form.
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    // Bounded by the body: every step consumes a plain run and an escape.
    while let Some(at) = memchr::memchr(b'\\', rest) {
        push_plain(&mut out, &rest[..at])?;
        let escape = *rest.get(at + 1)?;
        out.push(short_escape(escape)?);
        rest = &rest[at + 2..];
    }
    push_plain(&mut out, rest)?;
    String::from_utf8(out).ok().map(|text| (text, after))
}

/// Where the string starting at `input` ends: the index of its closing quote (an escaped
/// quote does not end it).
fn string_end(input: &[u8]) -> Option<usize> {
    let mut from = 0;
    // Bounded by the input: every step moves past a quote or an escape.
    loop {
        let at = from + memchr::memchr2(b'"', b'\\', input.get(from..)?)?;
        if input[at] == b'"' {
            return Some(at);
        }
        from = at + 2;
    }
}

/// Appends a run holding no escape; `None` if it holds a raw control character (JSON forbids
/// them in strings, and the general reader refuses them).
fn push_plain(out: &mut Vec<u8>, run: &[u8]) -> Option<()> {
    if run.iter().any(|&b| b < 0x20) {
        return None;
    }
    out.extend_from_slice(run);
    Some(())
}

#[cfg(test)]
#[path = "text_result_tests.rs"]
mod tests;
