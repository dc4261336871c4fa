//! Opaque pagination cursors over name-ordered registries.
//!
//! A cursor names the last key of the page it ends (keyset pagination), hex-encoded behind a
//! version prefix so clients cannot mistake it for anything meaningful. Keyset cursors stay valid
//! when items are added or removed between pages: the next page starts after that key, so
//! nothing is returned twice. A cursor that does not decode is an invalid-params error (-32602).

use std::fmt;

const PREFIX: &str = "c1.";
/// Longest key a cursor may carry (keeps a hostile cursor from costing memory).
const MAX_KEY_LEN: usize = 4096;

/// A cursor that this server did not issue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct InvalidCursor;

impl fmt::Display for InvalidCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid pagination cursor")
    }
}

impl std::error::Error for InvalidCursor {}

/// Encodes the key a page ended at as an opaque cursor.
pub(crate) fn encode_cursor(last_key: &str) -> String {
    let mut s = String::with_capacity(PREFIX.len() + last_key.len() * 2);
    s.push_str(PREFIX);
    for b in last_key.bytes() {
        s.push(hex_digit(b >> 4));
        s.push(hex_digit(b & 15));
    }
    s
}

/// The lowercase hex digit of a nibble (`n` below 16).
fn hex_digit(n: u8) -> char {
    char::from_digit(u32::from(n), 16).unwrap_or('0')
}

/// Decodes a cursor back to the key its page ended at. Total: any text either decodes or is
/// refused, whatever its characters (the hex is read byte by byte, never sliced).
pub(crate) fn decode_cursor(cursor: &str) -> Result<String, InvalidCursor> {
    let hex = cursor.strip_prefix(PREFIX).ok_or(InvalidCursor)?.as_bytes();
    if hex.len() % 2 != 0 || hex.len() / 2 > MAX_KEY_LEN {
        return Err(InvalidCursor);
    }
    let bytes = hex
        .chunks_exact(2)
        .map(|pair| match *pair {
            [hi, lo] => Ok(nibble(hi)? << 4 | nibble(lo)?),
            _ => Err(InvalidCursor),
        })
        .collect::<Result<Vec<u8>, _>>()?;
    String::from_utf8(bytes).map_err(|_| InvalidCursor)
}

/// The value of one hex digit byte (either case); anything else is not a cursor.
fn nibble(b: u8) -> Result<u8, InvalidCursor> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
        .ok_or(InvalidCursor)
}

/// One page of `items` (ordered by key) after `cursor`, and the cursor of the next page.
pub(crate) fn paginate<'a, T: 'a>(
    items: impl IntoIterator<Item = (&'a str, T)>,
    cursor: Option<&str>,
    page_size: usize,
) -> Result<(Vec<T>, Option<String>), InvalidCursor> {
    let after = cursor.map(decode_cursor).transpose()?;
    let page_size = page_size.max(1);
    let mut page = Vec::with_capacity(page_size.min(64));
    let mut last_key = None;
    let mut more = false;
    for (key, item) in items {
        if after.as_deref().is_some_and(|a| key <= a) {
            continue;
        }
        if page.len() == page_size {
            more = true;
            break;
        }
        last_key = Some(key);
        page.push(item);
    }
    let next = if more {
        last_key.map(encode_cursor)
    } else {
        None
    };
    Ok((page, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_every_item_once() {
        let keys = ["a", "b", "c", "d", "e"];
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let (page, next) =
                paginate(keys.iter().map(|k| (*k, *k)), cursor.as_deref(), 2).unwrap();
            seen.extend(page);
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen, keys);
    }

    #[test]
    fn exact_multiple_has_no_trailing_empty_page() {
        let keys = ["a", "b"];
        let (page, next) = paginate(keys.iter().map(|k| (*k, *k)), None, 2).unwrap();
        assert_eq!(page.len(), 2);
        assert_eq!(next, None);
    }

    #[test]
    fn invalid_cursors_are_refused() {
        for bad in ["", "xyz", "c1.0", "c1.zz", "c1.ff"] {
            assert_eq!(decode_cursor(bad), Err(InvalidCursor), "{bad}");
        }
        assert_eq!(decode_cursor(&encode_cursor("tool/é")).unwrap(), "tool/é");
    }

    #[test]
    fn a_multibyte_character_in_the_hex_is_refused() {
        // "aéa" is four bytes: a pair boundary falls inside the "é".
        assert_eq!(decode_cursor("c1.aéa"), Err(InvalidCursor));
        for bad in [
            "c1.é",
            "c1.0é",
            "c1.é0",
            "c1.+f",
            "c1.-1",
            "c1. f",
            "c1.\u{1F600}",
        ] {
            assert_eq!(decode_cursor(bad), Err(InvalidCursor), "{bad:?}");
        }
    }

    #[test]
    fn paginate_refuses_a_multibyte_cursor() {
        // What `tools/list` runs on the cursor it was sent.
        let keys = ["a", "b"];
        let got = paginate(keys.iter().map(|k| (*k, *k)), Some("c1.aéa"), 1);
        assert_eq!(got, Err(InvalidCursor));
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn decoding_any_text_never_panics(s in any::<String>()) {
                let _ = decode_cursor(&s);
                let _ = decode_cursor(&format!("{PREFIX}{s}"));
            }

            #[test]
            fn decode_inverts_encode(key in any::<String>()) {
                let cursor = encode_cursor(&key);
                if key.len() <= MAX_KEY_LEN {
                    prop_assert_eq!(decode_cursor(&cursor), Ok(key));
                } else {
                    prop_assert_eq!(decode_cursor(&cursor), Err(InvalidCursor));
                }
            }

            #[test]
            fn any_text_after_the_prefix_decodes_only_if_it_is_our_hex(s in "[0-9a-fé+ ]{0,12}") {
                let cursor = format!("{PREFIX}{s}");
                if let Ok(key) = decode_cursor(&cursor) {
                    prop_assert_eq!(encode_cursor(&key), cursor);
                }
            }
        }
    }

    #[test]
    fn a_removed_key_does_not_break_the_next_page() {
        let cursor = encode_cursor("b");
        let keys = ["a", "c", "d"];
        let (page, _) = paginate(keys.iter().map(|k| (*k, *k)), Some(&cursor), 10).unwrap();
        assert_eq!(page, vec!["c", "d"]);
    }
}
