//! HMAC-SHA-256 (RFC 2104, the `hmac` and `sha2` crates) and a constant-time comparison
//! (`subtle`): what integrity-protects the `requestState` a server hands out in
//! input-required results.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

type HmacSha256 = Hmac<Sha256>;

/// A MAC over `message` under `key`, ready to finalize or verify.
fn mac(key: &[u8], message: &[u8]) -> HmacSha256 {
    // HMAC takes a key of any length (longer ones are hashed), so this never fails.
    let mut mac = match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts keys of every length"),
    };
    mac.update(message);
    mac
}

/// HMAC-SHA-256 of `message` under `key` (RFC 2104, checked with the RFC 4231 vectors).
#[must_use]
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    mac(key, message).finalize().into_bytes().into()
}

/// Whether `tag` is the HMAC-SHA-256 of `message` under `key`, compared in constant time.
#[must_use]
pub fn hmac_sha256_verify(key: &[u8], message: &[u8], tag: &[u8]) -> bool {
    mac(key, message).verify_slice(tag).is_ok()
}

/// Whether `a` and `b` are equal, in time that depends only on their lengths (a forger must
/// not learn how many leading bytes of a tag were right).
#[must_use]
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}
