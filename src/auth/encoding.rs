//! Byte encodings the core needs: SHA-256 (PKCE S256, the HMAC of `requestState`), base64url
//! without padding and standard base64, both ways (PKCE, HTTP Basic, `requestState`, the
//! `=?base64?` header sentinel), and percent-encoding for URLs and form bodies.
//!
//! SHA-256 is the `sha2` crate's (tests/auth_parsers.rs checks it against the FIPS example
//! vectors). Base64 is the `base64` crate's, decoding strictly (canonical text only; no caller
//! needs a lenient decoder).

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use sha2::{Digest, Sha256};

/// SHA-256 digest of `data` (the `sha2` crate).
#[must_use]
pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// Base64url without padding (RFC 4648 §5), as PKCE and OAuth use it.
#[must_use]
pub fn base64url(data: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(data)
}

/// Standard base64 with padding (RFC 4648 §4), as HTTP Basic uses it.
#[must_use]
pub fn base64_standard(data: &[u8]) -> String {
    STANDARD.encode(data)
}

/// Base64url without padding (RFC 4648 §5) decoded strictly: `None` on a character outside
/// the alphabet (padding included), a length of 1 mod 4, or a last symbol whose unused low
/// bits are set. Only the canonical spelling of some bytes decodes, so text that decodes is
/// exactly `base64url` of what it decodes to (`requestState` relies on it: one state has one
/// spelling).
#[must_use]
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text).ok()
}

/// Standard base64 with `=` padding (RFC 4648 §4) decoded strictly: `None` on a character
/// outside the alphabet, missing or misplaced padding, or a last symbol whose unused low bits
/// are set (the `=?base64?` header sentinel: a client's encoder always writes the canonical
/// form, and a sentinel that does not decode stays as it is and mismatches the body).
#[must_use]
pub fn base64_standard_decode(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text).ok()
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Percent-encodes every byte outside the RFC 3986 unreserved set; valid both in a URL query
/// and in an `application/x-www-form-urlencoded` body.
#[must_use]
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        if is_unreserved(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes a form/query component: `+` is a space, `%XX` a byte; malformed escapes are kept
/// as they are. Invalid UTF-8 is replaced rather than refused.
#[must_use]
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'+' => out.push(b' '),
            b'%' => match (
                bytes.get(i + 1).and_then(|&b| hex(b)),
                bytes.get(i + 2).and_then(|&b| hex(b)),
            ) {
                (Some(high), Some(low)) => {
                    out.push(high << 4 | low);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Encodes `pairs` as an `application/x-www-form-urlencoded` string.
#[must_use]
pub fn form_encode(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (name, value) in pairs {
        if !out.is_empty() {
            out.push('&');
        }
        out.push_str(&percent_encode(name));
        out.push('=');
        out.push_str(&percent_encode(value));
    }
    out
}
