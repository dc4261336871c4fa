//! Byte encodings the core needs: SHA-256 (PKCE S256, the HMAC of `requestState`), base64url
//! without padding and standard base64, both ways (PKCE, HTTP Basic, `requestState`, the
//! `=?base64?` header sentinel), and percent-encoding for URLs and form bodies.
//!
//! SHA-256 is implemented here (FIPS 180-4) so the core takes no crypto dependency for one hash
//! of 43 bytes; tests/auth_parsers.rs checks it against the FIPS example vectors. Base64 is the
//! `base64` crate's, decoding strictly (canonical text only; no caller needs a lenient decoder);
//! percent-encoding is the `percent-encoding` crate's, form bodies the `form_urlencoded` crate's
//! (the URL Standard's `application/x-www-form-urlencoded` serializer, as RFC 6749 asks).

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// SHA-256 digest of `data`.
#[must_use]
pub fn sha256(data: &[u8]) -> [u8; 32] {
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let bit_len = (data.len() as u64).wrapping_mul(8);
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&bit_len.to_be_bytes());
    for block in message.chunks_exact(64) {
        compress(&mut h, block);
    }
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_exact_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

fn compress(h: &mut [u32; 8], block: &[u8]) {
    let mut w = [0u32; 64];
    for (i, word) in block.chunks_exact(4).enumerate() {
        w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
    }
    for i in 16..64 {
        let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
        let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16]
            .wrapping_add(s0)
            .wrapping_add(w[i - 7])
            .wrapping_add(s1);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = *h;
    for i in 0..64 {
        let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = hh
            .wrapping_add(s1)
            .wrapping_add(ch)
            .wrapping_add(K[i])
            .wrapping_add(w[i]);
        let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = s0.wrapping_add(maj);
        hh = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    for (state, add) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
        *state = state.wrapping_add(add);
    }
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
