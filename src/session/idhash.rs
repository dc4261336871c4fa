//! A fast, non-cryptographic hasher for the engine's id-keyed tables.
//!
//! SipHash's keying defends a table against keys an attacker picks to collide. Most of our
//! tables are keyed by ids we choose: outbound request ids (sequential), the app client's
//! call keys, the HTTP client's exchanges, the HTTP endpoint's session ids (random bytes from
//! the caller), stream keys and connection numbers (counters); a peer only looks those up, and
//! a lookup cannot lengthen a bucket. The one table keyed by peer-chosen ids, the session's
//! inbound in-flight table, is bounded by `max_inflight_inbound`, which bounds the length of
//! any collision chain.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash-style multiply-rotate hasher (the rustc hasher's scheme).
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl IdHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            for (slot, byte) in w.iter_mut().zip(rest) {
                *slot = *byte;
            }
            self.add(u64::from_le_bytes(w) ^ (rest.len() as u64) << 56);
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn write_i128(&mut self, n: i128) {
        self.add(n as u64);
        self.add((n >> 64) as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// `BuildHasher` for the id tables.
pub(crate) type IdBuildHasher = BuildHasherDefault<IdHasher>;

/// A `HashMap` keyed by ids, hashed with [`IdHasher`].
pub(crate) type IdMap<K, V> = HashMap<K, V, IdBuildHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_ids_spread_and_equal_ids_meet() {
        let mut map: IdMap<String, u32> = IdMap::default();
        for i in 0..1000u32 {
            map.insert(format!("{:032x}", u128::from(i) * 0x9e37_79b9_7f4a_7c15), i);
        }
        assert_eq!(map.len(), 1000);
        let key = format!("{:032x}", 7u128 * 0x9e37_79b9_7f4a_7c15);
        assert_eq!(map.get(key.as_str()), Some(&7));
        let mut a = IdHasher::default();
        let mut b = IdHasher::default();
        a.write(b"0123456789abcdef0");
        b.write(b"0123456789abcdef1");
        assert_ne!(a.finish(), b.finish(), "the tail past the last word counts");
    }
}
