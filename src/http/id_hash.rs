//! A fast, unkeyed hasher for the endpoint's tables whose keys the server itself chose:
//! session ids (16 bytes of OS randomness, in hex), stream keys and connection numbers
//! (counters). SipHash's keying defends a table against keys an attacker picks; these keys
//! are not picked by the client (a client only looks keys up, and a lookup cannot lengthen a
//! bucket), so the several lookups per request need not pay for it.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by server-chosen ids.
pub(crate) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Multiply-rotate mixing of each 8-byte word (the FxHash construction).
#[derive(Default)]
pub(crate) struct IdHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

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
