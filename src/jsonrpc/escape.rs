//! JSON string literals with escapes, written exactly as serde_json writes them.
//!
//! [`super::write_json_string`] hands over the strings that need an escape (its plain fast
//! path covers method names and most keys).
//!
//! Text without control characters (nearly all text) has only `"` and `\` to escape: those
//! are found with `memchr2` and the runs between them copied whole, instead of serde_json's
//! table lookup per byte. Text with a control character is walked byte by byte. The output
//! is the text serde_json writes (tests compare the two), so a result reads the same either
//! way.

/// The escape of one byte, or `None` when it stands for itself.
fn escape_of(byte: u8) -> Option<&'static [u8]> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
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
        0..=0x1f => &CONTROLS[usize::from(byte)],
        _ => return None,
    })
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
    if bytes[plain..]
        .iter()
        .fold(false, |any, &b| any | (b < 0x20))
    {
        for (at, &byte) in bytes.iter().enumerate().skip(plain) {
            if let Some(escape) = escape_of(byte) {
                out.extend_from_slice(&bytes[start..at]);
                out.extend_from_slice(escape);
                start = at + 1;
            }
        }
    } else {
        let mut from = plain;
        while let Some(found) = memchr::memchr2(b'"', b'\\', &bytes[from..]) {
            let at = from + found;
            out.extend_from_slice(&bytes[start..at]);
            out.extend_from_slice(&[b'\\', bytes[at]]);
            start = at + 1;
            from = start;
        }
    }
    out.extend_from_slice(&bytes[start..]);
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
