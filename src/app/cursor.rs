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
pub struct InvalidCursor;

impl fmt::Display for InvalidCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid pagination cursor")
    }
}

impl std::error::Error for InvalidCursor {}

/// Encodes the key a page ended at as an opaque cursor.
pub fn encode_cursor(last_key: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(PREFIX.len() + last_key.len() * 2);
    s.push_str(PREFIX);
    for b in last_key.bytes() {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// Decodes a cursor back to the key its page ended at.
pub fn decode_cursor(cursor: &str) -> Result<String, InvalidCursor> {
    let hex = cursor.strip_prefix(PREFIX).ok_or(InvalidCursor)?;
    if hex.len() % 2 != 0 || hex.len() / 2 > MAX_KEY_LEN {
        return Err(InvalidCursor);
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| InvalidCursor))
        .collect::<Result<Vec<u8>, _>>()?;
    String::from_utf8(bytes).map_err(|_| InvalidCursor)
}

/// One page of `items` (ordered by key) after `cursor`, and the cursor of the next page.
pub fn paginate<'a, T: 'a>(
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
    fn a_removed_key_does_not_break_the_next_page() {
        let cursor = encode_cursor("b");
        let keys = ["a", "c", "d"];
        let (page, _) = paginate(keys.iter().map(|k| (*k, *k)), Some(&cursor), 10).unwrap();
        assert_eq!(page, vec!["c", "d"]);
    }
}
