//! JSON string literals with escapes, written exactly as serde_json writes them.
//!
//! [`super::write_json_string`] writes plain strings under 16 bytes itself and hands every
//! other string to one of two writers, by length:
//!
//! - Short strings (method names, keys, short texts: up to [`SHORT_STRING`] bytes) are
//!   searched eight bytes at a time for a byte to escape (the scanner's word test), inline:
//!   no call, no set-up, and about two instructions a byte instead of serde_json's table
//!   lookup per byte.
//! - Longer text without control characters (nearly all text) has only `"` and `\` to
//!   escape: those are found with `memchr2` (vectorised, worth its set-up over a long run) and
//!   the runs between them copied whole. Text with a control character is walked byte by byte.
//!
//! The output is the text serde_json writes (tests compare the two), so a result reads the
//! same either way.

use super::scan::{escape_bytes, not_raw_in_string};

/// Strings up to this many bytes go to [`push_short_string`], longer ones to [`push_string`].
pub(super) const SHORT_STRING: usize = 128;

/// The escape of one byte, or `None` when it stands for itself.
fn escape_of(byte: u8) -> Option<&'static [u8]> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    #[allow(
        clippy::indexing_slicing,
        reason = "evaluated at compile time: an index out of bounds fails the build"
    )]
    static CONTROLS: [[u8; 6]; 32] = {
        let mut table = [[0u8; 6]; 32];
        let mut i = 0;
        while i < 32 {
            table[i] = [b'\\', b'u', b'0', b'0', HEX[i >> 4], HEX[i & 15]];
            i += 1;
        }
        table
    };
    Some(match byte {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        0x08 => b"\\b",
        0x09 => b"\\t",
        0x0a => b"\\n",
        0x0c => b"\\f",
        0x0d => b"\\r",
        0..=0x1f => CONTROLS.get(usize::from(byte))?,
        _ => return None,
    })
}

/// Appends `text` as a JSON string literal (quotes included), escaped as serde_json does;
/// meant for short text (see the module header), right for any.
pub(super) fn push_short_string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // `bytes[start..]` is what is left to copy; `from` where the search goes on.
    let mut start = 0;
    let mut from = 0;
    while let Some(at) = next_escape(bytes, from) {
        if let Some(escape) = bytes.get(at).copied().and_then(escape_of) {
            out.extend_from_slice(bytes.get(start..at).unwrap_or_default());
            out.extend_from_slice(escape);
            start = at + 1;
        }
        from = at + 1;
    }
    out.extend_from_slice(bytes.get(start..).unwrap_or_default());
    out.push(b'"');
}

/// The index of the next byte at or after `i` that may be one a string literal cannot hold
/// raw: no such byte is passed over, though the one found may need no escape (the caller
/// checks it with [`escape_of`]).
#[inline]
fn next_escape(bytes: &[u8], mut i: usize) -> Option<usize> {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let hits = escape_bytes(word_at(chunk));
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    if i >= bytes.len() {
        return None;
    }
    // Fewer than eight bytes left. When the text is long enough, its last eight bytes are
    // tested at once, the hits before `i` masked off. A byte before `i` that needed an escape
    // may raise a false hit after it (a borrow runs upwards), which the caller passes over;
    // every true hit raises its own bit.
    if let Some(last) = bytes.len().checked_sub(8) {
        let searched = 8 * (i - last) as u32;
        let hits = escape_bytes(word_at(bytes.get(last..)?)) & (u64::MAX << searched);
        return (hits != 0).then(|| last + (hits.trailing_zeros() / 8) as usize);
    }
    let rest = bytes.get(i..)?;
    let found = rest.iter().position(|&b| not_raw_in_string(b));
    found.map(|at| i + at)
}

/// The eight bytes of `chunk` (exactly eight long) as a little-endian word.
#[inline]
fn word_at(chunk: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(chunk);
    u64::from_le_bytes(word)
}

/// Appends `text` as a JSON string literal (quotes included), escaped as serde_json does.
/// Its first `plain` bytes are known to need no escape (the caller's search stopped there)
/// and are copied without a second look.
pub(super) fn push_string(out: &mut Vec<u8>, text: &str, plain: usize) {
    let bytes = text.as_bytes();
    let plain = plain.min(bytes.len());
    out.push(b'"');
    // `bytes[start..]` is what is left to copy.
    let mut start = 0;
    // One pass without an early exit (no branch per byte) for the rare control character.
    if bytes
        .get(plain..)
        .unwrap_or_default()
        .iter()
        .fold(false, |any, &b| any | (b < 0x20))
    {
        for (at, &byte) in bytes.iter().enumerate().skip(plain) {
            if let Some(escape) = escape_of(byte) {
                out.extend_from_slice(bytes.get(start..at).unwrap_or_default());
                out.extend_from_slice(escape);
                start = at + 1;
            }
        }
    } else {
        let mut from = plain;
        while let Some(found) = memchr::memchr2(b'"', b'\\', bytes.get(from..).unwrap_or_default())
        {
            let at = from + found;
            out.extend_from_slice(bytes.get(start..at).unwrap_or_default());
            // `"` or `\`, each escaped by a backslash.
            let escape = bytes.get(at).copied().and_then(escape_of);
            out.extend_from_slice(escape.unwrap_or_default());
            start = at + 1;
            from = start;
        }
    }
    out.extend_from_slice(bytes.get(start..).unwrap_or_default());
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text escaped from every possible plain prefix (each the length of a prefix that
    /// needs no escape), all of which must agree.
    fn ours(text: &str) -> String {
        let plain_prefix = text.bytes().take_while(|&b| escape_of(b).is_none()).count();
        let mut outs = (0..=plain_prefix).map(|plain| {
            let mut out = Vec::new();
            push_string(&mut out, text, plain);
            String::from_utf8(out).expect("utf-8 in, utf-8 out")
        });
        let first = outs.next().expect("at least the empty prefix");
        assert!(outs.all(|out| out == first), "{text:?}");
        first
    }

    /// The short writer's text of `text`.
    fn short(text: &str) -> String {
        let mut out = b"prefix".to_vec();
        push_short_string(&mut out, text);
        let out = String::from_utf8(out).expect("utf-8 in, utf-8 out");
        out.strip_prefix("prefix").expect("appended").to_owned()
    }

    /// The short writer against serde_json: every byte value, alone and next to another
    /// special byte, at every position of texts from empty to past three words (every length
    /// of the last, overlapping word).
    #[test]
    fn short_strings_are_escaped_as_serde_json_escapes_them() {
        let mut specials: Vec<char> = (0u8..0x80).map(char::from).collect();
        specials.extend(['é', '€', '😀']);
        let filler: String = "abcdefghijklmnopqrstuvwxyz".repeat(2);
        for special in specials {
            for len in 0..=27 {
                for at in 0..=len {
                    let mut text: String = filler.chars().take(len).collect();
                    text.insert(at, special);
                    let expected = serde_json::to_string(&text).expect("serialisable");
                    assert_eq!(short(&text), expected, "{text:?}");
                    text.insert(0, '"');
                    text.push('\u{1f}');
                    let expected = serde_json::to_string(&text).expect("serialisable");
                    assert_eq!(short(&text), expected, "{text:?}");
                }
            }
        }
        let all: String = (0u8..0x80).map(char::from).collect();
        assert_eq!(
            short(&all),
            serde_json::to_string(&all).expect("serialisable")
        );
    }

    proptest::proptest! {
        /// Any string, short or long, plain or full of escapes, through whichever writer its
        /// length picks.
        #[test]
        fn every_string_is_written_as_serde_json_writes_it(
            text in proptest::prop_oneof![
                proptest::arbitrary::any::<String>(),
                "[a-z\"\\\\\n\u{1}\u{7f}é]{0,300}",
            ]
        ) {
            let mut out = Vec::new();
            super::super::write_json_string(&mut out, &text);
            let expected = serde_json::to_vec(&text).expect("serialisable");
            proptest::prop_assert_eq!(out, expected);
        }
    }

    /// Every byte that needs an escape, at every offset within a word and across word
    /// boundaries, comes out as serde_json writes it; other text (ASCII, multi-byte UTF-8,
    /// DEL) is copied as is.
    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut specials: Vec<char> = (0u8..0x20).map(char::from).collect();
        specials.extend(['"', '\\', '/', '\u{7f}', 'é', '€', '😀', 'a']);
        for special in specials {
            for offset in 0..18 {
                for len in [offset, offset + 1, 17, 24] {
                    let mut text: String = "the quick brown fox jumps".chars().take(len).collect();
                    text.insert(offset.min(text.len()), special);
                    let expected = serde_json::to_string(&text).expect("serialisable");
                    assert_eq!(ours(&text), expected, "{text:?}");
                }
            }
        }
        assert_eq!(ours(""), "\"\"");
        let all: String = (0u8..0x80).map(char::from).collect();
        assert_eq!(
            ours(&all),
            serde_json::to_string(&all).expect("serialisable")
        );
    }
}
