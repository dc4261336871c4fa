//! Byte encodings the core needs: SHA-256 (PKCE S256, the HMAC of `requestState`), base64url
//! without padding and standard base64, both ways (PKCE, HTTP Basic, `requestState`, the
//! `=?base64?` header sentinel), and percent-encoding for URLs and form bodies.
//!
//! SHA-256 is the `sha2` crate's (tests/auth/parsers.rs checks it against the FIPS example
//! vectors). Base64 is the `base64` crate's, decoding strictly (canonical text only; no caller
//! needs a lenient decoder); percent-encoding is the `percent-encoding` crate's, form bodies the
//! `form_urlencoded` crate's (the URL Standard's `application/x-www-form-urlencoded`
//! serializer, as RFC 6749 asks).

mod hmac;

pub use hmac::{constant_time_eq, hmac_sha256, hmac_sha256_verify};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
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

/// Every byte but the RFC 3986 unreserved ones (`A-Z a-z 0-9 - . _ ~`) is escaped.
pub(crate) const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes every byte outside the RFC 3986 unreserved set; valid both in a URL query
/// and in an `application/x-www-form-urlencoded` body.
#[must_use]
pub fn percent_encode(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}

/// Decodes a form/query component: `+` is a space, `%XX` a byte; malformed escapes are kept
/// as they are (as the URL Standard's percent-decode does). Invalid UTF-8 is replaced rather
/// than refused.
#[must_use]
pub fn percent_decode(text: &str) -> String {
    let spaced = text.replace('+', " ");
    percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
}

/// Encodes `pairs` as an `application/x-www-form-urlencoded` string.
#[must_use]
pub fn form_encode(pairs: &[(&str, &str)]) -> String {
    let mut out = form_urlencoded::Serializer::new(String::new());
    out.extend_pairs(pairs);
    out.finish()
}
