//! A fast read and write of the common tool result: text blocks only, in the compact form servers write
//! (`{"content":[{"type":"text","text":"…"}],"isError":…}`), without serde's per-member calls.
//!
//! A client parses a `CallToolResult` on every `tools/call`; most are one text block. This
//! reader accepts exactly that compact shape (any number of text blocks, each with `type`
//! first and `text` second, then an optional `isError`) and answers `None` for anything else,
//! including a string serde_json refuses (a raw control character, a bad escape, an unpaired
//! surrogate, invalid UTF-8), so the caller falls back to the general serde reader, which gives
//! the same value for every text this one accepts (tested against it) and the errors for what
//! it refuses. Strings are read with the in-place reader's string reader (`JsonView`'s), in its
//! form for unvalidated text, which refuses raw control characters as it reads.

use super::{CallToolResult, ContentBlock, TextContent};
use crate::jsonrpc::{read_unvalidated_string_end, write_json_string};

/// What every accepted text starts with.
const OPEN: &[u8] = b"{\"content\":[";
/// What every text block starts with, up to its string (whose opening quote the string reader
/// checks).
const TEXT_BLOCK_OPEN: &[u8] = b"{\"type\":\"text\",\"text\":";

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
            let string = rest.strip_prefix(TEXT_BLOCK_OPEN)?;
            let (text, end) = read_unvalidated_string_end(string)?;
            let after = string.get(end..)?;
            content.push(ContentBlock::Text(TextContent {
                text: text.into_owned(),
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

/// Writes `result` by hand when it is the common shape (plain text blocks, no structured
/// content, no metadata): the text serde writes for it, without serde's per-member calls;
/// `None` for any other.
pub(crate) fn write_texts_only(result: &CallToolResult) -> Option<Vec<u8>> {
    if result.structured_content.is_some() || result.meta.is_some() || !result.extra.is_empty() {
        return None;
    }
    let mut len = 32;
    for block in &result.content {
        let ContentBlock::Text(text) = block else {
            return None;
        };
        if text.annotations.is_some() || text.meta.is_some() || !text.extra.is_empty() {
            return None;
        }
        // Room for the block's members and a few escapes.
        len += text.text.len() + 40;
    }
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(OPEN);
    for (i, block) in result.content.iter().enumerate() {
        if let ContentBlock::Text(text) = block {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(TEXT_BLOCK_OPEN);
            write_json_string(&mut out, &text.text);
            out.push(b'}');
        }
    }
    out.push(b']');
    match result.is_error {
        Some(true) => out.extend_from_slice(b",\"isError\":true"),
        Some(false) => out.extend_from_slice(b",\"isError\":false"),
        None => {}
    }
    out.push(b'}');
    Some(out)
}

#[cfg(test)]
#[path = "text_result_tests.rs"]
mod tests;
