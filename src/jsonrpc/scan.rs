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
//! are not paired, as serde_json does not pair them when skipping). The text is already known to
//! be UTF-8 (the decoder checks the whole frame first).

/// The JSON-RPC members of one object, each the raw text of its value. `Some` means present,
/// including `null`.
#[derive(Default)]
pub(super) struct Members<'a> {
    /// `jsonrpc`.
    pub jsonrpc: Option<&'a str>,
    /// `id`.
    pub id: Option<&'a str>,
    /// `method`.
    pub method: Option<&'a str>,
    /// `params`.
    pub params: Option<&'a str>,
    /// `result`.
    pub result: Option<&'a str>,
    /// `error`.
    pub error: Option<&'a str>,
}

/// Containers nested deeper than this inside a member send the text to the serde path (the
/// open containers are tracked in the bits of one `u64`).
pub(super) const MAX_DEPTH: u32 = 64;

/// Scans `text` as one JSON object (surrounding whitespace allowed). `None` when the text is not
/// of the common shape described in the module header, valid or not.
pub(super) fn members(text: &str) -> Option<Members<'_>> {
    let mut s = Scanner {
        bytes: text.as_bytes(),
        pos: 0,
    };
    let mut found = Members::default();
    s.skip_blank();
    s.expect(b'{')?;
    s.skip_blank();
    if !s.eat(b'}') {
        loop {
            s.skip_blank();
            s.expect(b'"')?;
            let key = s.plain_key()?;
            s.skip_blank();
            s.expect(b':')?;
            s.skip_blank();
            let start = s.pos;
            s.value()?;
            let value = text.get(start..s.pos)?;
            if let Some(slot) = found.slot(key) {
                if slot.replace(value).is_some() {
                    // serde rejects a duplicate member (with its own message): let it.
                    return None;
                }
            }
            s.skip_blank();
            match s.next()? {
                b',' => continue,
                b'}' => break,
                _ => return None,
            }
        }
    }
    s.skip_blank();
    (s.pos == s.bytes.len()).then_some(found)
}

impl<'a> Members<'a> {
    fn slot(&mut self, key: &[u8]) -> Option<&mut Option<&'a str>> {
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

/// Bytes that end the fast run through a string: the closing quote, an escape, or a control
/// character (which JSON forbids raw inside a string).
const STRING_STOP: [bool; 256] = {
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

/// The index of the first string stop byte in `bytes`, eight bytes at a time (the usual
/// "has a zero byte" bit trick, as serde_json's own string skip does it).
pub(super) fn find_string_stop(bytes: &[u8]) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).ok()?);
        let hits = stop_bytes(word);
        if hits != 0 {
            return Some(offset + (hits.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    let tail = chunks.remainder();
    let at = tail.iter().position(|&b| STRING_STOP[usize::from(b)])?;
    Some(offset + at)
}

/// The high bit of each byte of `word` that may be a stop byte. In each of the three tests a
/// borrow only runs upwards from a true hit, so the lowest set bit (the first byte, in
/// little-endian order) is always a true hit: callers use only that one.
fn stop_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGHS
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    fn eat(&mut self, want: u8) -> bool {
        let hit = self.peek() == Some(want);
        self.pos += usize::from(hit);
        hit
    }

    fn expect(&mut self, want: u8) -> Option<()> {
        self.eat(want).then_some(())
    }

    /// JSON's insignificant whitespace, as serde_json reads it.
    fn skip_blank(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn skip_digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    /// A top-level key (its opening quote consumed): the bytes between the quotes. `None` for a
    /// key with an escape (serde would unescape it before matching; left to the serde path) or
    /// a control character.
    fn plain_key(&mut self) -> Option<&'a [u8]> {
        let start = self.pos;
        let bytes = self.bytes;
        let rest = bytes.get(start..)?;
        let len = find_string_stop(rest)?;
        if rest.get(len) != Some(&b'"') {
            return None;
        }
        self.pos = start + len + 1;
        rest.get(..len)
    }

    /// The rest of a string whose opening quote is consumed, up to and including its closing
    /// quote.
    fn string(&mut self) -> Option<()> {
        loop {
            let rest = self.bytes.get(self.pos..)?;
            let run = find_string_stop(rest)?;
            self.pos += run + 1;
            match rest.get(run)? {
                b'"' => return Some(()),
                b'\\' => self.escape()?,
                _ => return None,
            }
        }
    }

    /// One escape after its backslash.
    fn escape(&mut self) -> Option<()> {
        match self.next()? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(()),
            b'u' => {
                let hex = self.bytes.get(self.pos..self.pos + 4)?;
                self.pos += 4;
                hex.iter().all(u8::is_ascii_hexdigit).then_some(())
            }
            _ => None,
        }
    }

    /// A number whose first byte (a digit, or `-`) is consumed.
    fn number(&mut self, first: u8) -> Option<()> {
        let lead = if first == b'-' { self.next()? } else { first };
        match lead {
            // There can be only one leading zero.
            b'0' if matches!(self.peek(), Some(b'0'..=b'9')) => return None,
            b'0' => {}
            b'1'..=b'9' => {
                self.skip_digits();
            }
            _ => return None,
        }
        if self.eat(b'.') && self.skip_digits() == 0 {
            return None;
        }
        if self.eat(b'e') || self.eat(b'E') {
            let _ = self.eat(b'+') || self.eat(b'-');
            if self.skip_digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    fn literal(&mut self, rest: &[u8]) -> Option<()> {
        let end = self.pos + rest.len();
        (self.bytes.get(self.pos..end)? == rest).then_some(())?;
        self.pos = end;
        Some(())
    }

    /// An object member's key and colon, the key's opening quote not yet consumed.
    fn member_key(&mut self) -> Option<()> {
        self.skip_blank();
        self.expect(b'"')?;
        self.string()?;
        self.skip_blank();
        self.expect(b':')
    }

    /// One complete value (leading whitespace already skipped by the caller or skipped here),
    /// containers included, without recursion.
    fn value(&mut self) -> Option<()> {
        // Bit i of `open` is 1 when the container at depth i + 1 is an object.
        let mut open: u64 = 0;
        let mut depth: u32 = 0;
        loop {
            self.skip_blank();
            let opened = match self.next()? {
                b'"' => {
                    self.string()?;
                    None
                }
                b'{' => Some(true),
                b'[' => Some(false),
                b't' => self.literal(b"rue").map(|()| None)?,
                b'f' => self.literal(b"alse").map(|()| None)?,
                b'n' => self.literal(b"ull").map(|()| None)?,
                first @ (b'-' | b'0'..=b'9') => self.number(first).map(|()| None)?,
                _ => return None,
            };
            if let Some(is_object) = opened {
                self.skip_blank();
                let empty = self.eat(if is_object { b'}' } else { b']' });
                if !empty {
                    if depth == MAX_DEPTH {
                        return None;
                    }
                    open = (open << 1) | u64::from(is_object);
                    depth += 1;
                    if is_object {
                        self.member_key()?;
                    }
                    continue;
                }
            }
            // A value ended: close what it ends, or move to the next element.
            loop {
                if depth == 0 {
                    return Some(());
                }
                let in_object = open & 1 == 1;
                self.skip_blank();
                match self.next()? {
                    b',' => {
                        if in_object {
                            self.member_key()?;
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
}
