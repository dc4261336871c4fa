//! The simulator's only source of randomness: a small seeded generator (SplitMix64), so a
//! seed names one whole run and replays it exactly.

use std::time::Duration;

/// A seeded pseudo-random generator (SplitMix64: tiny, fast, good enough for scheduling).
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`; every seed (0 included) gives a distinct, well-mixed stream.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A duration in `0..=max_ms` milliseconds.
    pub fn millis(&mut self, max_ms: u64) -> Duration {
        Duration::from_millis(self.below(max_ms + 1))
    }

    /// 16 random bytes (HTTP session ids).
    pub fn bytes16(&mut self) -> [u8; 16] {
        let mut out = [0; 16];
        out[..8].copy_from_slice(&self.next_u64().to_le_bytes());
        out[8..].copy_from_slice(&self.next_u64().to_le_bytes());
        out
    }
}
