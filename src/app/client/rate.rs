//! A token bucket over the `now` the driver passes in: `count` requests per `window`, at most
//! `burst` at once. Refills by whole tokens, keeping the fraction of an interval already
//! elapsed, so the rate holds however often it is asked.

use std::time::{Duration, Instant};

/// Requests per window with a burst: the rate limit of a [`SamplingPolicy`] or
/// [`ElicitationPolicy`].
///
/// [`SamplingPolicy`]: super::SamplingPolicy
/// [`ElicitationPolicy`]: super::ElicitationPolicy
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests allowed per `window` once the burst is spent.
    pub count: u32,
    /// The window `count` is measured over.
    pub window: Duration,
    /// Requests allowed at once (the bucket's size); at least 1.
    pub burst: u32,
}

impl RateLimit {
    /// `count` requests per minute, burst `burst`.
    pub fn per_minute(count: u32, burst: u32) -> Self {
        RateLimit {
            count,
            window: Duration::from_secs(60),
            burst,
        }
    }

    /// The time one token takes to come back (`None` when `count` is 0: never).
    fn interval(&self) -> Option<Duration> {
        (self.count > 0).then(|| self.window / self.count)
    }
}

impl Default for RateLimit {
    /// 60 per minute, burst 20.
    fn default() -> Self {
        RateLimit::per_minute(60, 20)
    }
}

/// The state of one rate limit.
#[derive(Debug)]
pub(crate) struct TokenBucket {
    limit: RateLimit,
    tokens: u32,
    /// When the last whole token was added (`None` until first asked: the bucket starts full).
    since: Option<Instant>,
}

impl TokenBucket {
    pub(crate) fn new(limit: RateLimit) -> Self {
        TokenBucket {
            limit,
            tokens: limit.burst.max(1),
            since: None,
        }
    }

    /// Takes one token at `now`: whether the request may go ahead.
    pub(crate) fn try_take(&mut self, now: Instant) -> bool {
        self.refill(now);
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }

    fn refill(&mut self, now: Instant) {
        let burst = self.limit.burst.max(1);
        let since = *self.since.get_or_insert(now);
        let Some(interval) = self.limit.interval().filter(|i| !i.is_zero()) else {
            // count 0: no refill; a zero interval (a huge count): always full.
            if self.limit.count > 0 {
                self.tokens = burst;
            }
            return;
        };
        if self.tokens >= burst {
            self.since = Some(now);
            return;
        }
        let elapsed = now.saturating_duration_since(since);
        let earned = elapsed.as_nanos() / interval.as_nanos();
        if earned == 0 {
            return;
        }
        let room = u128::from(burst - self.tokens);
        if earned >= room {
            self.tokens = burst;
            self.since = Some(now);
        } else {
            // `earned < room <= u32::MAX`, so both conversions are exact.
            self.tokens += earned as u32;
            self.since = Some(since + interval * earned as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_one_per_interval() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(RateLimit::per_minute(60, 3));
        assert!((0..3).all(|_| bucket.try_take(t0)));
        assert!(!bucket.try_take(t0));
        assert!(!bucket.try_take(t0 + Duration::from_millis(999)));
        assert!(bucket.try_take(t0 + Duration::from_millis(1000)));
        assert!(!bucket.try_take(t0 + Duration::from_millis(1500)));
        // The half interval already elapsed counts towards the next token.
        assert!(bucket.try_take(t0 + Duration::from_millis(2000)));
        // A long pause refills only up to the burst.
        let later = t0 + Duration::from_secs(3600);
        assert!((0..3).all(|_| bucket.try_take(later)));
        assert!(!bucket.try_take(later));
    }

    #[test]
    fn zero_count_never_refills() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(RateLimit::per_minute(0, 1));
        assert!(bucket.try_take(t0));
        assert!(!bucket.try_take(t0 + Duration::from_secs(86_400)));
    }
}
