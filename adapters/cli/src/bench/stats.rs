//! What a run measured: per mix entry, the latency of successful calls and the count of each
//! kind of error, plus a bounded set of distinct error messages. One [`Recorder`] per session,
//! merged at the end.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::check::{CallError, ErrorKind};
use super::histogram::Histogram;

/// Distinct error messages kept; later new messages are only counted.
pub(crate) const MAX_ERROR_SAMPLES: usize = 16;

/// The tallies of one mix entry.
#[derive(Clone, Debug, Default)]
pub(crate) struct OpStats {
    /// Latency of the successful calls.
    pub(crate) latency: Histogram,
    /// Errors by [`ErrorKind::index`].
    pub(crate) errors: [u64; ErrorKind::ALL.len()],
}

impl OpStats {
    /// Calls that got an answer or failed (successes plus errors).
    pub(crate) fn completed(&self) -> u64 {
        self.latency.count() + self.error_count()
    }

    /// All errors of this entry.
    pub(crate) fn error_count(&self) -> u64 {
        self.errors.iter().sum()
    }

    fn merge(&mut self, other: &OpStats) {
        self.latency.merge(&other.latency);
        for (mine, theirs) in self.errors.iter_mut().zip(other.errors) {
            *mine += theirs;
        }
    }
}

/// Everything measured in one session (or, merged, in the whole run).
#[derive(Clone, Debug)]
pub(crate) struct Recorder {
    /// Per mix entry, in mix order.
    pub(crate) ops: Vec<OpStats>,
    /// Distinct error messages and how often each occurred.
    pub(crate) samples: BTreeMap<String, u64>,
    /// Errors whose message was not kept because the sample set was full.
    pub(crate) unsampled: u64,
    /// When the last measured call completed.
    pub(crate) last_completion: Option<Instant>,
}

impl Recorder {
    /// An empty recorder for a mix of `entries` entries.
    pub(crate) fn new(entries: usize) -> Self {
        Self {
            ops: vec![OpStats::default(); entries],
            samples: BTreeMap::new(),
            unsampled: 0,
            last_completion: None,
        }
    }

    /// A measured call of entry `op` that completed at `done` after `latency`.
    pub(crate) fn record(
        &mut self,
        op: usize,
        latency: Duration,
        done: Instant,
        outcome: Result<(), CallError>,
    ) {
        let stats = &mut self.ops[op];
        match outcome {
            Ok(()) => stats
                .latency
                .record(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX)),
            Err(error) => {
                stats.errors[error.kind.index()] += 1;
                self.sample(error.message, 1);
            }
        }
        self.last_completion = self.last_completion.max(Some(done));
    }

    /// Adds `count` occurrences of `message`, keeping at most [`MAX_ERROR_SAMPLES`] messages.
    fn sample(&mut self, message: String, count: u64) {
        if let Some(n) = self.samples.get_mut(&message) {
            *n += count;
        } else if self.samples.len() < MAX_ERROR_SAMPLES {
            self.samples.insert(message, count);
        } else {
            self.unsampled += count;
        }
    }

    /// Adds everything `other` recorded.
    pub(crate) fn merge(&mut self, other: Recorder) {
        for (mine, theirs) in self.ops.iter_mut().zip(&other.ops) {
            mine.merge(theirs);
        }
        for (message, count) in other.samples {
            self.sample(message, count);
        }
        self.unsampled += other.unsampled;
        self.last_completion = self.last_completion.max(other.last_completion);
    }

    /// All entries together.
    pub(crate) fn total(&self) -> OpStats {
        let mut total = OpStats::default();
        for op in &self.ops {
            total.merge(op);
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(kind: ErrorKind, message: &str) -> Result<(), CallError> {
        Err(CallError {
            kind,
            message: message.into(),
        })
    }

    #[test]
    fn counts_successes_and_errors_per_entry_and_in_total() {
        let now = Instant::now();
        let mut r = Recorder::new(2);
        r.record(0, Duration::from_micros(10), now, Ok(()));
        r.record(0, Duration::from_micros(30), now, Ok(()));
        r.record(1, Duration::from_micros(5), now, error(ErrorKind::Rpc, "a"));
        r.record(
            1,
            Duration::from_micros(5),
            now,
            error(ErrorKind::ToolError, "b"),
        );
        r.record(1, Duration::from_micros(5), now, error(ErrorKind::Rpc, "a"));
        assert_eq!((r.ops[0].completed(), r.ops[0].error_count()), (2, 0));
        assert_eq!((r.ops[1].completed(), r.ops[1].error_count()), (3, 3));
        let total = r.total();
        assert_eq!((total.completed(), total.error_count()), (5, 3));
        assert_eq!(total.errors[ErrorKind::Rpc.index()], 2);
        assert_eq!(total.latency.max(), 30_000);
        assert_eq!(r.samples.get("a"), Some(&2));
    }

    #[test]
    fn merging_adds_and_keeps_the_latest_completion() {
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_secs(1);
        let (mut a, mut b) = (Recorder::new(1), Recorder::new(1));
        a.record(0, Duration::from_micros(1), t1, Ok(()));
        b.record(
            0,
            Duration::from_micros(2),
            t0,
            error(ErrorKind::Timeout, "t"),
        );
        a.merge(b);
        assert_eq!((a.ops[0].completed(), a.ops[0].error_count()), (2, 1));
        assert_eq!(a.last_completion, Some(t1));
        assert_eq!(a.samples.get("t"), Some(&1));
    }

    #[test]
    fn error_samples_are_bounded_but_every_error_is_counted() {
        let now = Instant::now();
        let mut r = Recorder::new(1);
        for i in 0..(MAX_ERROR_SAMPLES + 10) {
            r.record(
                0,
                Duration::ZERO,
                now,
                error(ErrorKind::Rpc, &format!("m{i}")),
            );
        }
        assert_eq!(r.samples.len(), MAX_ERROR_SAMPLES);
        assert_eq!(r.unsampled, 10);
        assert_eq!(r.total().error_count(), (MAX_ERROR_SAMPLES + 10) as u64);
    }
}
