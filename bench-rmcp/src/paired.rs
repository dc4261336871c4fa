//! Interleaved ratios: two contenders timed in alternating short slices, one ratio per pair.
//!
//! Criterion times each case for seconds on end, one case after the other. On a shared VM
//! the machine's speed drifts by ±25 % within a minute, so a ratio of two criterion estimates
//! taken a minute apart carries that drift. Here the two contenders alternate in slices of a
//! few tens of milliseconds (A B, then B A, so neither always goes first), each pair gives one
//! ratio of rates, and the report is the distribution of those ratios: a drift slower than a
//! slice hits both sides of a pair alike and cancels out of its ratio.

use std::time::Duration;

/// What one slice of one contender did: round trips and the time (wall or CPU) they took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slice {
    /// Round trips completed in the slice.
    pub round_trips: u64,
    /// The time they took, by the clock of the comparison.
    pub time: Duration,
}

impl Slice {
    /// Round trips per second of the slice's clock.
    pub fn rate(&self) -> f64 {
        self.round_trips as f64 / self.time.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

/// The ratios (A's rate over B's) of every pair, sorted.
#[derive(Clone, Debug, PartialEq)]
pub struct PairedRatios {
    sorted: Vec<f64>,
}

impl PairedRatios {
    /// Collects ratios (any order; NaN is dropped).
    pub fn new(mut ratios: Vec<f64>) -> PairedRatios {
        ratios.retain(|r| !r.is_nan());
        ratios.sort_by(f64::total_cmp);
        PairedRatios { sorted: ratios }
    }

    /// How many pairs gave a ratio.
    pub fn pairs(&self) -> usize {
        self.sorted.len()
    }

    /// The `q` quantile (0.0 ..= 1.0), interpolated between neighbours; NaN when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        let Some(last) = self.sorted.len().checked_sub(1) else {
            return f64::NAN;
        };
        let at = q.clamp(0.0, 1.0) * last as f64;
        let (low, high) = (at.floor() as usize, at.ceil() as usize);
        let weight = at - low as f64;
        self.sorted[low] * (1.0 - weight) + self.sorted[high] * weight
    }

    /// The median ratio.
    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }

    /// One line: median, quartiles, extremes and the number of pairs.
    pub fn summary(&self) -> String {
        format!(
            "median {:.2} (quartiles {:.2}-{:.2}, min {:.2}, max {:.2}, {} pairs)",
            self.median(),
            self.quantile(0.25),
            self.quantile(0.75),
            self.quantile(0.0),
            self.quantile(1.0),
            self.pairs()
        )
    }
}

/// Runs `pairs` pairs of slices, alternating which contender goes first, and returns the
/// ratios of A's rate over B's.
pub fn interleave(
    pairs: usize,
    mut a: impl FnMut() -> Slice,
    mut b: impl FnMut() -> Slice,
) -> PairedRatios {
    let ratios = (0..pairs)
        .map(|i| {
            let (first, second) = if i % 2 == 0 {
                let first = a();
                (first, b())
            } else {
                let second = b();
                (a(), second)
            };
            first.rate() / second.rate()
        })
        .collect();
    PairedRatios::new(ratios)
}

/// How many batches fill about `budget` of `clock`: doubles the count until one run of
/// that many batches takes at least half the budget, then scales to the budget.
pub fn batches_for(budget: Duration, clock: impl Fn() -> Duration, mut batch: impl FnMut()) -> u64 {
    let mut count = 1u64;
    loop {
        let started = clock();
        for _ in 0..count {
            batch();
        }
        let took = clock().saturating_sub(started);
        if took * 2 >= budget || count >= 1 << 30 {
            let per_batch = took.as_secs_f64() / count as f64;
            return ((budget.as_secs_f64() / per_batch.max(1e-12)).round() as u64).max(1);
        }
        count *= 2;
    }
}

/// Times `batches` runs of `batch` (each doing `per_batch` round trips) on `clock`.
pub fn timed(
    batches: u64,
    per_batch: u64,
    clock: impl Fn() -> Duration,
    mut batch: impl FnMut(),
) -> Slice {
    let started = clock();
    for _ in 0..batches {
        batch();
    }
    Slice {
        round_trips: batches * per_batch,
        time: clock().saturating_sub(started),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn slice(round_trips: u64, millis: u64) -> Slice {
        Slice {
            round_trips,
            time: Duration::from_millis(millis),
        }
    }

    #[test]
    fn quantiles_interpolate_between_sorted_ratios() {
        let r = PairedRatios::new(vec![4.0, 1.0, f64::NAN, 3.0, 2.0]);
        assert_eq!(r.pairs(), 4);
        assert_eq!(r.quantile(0.0), 1.0);
        assert_eq!(r.quantile(1.0), 4.0);
        assert_eq!(r.median(), 2.5);
        assert_eq!(r.quantile(0.25), 1.75);
        assert!(PairedRatios::new(vec![]).median().is_nan());
    }

    #[test]
    fn a_drift_that_hits_both_sides_of_a_pair_cancels_out() {
        // The machine slows down 3x halfway; A is always twice as fast as B.
        let tick = Cell::new(0u64);
        let speed = |t: u64| if t < 10 { 1 } else { 3 };
        let run = |work: u64| {
            let t = tick.get();
            tick.set(t + 1);
            slice(100, work * speed(t))
        };
        let ratios = interleave(10, || run(10), || run(20));
        assert_eq!(ratios.pairs(), 10);
        assert_eq!((ratios.quantile(0.0), ratios.quantile(1.0)), (2.0, 2.0));
    }

    #[test]
    fn alternates_which_contender_goes_first() {
        let order = std::cell::RefCell::new(String::new());
        interleave(
            3,
            || {
                order.borrow_mut().push('a');
                slice(1, 1)
            },
            || {
                order.borrow_mut().push('b');
                slice(1, 1)
            },
        );
        assert_eq!(order.into_inner(), "abbaab");
    }

    #[test]
    fn batches_fill_the_budget_on_a_fake_clock() {
        // Each batch advances the fake clock by 3 ms: a 300 ms budget is 100 batches.
        let now = Cell::new(Duration::ZERO);
        let clock = || now.get();
        let batch = || now.set(now.get() + Duration::from_millis(3));
        assert_eq!(batches_for(Duration::from_millis(300), clock, batch), 100);
        let s = timed(7, 64, clock, batch);
        assert_eq!(s, slice(7 * 64, 21));
        assert!((s.rate() - 448.0 / 0.021).abs() < 1e-6);
    }
}
