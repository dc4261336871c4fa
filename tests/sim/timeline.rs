//! A time-ordered queue for the simulation's things in flight (network arrivals, the worker's
//! planned actions): what is due comes out first, and things due at the same instant come out
//! in the order they were scheduled, so a seed replays exactly.

use std::collections::BTreeMap;
use std::time::Instant;

/// Items by due time; a counter breaks ties in scheduling order.
pub struct Timeline<T> {
    items: BTreeMap<(Instant, u64), T>,
    scheduled: u64,
}

impl<T> Default for Timeline<T> {
    fn default() -> Self {
        Timeline {
            items: BTreeMap::new(),
            scheduled: 0,
        }
    }
}

impl<T> Timeline<T> {
    /// Adds `item`, due at `at`.
    pub fn schedule(&mut self, at: Instant, item: T) {
        self.scheduled += 1;
        self.items.insert((at, self.scheduled), item);
    }

    /// The earliest item due at or before `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<T> {
        let entry = self.items.first_entry()?;
        if entry.key().0 > now {
            return None;
        }
        Some(entry.remove())
    }

    /// When the earliest item is due.
    pub fn next_at(&self) -> Option<Instant> {
        self.items.keys().next().map(|(at, _)| *at)
    }

    /// Keeps only the items `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(&mut T) -> bool) {
        self.items.retain(|_, item| keep(item));
    }

    /// Drops every item.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// How many items are queued.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}
