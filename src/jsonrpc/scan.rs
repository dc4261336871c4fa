//! The envelope fast path: one hand-written pass over a JSON object that finds the six
//! JSON-RPC members at its top level and validates everything else, without serde.
//!
//! serde's generic parse of the envelope (field identifiers, `RawValue` buffering, its
//! `ignore_value` skip of the payloads) was the largest single cost of a round trip. This
//! scanner only answers for the common shape: one object, keys without escapes, no known member
//! twice, nesting at most [`MAX_DEPTH`] deep, valid JSON throughout. For anything else it gives
//! up (`None`) and the decoder runs the serde path, so the language the decoder accepts and the
//! errors it reports are those of the serde path, unchanged. When it does answer, the member
//! slices are exactly what serde's `RawValue` would hold: from the value's first byte to its
//! last, without the surrounding whitespace.
//!
//! Validation follows serde_json's skip of a value (`ignore_value`): the JSON grammar, control
//! characters refused inside strings, escapes checked (`\u` needs four hex digits; surrogates
//! are not paired, as serde_json does not pair them when skipping). The scanner reads bytes and
//! checks UTF-8 as it goes: outside strings only ASCII grammar bytes pass, and each run of
//! non-ASCII bytes inside a string must be valid UTF-8, so a text it answers for is UTF-8 and
//! the decoder checks the whole frame only for the texts left to serde.

/// The JSON-RPC members of one object, each the raw text of its value (valid UTF-8). `Some`
/// means present, including `null`.
#[derive(Default)]
pub(super) struct Members<'a> {
    /// `jsonrpc`.
    pub jsonrpc: Option<&'a [u8]>,
    /// `id`.
    pub id: Option<&'a [u8]>,
    /// `method`.
    pub method: Option<&'a [u8]>,
    /// `params`.
    pub params: Option<&'a [u8]>,
    /// `result`.
    pub result: Option<&'a [u8]>,
    /// `error`.
    pub error: Option<&'a [u8]>,
}

/// Containers nested deeper than this inside a member send the text to the serde path (the
/// open containers are tracked in the bits of one `u64`).
pub(super) const MAX_DEPTH: u32 = 64;

/// Scans `bytes` as one JSON object (surrounding whitespace allowed). `None` when the text is
/// not of the common shape described in the module header or not UTF-8, valid or not.
pub(super) fn members(bytes: &[u8]) -> Option<Members<'_>> {
    let mut found = Members::default();
    let mut i = skip_blank(bytes, 0);
    if *bytes.get(i)? != b'{' {
        return None;
    }
    // Most peers write the version member first, exactly so: taken without scanning it.
    if let Some(rest) = bytes.strip_prefix(VERSION_FIRST) {
        found.jsonrpc = bytes.get(VERSION_VALUE);
        i = bytes.len() - rest.len();
    }
    i = skip_blank(bytes, i + usize::from(found.jsonrpc.is_none()));
    // After the version's comma a member must follow: `}` there is the loop's to refuse.
    if found.jsonrpc.is_none() && bytes.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            if *bytes.get(i)? != b'"' {
                return None;
            }
            let key_start = i + 1;
            let key_end = plain_key_end(bytes, key_start)?;
            let start = skip_blank(bytes, after_byte(bytes, key_end + 1, b':')?);
            let end = member_value_end(bytes, start)?;
            let value = bytes.get(start..end)?;
            if let Some(slot) = found.slot(bytes.get(key_start..key_end)?) {
                if slot.replace(value).is_some() {
                    // serde rejects a duplicate member (with its own message): let it.
                    return None;
                }
            }
            i = skip_blank(bytes, end);
            match *bytes.get(i)? {
                b',' => i = skip_blank(bytes, i + 1),
                b'}' => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (skip_blank(bytes, i) == bytes.len()).then_some(found)
}

/// The usual opening of a message, its version member then a comma.
const VERSION_FIRST: &[u8] = br#"{"jsonrpc":"2.0","#;

/// Where the version's value (`"2.0"`, quotes included) is in [`VERSION_FIRST`].
const VERSION_VALUE: std::ops::Range<usize> = 11..16;

impl<'a> Members<'a> {
    fn slot(&mut self, key: &[u8]) -> Option<&mut Option<&'a [u8]>> {
        match key {
            b"jsonrpc" => Some(&mut self.jsonrpc),
            b"id" => Some(&mut self.id),
            b"method" => Some(&mut self.method),
            b"params" => Some(&mut self.params),
            b"result" => Some(&mut self.result),
            b"error" => Some(&mut self.error),
            _ => None,
        }
    }
}

/// The bytes a JSON string cannot hold raw: control characters, `"` and `\`.
#[allow(
    clippy::indexing_slicing,
    reason = "evaluated at compile time: an index out of bounds fails the build"
)]
const NOT_RAW_IN_STRING: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Bytes that end the fast run through a string: the closing quote, an escape, a control
/// character (which JSON forbids raw inside a string), or a non-ASCII byte (UTF-8 to check).
#[allow(
    clippy::indexing_slicing,
    reason = "evaluated at compile time: an index out of bounds fails the build"
)]
const STRING_STOP: [bool; 256] = {
    let mut table = NOT_RAW_IN_STRING;
    let mut b = 0x80;
    while b < 0x100 {
        table[b] = true;
        b += 1;
    }
    table
};

/// The index of the first string stop byte in `bytes`, eight bytes at a time (the usual
/// "has a zero byte" bit trick, as serde_json's own string skip does it).
#[cfg(test)]
pub(super) fn find_string_stop(bytes: &[u8]) -> Option<usize> {
    next_string_stop(bytes, 0)
}

/// The index of the first string stop byte at or after `i`.
#[inline]
fn next_string_stop(bytes: &[u8], mut i: usize) -> Option<usize> {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let word = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).ok()?);
        let hits = stop_bytes(word);
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    string_stop_in_tail(bytes, i)
}

/// Whether `b` cannot stand raw in a JSON string (a control character, `"` or `\`).
#[inline(always)]
#[allow(clippy::indexing_slicing, reason = "a u8 indexes a 256-entry table")]
pub(super) fn not_raw_in_string(b: u8) -> bool {
    NOT_RAW_IN_STRING[usize::from(b)]
}

/// Whether `b` ends the fast run through a string (see `STRING_STOP`).
#[inline(always)]
#[allow(clippy::indexing_slicing, reason = "a u8 indexes a 256-entry table")]
fn is_string_stop(b: u8) -> bool {
    STRING_STOP[usize::from(b)]
}

/// [`next_string_stop`] in the last bytes of the text, fewer than eight, byte by byte. Out of
/// line: only a string that ends within eight bytes of the text's end gets here, and the
/// search is inlined at several call sites (instruction cache).
#[inline(never)]
fn string_stop_in_tail(bytes: &[u8], mut i: usize) -> Option<usize> {
    while let Some(&b) = bytes.get(i) {
        if is_string_stop(b) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The high bit of each byte of `word` that may be a stop byte. In each of the three tests a
/// borrow only runs upwards from a true hit, so the lowest set bit (the first byte, in
/// little-endian order) is always a true hit: callers use only that one. A non-ASCII byte has
/// its own high bit set.
#[inline]
fn stop_bytes(word: u64) -> u64 {
    escape_bytes(word) | (word & HIGHS)
}

/// The high bit of each byte of a little-endian `word` that may be a byte a string literal
/// cannot hold raw (a control character, `"` or `\\`; never a non-ASCII byte). As in
/// [`stop_bytes`], only the lowest set bit is sure to be a true hit.
#[inline]
pub(super) fn escape_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // One "less than" test finds both the control characters and `"`: flipping bit 1 maps
    // `"` (0x22) to 0x20 and keeps 0x00..=0x1F among themselves, so after the flip exactly
    // those bytes are below 0x21. The flip leaves the high bit alone: a non-ASCII byte is
    // never below 0x21 after it either.
    let flipped = word ^ (ONES * 0x02);
    let control_or_quote = flipped.wrapping_sub(ONES * 0x21) & !flipped;
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control_or_quote | backslash) & HIGHS
}

/// The high bit of every byte of a word.
const HIGHS: u64 = 0x8080_8080_8080_8080;

// The scanner proper: free functions over the bytes and a position, each returning the
// position after what it read (`None`: not the common shape). Positions never pass
// `bytes.len()`; every read is a checked `get`.

/// The position of the first byte at or after `i` that is not JSON whitespace.
#[inline]
pub(super) fn skip_blank(bytes: &[u8], i: usize) -> usize {
    // Compact text has no blanks at all, and every blank is at most a space: one comparison
    // answers for the usual byte where this is inlined; the loop over blanks is out of line
    // (one copy instead of one at each of the many call sites: instruction cache).
    match bytes.get(i) {
        Some(&b) if b > b' ' => i,
        _ => skip_blank_run(bytes, i),
    }
}

/// [`skip_blank`] past a blank (or at the end): the loop over the run of blanks.
#[inline(never)]
fn skip_blank_run(bytes: &[u8], mut i: usize) -> usize {
    while let Some(&b) = bytes.get(i) {
        if b > b' ' || !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
            break;
        }
        i += 1;
    }
    i
}

/// The position after byte `want` at `i`, blanks allowed first; `None` when another byte is
/// there. Compact text has `want` right at `i`: one comparison, no blank skipped.
#[inline]
fn after_byte(bytes: &[u8], i: usize, want: u8) -> Option<usize> {
    if bytes.get(i) == Some(&want) {
        return Some(i + 1);
    }
    let i = skip_blank(bytes, i);
    (*bytes.get(i)? == want).then_some(i + 1)
}

/// The position of the first byte at or after `i` that is not a digit.
#[inline]
fn skip_digits(bytes: &[u8], mut i: usize) -> usize {
    while let Some(b'0'..=b'9') = bytes.get(i) {
        i += 1;
    }
    i
}

/// A top-level key starting at `i` (after its opening quote): the position of its closing
/// quote. `None` for a key with an escape (serde would unescape it before matching; left to
/// the serde path), a control character or a non-ASCII byte.
#[inline]
fn plain_key_end(bytes: &[u8], i: usize) -> Option<usize> {
    let end = next_string_stop(bytes, i)?;
    (*bytes.get(end)? == b'"').then_some(end)
}

/// The rest of a string starting at `i` (after its opening quote): the position after its
/// closing quote. The usual string, plain ASCII up to its quote, is read inline; escapes and
/// UTF-8 are read out of line, so the fast path stays small where it is inlined.
#[inline]
fn string_end(bytes: &[u8], i: usize) -> Option<usize> {
    let stop = next_string_stop(bytes, i)?;
    if *bytes.get(stop)? == b'"' {
        return Some(stop + 1);
    }
    string_end_from_stop(bytes, stop)
}

/// The rest of a string from a stop byte at `i` that may be anything but a plain character.
#[inline(never)]
fn string_end_from_stop(bytes: &[u8], mut i: usize) -> Option<usize> {
    loop {
        match *bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i = escape_end(bytes, i + 1)?,
            0x80.. => i = utf8_run_end(bytes, i)?,
            _ => return None,
        }
        i = next_string_stop(bytes, i)?;
    }
}

/// A run of non-ASCII bytes starting at `i`: the position after it, if it is valid UTF-8.
/// Every byte of a multi-byte character is non-ASCII, so a text is UTF-8 exactly when each
/// such maximal run is; checking runs (not characters) keeps long non-Latin text fast.
fn utf8_run_end(bytes: &[u8], i: usize) -> Option<usize> {
    let rest = bytes.get(i..)?;
    let len = rest.iter().position(u8::is_ascii).unwrap_or(rest.len());
    std::str::from_utf8(rest.get(..len)?).ok()?;
    Some(i + len)
}

/// One escape starting at `i` (after its backslash): the position after it.
fn escape_end(bytes: &[u8], i: usize) -> Option<usize> {
    match *bytes.get(i)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(i + 1),
        b'u' => {
            let hex = bytes.get(i + 1..i + 5)?;
            hex.iter().all(u8::is_ascii_hexdigit).then_some(i + 5)
        }
        _ => None,
    }
}

/// A number whose first byte (a digit, or `-`) is at `i - 1`: the position after it.
fn number_end(bytes: &[u8], first: u8, mut i: usize) -> Option<usize> {
    let lead = if first == b'-' {
        i += 1;
        *bytes.get(i - 1)?
    } else {
        first
    };
    match lead {
        // There can be only one leading zero.
        b'0' if matches!(bytes.get(i), Some(b'0'..=b'9')) => return None,
        b'0' => {}
        b'1'..=b'9' => i = skip_digits(bytes, i),
        _ => return None,
    }
    if bytes.get(i) == Some(&b'.') {
        let end = skip_digits(bytes, i + 1);
        if end == i + 1 {
            return None;
        }
        i = end;
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = bytes.get(i) {
            i += 1;
        }
        let end = skip_digits(bytes, i);
        if end == i {
            return None;
        }
        i = end;
    }
    Some(i)
}

/// `rest` of a literal at `i` (its first byte consumed): the position after it.
#[inline]
fn literal_end(bytes: &[u8], i: usize, rest: &[u8]) -> Option<usize> {
    let end = i + rest.len();
    (bytes.get(i..end)? == rest).then_some(end)
}

/// An object member's key and colon at `i` (blanks allowed first): the position after the
/// colon.
#[inline]
fn member_key_end(bytes: &[u8], i: usize) -> Option<usize> {
    let body = after_byte(bytes, i, b'"')?;
    after_byte(bytes, string_end(bytes, body)?, b':')
}

/// A top-level member's value at `i`: the position after it. The usual scalars of an
/// envelope (the method, a string or plain integer id) are read inline; anything else is
/// [`value_end`]'s, whose set-up costs more than such a value.
#[inline]
fn member_value_end(bytes: &[u8], i: usize) -> Option<usize> {
    match *bytes.get(i)? {
        b'"' => string_end(bytes, i + 1),
        b'1'..=b'9' => {
            let end = skip_digits(bytes, i + 1);
            match bytes.get(end) {
                Some(b'.' | b'e' | b'E') => value_end(bytes, i),
                _ => Some(end),
            }
        }
        _ => value_end(bytes, i),
    }
}

/// One complete value at `i` (blanks allowed first), containers included, without recursion:
/// the position after it.
fn value_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    // Bit k of `open` is 1 when the container at depth k + 1 is an object.
    let mut open: u64 = 0;
    let mut depth: u32 = 0;
    loop {
        i = skip_blank(bytes, i);
        let first = *bytes.get(i)?;
        i += 1;
        let opened = match first {
            b'"' => {
                i = string_end(bytes, i)?;
                None
            }
            b'{' => Some(true),
            b'[' => Some(false),
            b't' => {
                i = literal_end(bytes, i, b"rue")?;
                None
            }
            b'f' => {
                i = literal_end(bytes, i, b"alse")?;
                None
            }
            b'n' => {
                i = literal_end(bytes, i, b"ull")?;
                None
            }
            b'-' | b'0'..=b'9' => {
                i = number_end(bytes, first, i)?;
                None
            }
            _ => return None,
        };
        if let Some(is_object) = opened {
            i = skip_blank(bytes, i);
            let close = if is_object { b'}' } else { b']' };
            if bytes.get(i) == Some(&close) {
                i += 1;
            } else {
                if depth == MAX_DEPTH {
                    return None;
                }
                open = (open << 1) | u64::from(is_object);
                depth += 1;
                if is_object {
                    i = member_key_end(bytes, i)?;
                }
                continue;
            }
        }
        // A value ended: close what it ends, or move to the next element.
        loop {
            if depth == 0 {
                return Some(i);
            }
            let in_object = open & 1 == 1;
            i = skip_blank(bytes, i);
            let next = *bytes.get(i)?;
            i += 1;
            match next {
                b',' => {
                    if in_object {
                        i = member_key_end(bytes, i)?;
                    }
                    break;
                }
                b'}' if in_object => {}
                b']' if !in_object => {}
                _ => return None,
            }
            open >>= 1;
            depth -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{escape_bytes, skip_blank, NOT_RAW_IN_STRING};

    /// The lane (byte index) `escape_bytes` answers for `bytes`: its lowest set bit's.
    fn first_escape_lane(bytes: [u8; 8]) -> Option<usize> {
        let hits = escape_bytes(u64::from_le_bytes(bytes));
        (hits != 0).then(|| (hits.trailing_zeros() / 8) as usize)
    }

    #[test]
    fn escape_bytes_finds_the_first_byte_a_string_cannot_hold_raw() {
        // Every pair of byte values in every pair of lanes, among plain and non-ASCII filler:
        // the lowest hit is the first control character, `"` or `\`, whatever follows it.
        for filler in [b'x', 0xff, b'!', b'#', b'['] {
            for (first_lane, second_lane) in [(0, 1), (3, 4), (6, 7), (0, 7), (2, 5)] {
                for a in 0..=u8::MAX {
                    for b in 0..=u8::MAX {
                        let mut bytes = [filler; 8];
                        bytes[first_lane] = a;
                        bytes[second_lane] = b;
                        let want = bytes
                            .iter()
                            .position(|&c| NOT_RAW_IN_STRING[usize::from(c)]);
                        assert_eq!(first_escape_lane(bytes), want, "{bytes:?}");
                    }
                }
            }
        }
    }

    /// The general reading: skip while the byte is one of JSON's four blanks.
    fn skip_blank_reference(bytes: &[u8], i: usize) -> usize {
        let blank = |b: &u8| matches!(b, b' ' | b'\n' | b'\t' | b'\r');
        i + bytes[i..].iter().take_while(|b| blank(b)).count()
    }

    #[test]
    fn skip_blank_fast_check_agrees_with_the_four_blanks() {
        for b in 0..=u8::MAX {
            for prefix in [&b""[..], b" ", b"\t\n\r ", b"\x0b", b"\x0c "] {
                let mut text = prefix.to_vec();
                text.push(b);
                for i in 0..=text.len() {
                    assert_eq!(
                        skip_blank(&text, i),
                        skip_blank_reference(&text, i),
                        "{text:?} at {i}"
                    );
                }
            }
        }
    }
}
