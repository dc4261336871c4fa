//! A fixed-size log-bucket latency histogram (HDR-style): values in nanoseconds, recorded in
//! O(1) with a relative error of at most 1/128 (about 0.8 %), merged by adding counts.
//!
//! Values below 128 ns get one bucket each; above, every power of two is split into 128 equal
//! sub-buckets. A percentile is reported as the highest value its bucket can hold (never an
//! under-estimate), clamped to the exact maximum seen.

/// log2 of the sub-buckets per power of two: 2^7 = 128, so a bucket spans ≤ 1/128 of its value.
const PRECISION_BITS: u32 = 7;
/// Sub-buckets per power of two.
const SUB_BUCKETS: usize = 1 << PRECISION_BITS;
/// Buckets needed to cover all of `u64`: the exact range plus 128 per power of two above it.
const BUCKETS: usize = (64 - PRECISION_BITS as usize + 1) * SUB_BUCKETS;

/// Latency counts by bucket, with the exact count, sum, minimum and maximum.
///
/// The bucket array grows only up to the highest bucket used (at most [`BUCKETS`] entries,
/// 58 KiB), so a histogram of sub-second latencies stays under 20 KiB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Histogram {
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            counts: Vec::new(),
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

/// The bucket that holds `value`.
fn bucket_of(value: u64) -> usize {
    if value < SUB_BUCKETS as u64 {
        return value as usize;
    }
    let exponent = 63 - value.leading_zeros(); // ≥ PRECISION_BITS here
    let shift = exponent - PRECISION_BITS;
    let mantissa = (value >> shift) as usize - SUB_BUCKETS; // in 0..SUB_BUCKETS
    (shift as usize + 1) * SUB_BUCKETS + mantissa
}

/// The highest value that falls into `bucket`.
fn bucket_high(bucket: usize) -> u64 {
    if bucket < SUB_BUCKETS {
        return bucket as u64;
    }
    let shift = (bucket / SUB_BUCKETS - 1) as u32;
    let mantissa = (bucket % SUB_BUCKETS + SUB_BUCKETS) as u64;
    let low = mantissa << shift;
    low + ((1u64 << shift) - 1)
}

impl Histogram {
    /// Counts one value.
    pub(crate) fn record(&mut self, value_ns: u64) {
        let bucket = bucket_of(value_ns);
        debug_assert!(bucket < BUCKETS);
        if bucket >= self.counts.len() {
            self.counts.resize(bucket + 1, 0);
        }
        self.counts[bucket] += 1;
        self.count += 1;
        self.sum += u128::from(value_ns);
        self.min = self.min.min(value_ns);
        self.max = self.max.max(value_ns);
    }

    /// Adds every count of `other`.
    pub(crate) fn merge(&mut self, other: &Histogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// How many values were recorded.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// The largest value recorded (0 when empty).
    pub(crate) fn max(&self) -> u64 {
        self.max
    }

    /// The smallest value recorded (0 when empty).
    pub(crate) fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    /// The exact mean (0 when empty).
    pub(crate) fn mean(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            (self.sum / u128::from(self.count)) as u64
        }
    }

    /// The value at or below which `quantile` (0.0..=1.0) of the values fall: the upper edge of
    /// the bucket holding the value of rank ⌈quantile·count⌉, clamped to the maximum. 0 when
    /// empty.
    pub(crate) fn value_at(&self, quantile: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let quantile = quantile.clamp(0.0, 1.0);
        let rank = ((quantile * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (bucket, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return bucket_high(bucket).min(self.max).max(self.min);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_cover_u64() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        assert_eq!(bucket_high(BUCKETS - 1), u64::MAX);
        for bucket in 1..BUCKETS {
            let low = bucket_high(bucket - 1) + 1;
            assert_eq!(bucket_of(low), bucket, "low edge of {bucket}");
            assert_eq!(
                bucket_of(bucket_high(bucket)),
                bucket,
                "high edge of {bucket}"
            );
        }
    }

    #[test]
    fn a_bucket_spans_at_most_one_128th_of_its_values() {
        for value in [128u64, 1_000, 123_456, 9_999_999_999, u64::MAX / 3] {
            let high = bucket_high(bucket_of(value));
            assert!(high >= value);
            assert!(
                (high - value) as f64 <= value as f64 / 128.0,
                "{value} -> {high}"
            );
        }
    }

    #[test]
    fn percentiles_of_a_uniform_range() {
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.record(v * 1_000);
        }
        let near = |got: u64, want: u64| {
            let err = (got as f64 - want as f64).abs() / want as f64;
            assert!(err <= 1.0 / 128.0, "got {got}, want about {want}");
            assert!(got >= want, "never under-estimates: {got} < {want}");
        };
        near(h.value_at(0.5), 5_000_000);
        near(h.value_at(0.9), 9_000_000);
        near(h.value_at(0.99), 9_900_000);
        assert_eq!(h.value_at(1.0), 10_000_000);
        assert_eq!(h.max(), 10_000_000);
        assert_eq!(h.min(), 1_000);
        assert_eq!(h.mean(), 5_000_500);
        assert_eq!(h.count(), 10_000);
    }

    #[test]
    fn small_values_are_exact_and_outliers_show_in_the_tail() {
        let mut h = Histogram::default();
        for _ in 0..99 {
            h.record(50);
        }
        h.record(7_000_000);
        assert_eq!(h.value_at(0.5), 50);
        assert_eq!(h.value_at(0.99), 50);
        assert_eq!(h.value_at(0.999), 7_000_000);
        assert_eq!(h.max(), 7_000_000);
    }

    #[test]
    fn merging_equals_recording_everything_in_one() {
        let (mut a, mut b, mut all) = (
            Histogram::default(),
            Histogram::default(),
            Histogram::default(),
        );
        for v in 0..5_000u64 {
            let value = v * v + 3;
            if v % 3 == 0 { &mut a } else { &mut b }.record(value);
            all.record(value);
        }
        a.merge(&b);
        assert_eq!(a, all);
    }

    #[test]
    fn an_empty_histogram_reports_zeros() {
        let h = Histogram::default();
        assert_eq!(
            (h.value_at(0.5), h.max(), h.min(), h.mean(), h.count()),
            (0, 0, 0, 0, 0)
        );
    }
}
