//! Peer text quoted in an error message: a header value (`WWW-Authenticate`, `Location`) a
//! server sent, bounded in length and with its control characters escaped, so a hostile value
//! can neither flood a log nor move its cursor.

/// The most characters of a peer's value an error message quotes.
pub const MAX_QUOTED_CHARS: usize = 200;

/// `text` in double quotes: at most [`MAX_QUOTED_CHARS`] characters, then `...` and its full
/// length when it was longer; quotes, backslashes and control characters escaped as in Rust
/// string literals (`\"`, `\\`, `\n`, `\u{1b}`).
#[must_use]
pub fn quote_peer_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_QUOTED_CHARS) + 2);
    out.push('"');
    let mut chars = text.chars();
    for c in chars.by_ref().take(MAX_QUOTED_CHARS) {
        out.extend(c.escape_debug());
    }
    out.push('"');
    if chars.next().is_some() {
        out.push_str(&format!("... ({} bytes)", text.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_quotes_are_escaped() {
        assert_eq!(
            quote_peer_text("a\"b\\c\r\nd\u{1b}[2J"),
            r#""a\"b\\c\r\nd\u{1b}[2J""#
        );
    }

    #[test]
    fn a_long_value_is_cut_and_its_length_named() {
        let long = "é".repeat(1000);
        let quoted = quote_peer_text(&long);
        assert!(quoted.starts_with(&format!("\"{}\"", "é".repeat(MAX_QUOTED_CHARS))));
        assert!(quoted.ends_with("... (2000 bytes)"), "{quoted}");
        assert_eq!(quote_peer_text("short"), "\"short\"");
    }
}
