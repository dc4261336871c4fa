//! HMAC-SHA-256 (RFC 2104) over the core's own SHA-256, and a constant-time tag comparison:
//! what integrity-protects the `requestState` a server hands out in input-required results.

use crate::auth::encoding::sha256;

/// SHA-256's block size in bytes (the HMAC key is padded or hashed to it).
const BLOCK: usize = 64;

/// HMAC-SHA-256 of `message` under `key` (RFC 2104, checked with the RFC 4231 vectors).
#[must_use]
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&sha256(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Vec::with_capacity(BLOCK + message.len());
    inner.extend(block.iter().map(|b| b ^ 0x36));
    inner.extend_from_slice(message);
    let inner_hash = sha256(&inner);
    let mut outer = Vec::with_capacity(BLOCK + 32);
    outer.extend(block.iter().map(|b| b ^ 0x5c));
    outer.extend_from_slice(&inner_hash);
    sha256(&outer)
}

/// Whether `a` and `b` are equal, in time that depends only on their lengths (a forger must
/// not learn how many leading bytes of a tag were right).
#[must_use]
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
