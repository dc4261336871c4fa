//! `JsonView`: reading members, elements and scalars of a [`RawJson`] in place, without
//! parsing the whole value.
//!
//! A handler that needs two fields of its params (a tool name, one argument) pays for a full
//! serde parse of everything else when it deserialises a struct. The text of a `RawJson` is
//! already known to be one valid JSON value (the decoder validated it), so a lookup only has to
//! skip: it steps over the members before the one it wants by counting brackets outside
//! strings and finds the end of a string by its next unescaped quote, with no grammar checks
//! left to make. A view starts at its value's first byte and finds the value's end only when
//! asked for something that needs it, so walking down a path (`content`, element 0, `text`)
//! reads each level only up to the member it wants. Only the value asked for is converted, and
//! a string without escapes is borrowed.
//!
//! Keys compare after unescaping, as serde does. An object that repeats a key (RFC 8259 §4
//! leaves its meaning open) answers with the first member of that name, where
//! `serde_json::Value` keeps the last and a derived struct refuses the object; an application
//! that must reject such objects parses them ([`JsonView::parse`]). A text that breaks the
//! invariant (possible only through a bug) gives `None` or an arbitrary slice of the text,
//! never a panic.

use std::borrow::Cow;

use serde::Deserialize;

use super::scan::{escape_bytes, not_raw_in_string, skip_blank};
use super::RawJson;

/// A borrowed view of one JSON value inside a [`RawJson`]. Cheap to copy; every method reads
/// the text in place.
#[derive(Clone, Copy)]
pub struct JsonView<'a> {
    /// From the value's first byte to the end of the enclosing text: the value's own end is
    /// found when a method needs it.
    text: &'a [u8],
}

impl RawJson {
    /// A view of this value for in-place lookups ([`JsonView::member`], [`JsonView::as_str`]).
    pub fn view(&self) -> JsonView<'_> {
        JsonView::new(self.as_bytes())
    }
}

impl<'a> JsonView<'a> {
    fn new(text: &'a [u8]) -> Self {
        JsonView {
            text: text.get(skip_blank(text, 0)..).unwrap_or_default(),
        }
    }

    /// The value's own text, from its first byte to its last.
    fn bytes(self) -> &'a [u8] {
        let end = value_end(self.text, 0).unwrap_or(self.text.len());
        self.text.get(..end).unwrap_or_default()
    }

    /// The JSON text of this value.
    pub fn text(self) -> &'a str {
        std::str::from_utf8(self.bytes()).unwrap_or("null")
    }

    /// Whether the value is an object.
    pub fn is_object(self) -> bool {
        self.text.first() == Some(&b'{')
    }

    /// Whether the value is an array.
    pub fn is_array(self) -> bool {
        self.text.first() == Some(&b'[')
    }

    /// Whether the value is a string.
    pub fn is_string(self) -> bool {
        self.text.first() == Some(&b'"')
    }

    /// Whether the value is `null`.
    pub fn is_null(self) -> bool {
        self.text.starts_with(b"null")
    }

    /// The value of member `key` when this is an object that has it (the first one when the
    /// key repeats: see the module docs).
    pub fn member(self, key: &str) -> Option<JsonView<'a>> {
        let mut members = self.members();
        loop {
            // The usual case, a key written without escapes, is compared in place: the key's
            // own end need not be searched for when it matches.
            if let Some(start) = members.plain_key_match(key) {
                return Some(JsonView {
                    text: self.text.get(start..)?,
                });
            }
            let (name, start) = members.next_name()?;
            // A name without escapes that is not `key` was just told apart in place.
            if name.escaped && name.matches(key) {
                return Some(JsonView {
                    text: self.text.get(start..)?,
                });
            }
            members.skip_value(start)?;
        }
    }

    /// Element `index` when this is an array that long.
    pub fn element(self, index: usize) -> Option<JsonView<'a>> {
        let mut elements = self.array();
        for _ in 0..index {
            let start = elements.next_start()?;
            elements.skip_value(start)?;
        }
        let start = elements.next_start()?;
        Some(JsonView {
            text: self.text.get(start..)?,
        })
    }

    /// The members of an object, in text order (empty for anything else).
    pub fn members(self) -> Members<'a> {
        let at = if self.is_object() { 1 } else { self.text.len() };
        Members {
            text: self.text,
            at,
        }
    }

    /// The elements of an array, in order (empty for anything else).
    pub fn elements(self) -> impl Iterator<Item = JsonView<'a>> + Clone + 'a {
        self.array()
    }

    /// The element cursor over an array (at the end for anything else).
    fn array(self) -> Elements<'a> {
        let at = if self.is_array() { 1 } else { self.text.len() };
        Elements {
            text: self.text,
            at,
        }
    }

    /// The string, unescaped: borrowed from the text when it has no escapes. `None` for
    /// anything but a string, and for a string `serde_json` would refuse to unescape (an
    /// unpaired surrogate escape).
    pub fn as_str(self) -> Option<Cow<'a, str>> {
        read_string(self.text)
    }

    /// The value when it is `true` or `false`.
    pub fn as_bool(self) -> Option<bool> {
        match self.bytes() {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        }
    }

    /// The value when it is an integer that fits an `i64`.
    pub fn as_i64(self) -> Option<i64> {
        self.number()?.parse().ok()
    }

    /// The value when it is an integer that fits a `u64`.
    pub fn as_u64(self) -> Option<u64> {
        self.number()?.parse().ok()
    }

    /// The value when it is a number, as the nearest `f64`.
    pub fn as_f64(self) -> Option<f64> {
        self.number()?.parse().ok()
    }

    fn number(self) -> Option<&'a str> {
        matches!(self.text.first(), Some(b'-' | b'0'..=b'9')).then(|| self.text())
    }

    /// Parses a typed view of this value (serde), borrowing from its text where `T` can.
    pub fn parse<T: Deserialize<'a>>(self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.text())
    }

    /// This value as an owned [`RawJson`] (a copy of its text).
    pub fn to_raw(self) -> RawJson {
        RawJson::from_validated(bytes::Bytes::copy_from_slice(self.bytes()))
    }
}

impl std::fmt::Debug for JsonView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JsonView({})", self.text())
    }
}

/// A member name as it appears in the text (quotes included, escapes not yet resolved).
#[derive(Clone, Copy, Debug)]
pub struct MemberName<'a> {
    quoted: &'a [u8],
    /// Whether the name has an escape (else its text between the quotes is the name).
    escaped: bool,
}

impl<'a> MemberName<'a> {
    /// Whether the name, unescaped, is `key`.
    pub fn matches(self, key: &str) -> bool {
        self.unescaped().is_some_and(|name| name == key)
    }

    /// The name, unescaped (borrowed when it has no escapes).
    pub fn unescaped(self) -> Option<Cow<'a, str>> {
        read_string(self.quoted)
    }
}

/// The members of an object view: see [`JsonView::members`].
#[derive(Clone, Debug)]
pub struct Members<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Members<'a> {
    /// The next member's name and the position of its value's first byte.
    fn next_name(&mut self) -> Option<(MemberName<'a>, usize)> {
        let text = self.text;
        let quote = skip_blank(text, self.at);
        if text.get(quote) != Some(&b'"') {
            self.at = text.len();
            return None;
        }
        let (name_end, escaped) = string_end_escaped(text, quote + 1)?;
        let quoted = text.get(quote..name_end)?;
        let colon = skip_blank(text, name_end);
        Some((MemberName { quoted, escaped }, skip_blank(text, colon + 1)))
    }

    /// When the next member's name is exactly `key`, written without escapes: the position of
    /// its value's first byte. Reads nothing past the name otherwise.
    fn plain_key_match(&self, key: &str) -> Option<usize> {
        let text = self.text;
        let quote = skip_blank(text, self.at);
        let name_start = quote + 1;
        let name_end = name_start + key.len();
        let candidate = text.get(quote..name_end + 1)?;
        let (open, rest) = candidate.split_first()?;
        let (close, name) = rest.split_last()?;
        if *open != b'"' || *close != b'"' || !plain_equal(name, key.as_bytes()) {
            return None;
        }
        let colon = skip_blank(text, name_end + 1);
        Some(skip_blank(text, colon + 1))
    }

    /// Steps over the value starting at `start` and the comma after it: the value's end.
    fn skip_value(&mut self, start: usize) -> Option<usize> {
        let end = value_end(self.text, start);
        self.at = after_value(self.text, end);
        end
    }
}

/// Whether a name's raw text equals `key` with no backslash in it. A key with a backslash is
/// never equal here: its raw text means something else (`a\n` is an escape) or may end at an
/// escaped quote (`a\` against `"a\"b"`), so it goes the slow way. One pass over the short
/// texts compares and looks for the backslash together: a slice comparison then a search cost
/// two calls (`memcmp`, `memchr`) per key, more than the loop.
fn plain_equal(name: &[u8], key: &[u8]) -> bool {
    name.len() == key.len() && name.iter().zip(key).all(|(&n, &k)| n == k && n != b'\\')
}

impl<'a> Iterator for Members<'a> {
    type Item = (MemberName<'a>, JsonView<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let (name, start) = self.next_name()?;
        let end = self.skip_value(start)?;
        let text = self.text.get(start..end)?;
        Some((name, JsonView { text }))
    }
}

/// The elements of an array view: see [`JsonView::elements`].
#[derive(Clone, Debug)]
pub(crate) struct Elements<'a> {
    text: &'a [u8],
    at: usize,
}

impl Elements<'_> {
    /// The position of the next element's first byte.
    fn next_start(&mut self) -> Option<usize> {
        let start = skip_blank(self.text, self.at);
        if matches!(self.text.get(start), None | Some(b']')) {
            self.at = self.text.len();
            return None;
        }
        Some(start)
    }

    /// Steps over the value starting at `start` and the comma after it: the value's end.
    fn skip_value(&mut self, start: usize) -> Option<usize> {
        let end = value_end(self.text, start);
        self.at = after_value(self.text, end);
        end
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = JsonView<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.next_start()?;
        let end = self.skip_value(start)?;
        let text = self.text.get(start..end)?;
        Some(JsonView { text })
    }
}

/// Where the next member or element starts its search after a value that ended at `end`:
/// past the comma, or the end of the text when the container closes there (a view's text runs
/// on into the enclosing value, whose bytes must not be read as more members).
fn after_value(text: &[u8], end: Option<usize>) -> usize {
    let Some(end) = end else {
        return text.len();
    };
    let next = skip_blank(text, end);
    if text.get(next) == Some(&b',') {
        next + 1
    } else {
        text.len()
    }
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t' | b'\r')
}

/// The end (exclusive) of the valid value starting at `i`.
fn value_end(text: &[u8], i: usize) -> Option<usize> {
    match *text.get(i)? {
        b'"' => string_end(text, i + 1),
        b'{' | b'[' => container_end(text, i + 1),
        _ => Some(
            text.get(i..)?
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || is_blank(*b))
                .map_or(text.len(), |n| i + n),
        ),
    }
}

/// The position after the closing quote of the string whose body starts at `i`.
fn string_end(text: &[u8], i: usize) -> Option<usize> {
    string_end_escaped(text, i).map(|(end, _)| end)
}

/// [`string_end`], and whether the string has an escape.
fn string_end_escaped(text: &[u8], mut i: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        i = next_quote_or_escape(text, i)?;
        if *text.get(i)? == b'"' {
            return Some((i + 1, escaped));
        }
        // An escape: its next byte is never the closing quote (`\u` digits are not quotes).
        escaped = true;
        i += 2;
    }
}

/// The position after the bracket that closes the container whose body starts at `i`.
fn container_end(text: &[u8], mut i: usize) -> Option<usize> {
    let mut depth: usize = 1;
    loop {
        let b = *text.get(i)?;
        i += 1;
        match b {
            b'"' => i = string_end(text, i)?,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
}

/// The first `"` or `\` at or after `i`, eight bytes at a time.
fn next_quote_or_escape(text: &[u8], i: usize) -> Option<usize> {
    next_stop::<false>(text, i)
}

/// The first `"` or `\` at or after `i`, eight bytes at a time; with `CONTROL`, the first raw
/// control character too (the scanner's word test, as many operations a word).
#[inline(always)]
fn next_stop<const CONTROL: bool>(text: &[u8], mut i: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = text.get(i..i + 8) {
        let word = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).ok()?);
        let hits = if CONTROL {
            escape_bytes(word)
        } else {
            let quote = word ^ (ONES * u64::from(b'"'));
            let backslash = word ^ (ONES * u64::from(b'\\'));
            // The "has a zero byte" test; only the lowest hit is used (see `scan::stop_bytes`).
            ((quote.wrapping_sub(ONES) & !quote) | (backslash.wrapping_sub(ONES) & !backslash))
                & HIGHS
        };
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    stop_in_tail::<CONTROL>(text, i)
}

/// [`next_stop`] in the last bytes of the text, fewer than eight, byte by byte. Out of line:
/// `next_stop` is inlined into every reader, and this loop is the larger part of it
/// (instruction cache).
#[inline(never)]
fn stop_in_tail<const CONTROL: bool>(text: &[u8], i: usize) -> Option<usize> {
    let stop = |b: &u8| {
        if CONTROL {
            not_raw_in_string(*b)
        } else {
            matches!(b, b'"' | b'\\')
        }
    };
    text.get(i..)?.iter().position(stop).map(|n| i + n)
}

/// The string whose opening quote is `text[0]` (the text may go on after it), unescaped: see
/// [`read_string_end`].
fn read_string(text: &[u8]) -> Option<Cow<'_, str>> {
    read_string_end(text).map(|(body, _)| body)
}

/// The string whose opening quote is `text[0]` (the text may go on after it), unescaped in one
/// pass, and the position after its closing quote: the first stop is the closing quote (the
/// body is borrowed) or an escape (from there on the body is copied and unescaped up to the
/// closing quote). `None` when `text` does not start with a quote, and for what serde_json
/// refuses in a string: an unpaired surrogate, a bad escape letter, invalid UTF-8, no closing
/// quote. A raw control character (never in a validated text) is not looked for: this is the
/// view's reader, whose text the decoder validated.
#[inline(always)]
fn read_string_end(text: &[u8]) -> Option<(Cow<'_, str>, usize)> {
    read_string_end_with::<false>(text)
}

/// [`read_string_end`] for text nobody validated: a raw control character in the string is
/// refused too (`None`), found by the same search that finds the closing quote and the
/// escapes, so the string is read once.
pub(crate) fn read_unvalidated_string_end(text: &[u8]) -> Option<(Cow<'_, str>, usize)> {
    read_string_end_with::<true>(text)
}

/// The string reader; with `REFUSE_CONTROL` its searches stop at raw control characters as
/// well, and the string is refused at one.
#[inline(always)]
fn read_string_end_with<const REFUSE_CONTROL: bool>(text: &[u8]) -> Option<(Cow<'_, str>, usize)> {
    if text.first() != Some(&b'"') {
        return None;
    }
    let stop = next_stop::<REFUSE_CONTROL>(text, 1)?;
    let byte = *text.get(stop)?;
    if byte == b'"' {
        let body = std::str::from_utf8(text.get(1..stop)?).ok()?;
        return Some((Cow::Borrowed(body), stop + 1));
    }
    if REFUSE_CONTROL && byte != b'\\' {
        return None;
    }
    unescape_from::<REFUSE_CONTROL>(text, stop).map(|(body, end)| (Cow::Owned(body), end))
}

/// The string whose opening quote is `text[0]` and whose first escape is at `first`,
/// unescaped up to its closing quote, and the position after that quote. `None` as for
/// [`read_string_end_with`].
fn unescape_from<const REFUSE_CONTROL: bool>(text: &[u8], first: usize) -> Option<(String, usize)> {
    // The unescaped text is never longer than the escaped one; `utf8_string` pads.
    let mut out = Vec::with_capacity(text.len().min(first + 64) + UTF8_BLOCK);
    out.extend_from_slice(text.get(1..first)?);
    let mut i = first;
    loop {
        // `i` is at a backslash.
        let letter = *text.get(i + 1)?;
        i += 2;
        if letter == b'u' {
            let (c, next) = unicode_escape(text, i)?;
            i = next;
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        } else {
            out.push(short_escape(letter)?);
        }
        let stop = next_stop::<REFUSE_CONTROL>(text, i)?;
        out.extend_from_slice(text.get(i..stop)?);
        i = stop;
        let byte = *text.get(stop)?;
        if byte == b'"' {
            return utf8_string(out).map(|body| (body, stop + 1));
        }
        if REFUSE_CONTROL && byte != b'\\' {
            return None;
        }
    }
}

/// The ASCII block of the standard UTF-8 check (two `usize` words).
const UTF8_BLOCK: usize = 16;

/// `bytes` as a `String` if they are UTF-8. The standard check reads ASCII sixteen bytes at a
/// time but walks the last fifteen or fewer byte by byte (about five instructions each); padding
/// the buffer with spaces to a whole number of blocks (spaces are ASCII, so the answer is
/// unchanged) and cutting them off again keeps it in the fast loop.
fn utf8_string(mut bytes: Vec<u8>) -> Option<String> {
    let len = bytes.len();
    // One fixed-size copy (no call), then back to the block boundary.
    bytes.extend_from_slice(&[b' '; UTF8_BLOCK]);
    bytes.truncate(len.next_multiple_of(UTF8_BLOCK));
    let mut text = String::from_utf8(bytes).ok()?;
    text.truncate(len);
    Some(text)
}

/// The byte a one-letter JSON escape (`\n`, `\"`, ...) stands for; `None` for `\u` (which
/// takes four hex digits) and for any letter JSON does not allow after a backslash.
fn short_escape(letter: u8) -> Option<u8> {
    Some(match letter {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// A `\u` escape whose four hex digits start at `i` (a surrogate pair takes the following
/// `\uXXXX` too): the character and the position after the escape.
fn unicode_escape(body: &[u8], i: usize) -> Option<(char, usize)> {
    let first = hex4(body, i)?;
    if !(0xD800..0xE000).contains(&first) {
        return Some((char::from_u32(first)?, i + 4));
    }
    if first >= 0xDC00 || body.get(i + 4..i + 6)? != b"\\u" {
        return None;
    }
    let second = hex4(body, i + 6)?;
    if !(0xDC00..0xE000).contains(&second) {
        return None;
    }
    let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
    Some((char::from_u32(code)?, i + 10))
}

fn hex4(body: &[u8], i: usize) -> Option<u32> {
    let digits = std::str::from_utf8(body.get(i..i + 4)?).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::{read_string_end, read_unvalidated_string_end, utf8_string};

    /// Strings of every length up to past three padding blocks, plain and with escapes,
    /// ASCII and not, followed by more text: read as serde_json reads them, ending right
    /// after their closing quote.
    #[test]
    fn strings_read_as_serde_json_reads_them_and_end_at_their_quote() {
        for special in ["", "\"", "\\", "\n", "\u{1}", "é", "😀", "\u{7f}", "/"] {
            for len in 0..=50 {
                for at in [0, len / 2, len] {
                    let mut text: String = "abcdefghij".chars().cycle().take(len).collect();
                    text.insert_str(at, special);
                    let written = serde_json::to_string(&text).expect("serialisable");
                    let mut input = written.clone().into_bytes();
                    input.extend_from_slice(b",\"next\":1}");
                    let (read, end) = read_string_end(&input).expect("a string");
                    assert_eq!(read, text, "{written}");
                    assert_eq!(end, written.len(), "{written}");
                    let unvalidated = read_unvalidated_string_end(&input);
                    assert_eq!(unvalidated, Some((read, end)), "{written}");
                }
            }
        }
    }

    #[test]
    fn what_is_not_a_string_serde_json_reads_is_refused() {
        for text in [
            &b"abc\""[..],
            b"\"abc",
            b"\"a\\qb\"",
            b"\"\\ud800\"",
            b"\"\\u12\"",
            b"\"\xff\"",
            b"\"a\\n\xc3\"",
        ] {
            assert!(read_string_end(text).is_none(), "{text:?}");
        }
    }

    /// Every raw control character, anywhere in strings of 0 to 20 bytes (in the first run, in
    /// a word or the tail after it, after an escape), is refused by the reader of unvalidated
    /// text; the view's reader, which trusts its text, reads past it.
    #[test]
    fn the_unvalidated_reader_refuses_raw_control_characters() {
        for control in 0..0x20u8 {
            for escape in [&b""[..], b"\\n", b"\\u00e9"] {
                for len in 0..=20 {
                    for at in 0..=len {
                        let mut body: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                        body.insert(at, control);
                        let mut text = b"\"".to_vec();
                        text.extend_from_slice(escape);
                        text.extend_from_slice(&body);
                        text.extend_from_slice(b"\",\"next\":1}");
                        assert_eq!(read_unvalidated_string_end(&text), None, "{text:?}");
                        let trusted = read_string_end(&text).expect("read past it");
                        assert_eq!(trusted.1, text.len() - 10, "{text:?}");
                    }
                }
            }
        }
    }

    /// The padded check answers as the plain one for every length around the block size,
    /// with invalid or multi-byte UTF-8 at the end or not.
    #[test]
    fn padded_utf8_check_agrees_with_the_plain_one() {
        for len in 0..=40 {
            for tail in [
                &b""[..],
                b"\xff",
                b"\xc3",
                b"\xc3\xa9",
                b"\xf0\x9f\x98\x80",
                b"\xf0\x9f",
            ] {
                let mut bytes: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                bytes.extend_from_slice(tail);
                let plain = String::from_utf8(bytes.clone()).ok();
                assert_eq!(utf8_string(bytes), plain);
            }
        }
    }
}
