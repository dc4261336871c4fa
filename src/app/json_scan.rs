//! A cursor over JSON text that is already known to be valid (a slice of a decoded
//! message): it finds an object's members and skips values without building anything, for
//! the quick paths of `tools/call` (its params, a flat schema's check of its arguments).
//! Every step checks bounds; on text it does not expect it answers `None` or `false` (never
//! panics), and its callers then take their full (serde) path.

/// JSON types as bits: what a schema admits, and what a value is.
pub(crate) const OBJECT: u8 = 1;
pub(crate) const ARRAY: u8 = 2;
pub(crate) const STRING: u8 = 4;
pub(crate) const BOOLEAN: u8 = 8;
pub(crate) const NULL: u8 = 16;
/// A number written without a fraction or an exponent.
pub(crate) const INTEGER: u8 = 32;
/// A number written with a fraction or an exponent (`1.0` is an integer to the schema
/// validator, so a quick check for `integer` leaves it to the full one).
pub(crate) const FRACTIONAL: u8 = 64;
/// Every type.
pub(crate) const ANY: u8 = 127;

/// Nesting at which a skipped value is recorded as near serde's limits: serde reads at most
/// 127 levels, so text this deep is parsed before it is trusted (a margin below that, as
/// depths here count from the value skipped, not from the document).
pub(crate) const DEEP: usize = 64;
/// Length from which a number is recorded as near serde's limits (a float overflows past
/// 309 digits).
const LONG_NUMBER: usize = 300;

/// A cursor over valid JSON text (a copy is a saved position to go back to).
#[derive(Clone)]
pub(crate) struct Scan<'t> {
    text: &'t [u8],
    at: usize,
    /// A string skipped since the last [`Scan::take_unicode_escape`] held a backslash
    /// followed by `u`.
    unicode_escape: bool,
    /// A value skipped since the last [`Scan::take_near_limits`] came near what serde refuses:
    /// nesting [`DEEP`] levels or more, or a number with an exponent or of [`LONG_NUMBER`]
    /// characters or more (which may overflow a float).
    near_limits: bool,
}

impl<'t> Scan<'t> {
    pub(crate) fn new(text: &'t [u8]) -> Self {
        Scan {
            text,
            at: 0,
            unicode_escape: false,
            near_limits: false,
        }
    }

    /// Whether a string skipped since the last call held a backslash followed by `u` (a
    /// `\u` escape, or `\\` then `u`), found while skipping at no extra search; clears the
    /// record.
    pub(crate) fn take_unicode_escape(&mut self) -> bool {
        std::mem::take(&mut self.unicode_escape)
    }

    /// Whether a value skipped since the last call came near serde's limits (nesting
    /// [`DEEP`] levels or more, counted from the value skipped; a number that may overflow a
    /// float), so that only parsing it tells whether serde reads it; clears the record.
    pub(crate) fn take_near_limits(&mut self) -> bool {
        std::mem::take(&mut self.near_limits)
    }

    fn skip_ws(&mut self) {
        while matches!(self.text.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// The text from this position (after whitespace) to that of `later`, a copy of this
    /// scan moved on.
    pub(crate) fn text_to(mut self, later: &Scan<'t>) -> Option<&'t [u8]> {
        self.skip_ws();
        self.text.get(self.at..later.at)
    }

    /// Consumes `byte` (after whitespace) if it comes next.
    pub(crate) fn eat(&mut self, byte: u8) -> bool {
        self.skip_ws();
        let hit = self.text.get(self.at) == Some(&byte);
        self.at += usize::from(hit);
        hit
    }

    /// A member's key (the text between its quotes) and its `:`; `None` for a key written
    /// with escapes.
    pub(crate) fn key(&mut self) -> Option<&'t [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        let len = memchr::memchr(b'"', self.text.get(start..)?)?;
        let key = self.text.get(start..start + len)?;
        if key.contains(&b'\\') {
            return None;
        }
        self.at = start + len + 1;
        self.eat(b':').then_some(key)
    }

    /// Skips one value: its type bit and its text.
    pub(crate) fn value(&mut self) -> Option<(u8, &'t [u8])> {
        self.skip_ws();
        let start = self.at;
        let kind = match *self.text.get(self.at)? {
            b'"' => {
                self.skip_string()?;
                STRING
            }
            b'{' => {
                self.skip_nested()?;
                OBJECT
            }
            b'[' => {
                self.skip_nested()?;
                ARRAY
            }
            // `true`, `null`, `false`: the text is valid JSON, so the word is whole.
            b't' => {
                self.at += 4;
                BOOLEAN
            }
            b'n' => {
                self.at += 4;
                NULL
            }
            b'f' => {
                self.at += 5;
                BOOLEAN
            }
            b'-' | b'0'..=b'9' => self.skip_number(),
            _ => return None,
        };
        Some((kind, self.text.get(start..self.at)?))
    }

    /// Skips a string, from its opening quote to past its closing one.
    fn skip_string(&mut self) -> Option<()> {
        self.at += 1;
        loop {
            // Runs of plain bytes are skipped in one (vectorised) search.
            self.at += memchr::memchr2(b'"', b'\\', self.text.get(self.at..)?)?;
            if self.text.get(self.at) == Some(&b'"') {
                self.at += 1;
                return Some(());
            }
            // A backslash followed by `u`: a `\u` escape, or an escaped backslash before a `u`
            // (recorded too, so the record matches a plain search of the text).
            let next = self.text.get(self.at + 1..).unwrap_or_default();
            self.unicode_escape |= matches!(next, [b'u', ..] | [b'\\', b'u', ..]);
            self.at += 2;
        }
    }

    /// Skips an object or array, from its opening bracket to past its closing one.
    fn skip_nested(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match *self.text.get(self.at)? {
                b'"' => {
                    self.skip_string()?;
                    continue;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.near_limits |= depth == DEEP;
                }
                b'-' | b'0'..=b'9' => {
                    self.skip_number();
                    continue;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        self.at += 1;
                        return Some(());
                    }
                }
                _ => {}
            }
            self.at += 1;
        }
    }

    /// Skips a number; whether it was written as an integer.
    fn skip_number(&mut self) -> u8 {
        let start = self.at;
        let mut kind = INTEGER;
        let mut exponent = false;
        while let Some(&b) = self.text.get(self.at) {
            match b {
                b'0'..=b'9' | b'-' | b'+' => {}
                b'.' => kind = FRACTIONAL,
                b'e' | b'E' => {
                    kind = FRACTIONAL;
                    exponent = true;
                }
                _ => break,
            }
            self.at += 1;
        }
        self.near_limits |= exponent || self.at - start >= LONG_NUMBER;
        kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Members of an object come out as key, type and exact value text, whitespace and
    /// nesting (with brackets and quotes inside strings) skipped.
    #[test]
    fn members_and_values_are_found_exactly() {
        let text = br#" { "s" : "a\"}\\" , "o":{"k":["]",{}]}, "n":-1.5e3,"i":42,"t":true,"f":false,"z":null,"e":"" } "#;
        let mut scan = Scan::new(text);
        assert!(scan.eat(b'{'));
        let mut seen = Vec::new();
        loop {
            let key = scan.key().expect("key");
            let (kind, value) = scan.value().expect("value");
            seen.push((key.to_vec(), kind, value.to_vec()));
            if !scan.eat(b',') {
                break;
            }
        }
        assert!(scan.eat(b'}'));
        let expected: Vec<(&[u8], u8, &[u8])> = vec![
            (b"s", STRING, br#""a\"}\\""#),
            (b"o", OBJECT, br#"{"k":["]",{}]}"#),
            (b"n", FRACTIONAL, b"-1.5e3"),
            (b"i", INTEGER, b"42"),
            (b"t", BOOLEAN, b"true"),
            (b"f", BOOLEAN, b"false"),
            (b"z", NULL, b"null"),
            (b"e", STRING, br#""""#),
        ];
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(k, t, v)| (k.to_vec(), t, v.to_vec()))
            .collect();
        assert_eq!(seen, expected);
    }

    /// A backslash followed by `u` in any skipped string (keys of nested objects included)
    /// is recorded, exactly where a plain search of the text finds one.
    #[test]
    fn unicode_escapes_are_recorded_as_a_plain_search_finds_them() {
        let texts: [&[u8]; 7] = [
            br#"{"a":"x\"y","b":[1,"z"]}"#,
            br#"{"a":"\u00e9"}"#,
            br#"{"a":["\\u"]}"#,
            br#"{"a":"\\","u":"\n"}"#,
            br#"{"\u0061":1}"#,
            br#"["\\\u0041"]"#,
            br#""\/u""#,
        ];
        for text in texts {
            let mut scan = Scan::new(text);
            assert_eq!(scan.value().map(|(_, v)| v), Some(text));
            let plain = text.windows(2).any(|w| w == b"\\u");
            assert_eq!(
                scan.take_unicode_escape(),
                plain,
                "{}",
                String::from_utf8_lossy(text)
            );
            assert!(!scan.take_unicode_escape(), "cleared once taken");
        }
    }

    /// A value nesting [`DEEP`] levels or more (inside objects or arrays), or holding a number
    /// with an exponent or of [`LONG_NUMBER`] characters, is recorded as near serde's limits.
    #[test]
    fn values_near_serde_limits_are_recorded() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let object =
            |depth: usize| format!(r#"{}"x"{}"#, r#"{"a":"#.repeat(depth), "}".repeat(depth));
        let long = "9".repeat(LONG_NUMBER);
        let shorter = "9".repeat(LONG_NUMBER - 1);
        for (text, near) in [
            (nested(DEEP - 1), false),
            (nested(DEEP), true),
            (nested(200), true),
            (object(DEEP - 1), false),
            (object(DEEP), true),
            (format!(r#"["{}",1]"#, "[".repeat(200)), false),
            (
                r#"{"a":[1.5,-2,true,false,null,"1e400"]}"#.to_owned(),
                false,
            ),
            (r#"{"a":[1e400]}"#.to_owned(), true),
            (r#"{"a":-2E+3}"#.to_owned(), true),
            ("1e400".to_owned(), true),
            (format!(r#"{{"a":{long}}}"#), true),
            (format!(r#"[{shorter}]"#), false),
            (long.clone(), true),
        ] {
            let mut scan = Scan::new(text.as_bytes());
            assert_eq!(scan.value().map(|(_, v)| v), Some(text.as_bytes()));
            assert_eq!(scan.take_near_limits(), near, "{text}");
            assert!(!scan.take_near_limits(), "cleared once taken");
        }
    }

    /// Escaped keys and cut-off text make it unsure, never panic.
    #[test]
    fn escaped_keys_and_cut_text_give_up() {
        let mut escaped = Scan::new(br#"{"\u0061":1}"#);
        assert!(escaped.eat(b'{'));
        assert_eq!(escaped.key(), None);
        for cut in [
            &br#"{"a":"#[..],
            br#"{"a":"xx"#,
            br#"{"a":[1,"#,
            br#"{"a"#,
            b"{",
        ] {
            let mut scan = Scan::new(cut);
            scan.eat(b'{');
            let value = scan.key().and_then(|_| scan.value());
            assert_eq!(value, None, "{}", String::from_utf8_lossy(cut));
        }
    }
}
