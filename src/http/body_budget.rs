//! The bytes of POST bodies whose requests are still being answered, summed over every
//! session and exchange of one endpoint, and bounded (`EndpointConfig::max_body_bytes_in_flight`).
//!
//! A handler holds its request (arguments, id) until it answers, and each session may have
//! many requests running, so without a total the memory held for requests grows with
//! sessions × requests × body size. A body is charged when its requests start and released
//! when the last of them is answered or cancelled, or when its session or exchange ends
//! (the charge is dropped with the stream that waits for the answers).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The endpoint's total, and its bound.
#[derive(Debug)]
pub(crate) struct BodyBudget {
    held: Arc<AtomicUsize>,
    max: usize,
}

impl BodyBudget {
    pub(crate) fn new(max: usize) -> Self {
        BodyBudget {
            held: Arc::default(),
            max,
        }
    }

    /// Whether a body of `len` bytes may start its requests now. With nothing held, any
    /// body within `max_body` does, so a bound below `max_body` never refuses everything.
    pub(crate) fn admits(&self, len: usize) -> bool {
        let held = self.held.load(Ordering::Relaxed);
        held == 0 || held.saturating_add(len) <= self.max
    }

    /// Charges `len` bytes until the returned charge is dropped.
    pub(crate) fn charge(&self, len: usize) -> BodyCharge {
        self.held.fetch_add(len, Ordering::Relaxed);
        BodyCharge {
            bytes: len,
            held: Arc::clone(&self.held),
        }
    }

    /// The bytes charged now.
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }
}

/// One body's share of the total, given back when dropped.
#[derive(Debug)]
pub(crate) struct BodyCharge {
    bytes: usize,
    held: Arc<AtomicUsize>,
}

impl Drop for BodyCharge {
    fn drop(&mut self) {
        self.held.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_charge_holds_its_bytes_until_dropped() {
        let budget = BodyBudget::new(100);
        assert!(budget.admits(1_000), "nothing held: any body starts");
        let first = budget.charge(60);
        assert_eq!(budget.held(), 60);
        assert!(budget.admits(40));
        assert!(!budget.admits(41));
        let second = budget.charge(40);
        assert_eq!(budget.held(), 100);
        drop(first);
        assert_eq!(budget.held(), 40);
        assert!(budget.admits(60));
        drop(second);
        assert_eq!(budget.held(), 0);
    }
}
