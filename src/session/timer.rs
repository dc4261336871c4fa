//! Deadlines of outbound requests, ordered so the earliest is found in O(log n).

use std::collections::BTreeSet;
use std::time::Instant;

use crate::jsonrpc::RequestId;

/// A set of `(deadline, request id)`; bounded by the pending table it mirrors.
#[derive(Debug, Default)]
pub(crate) struct Deadlines {
    set: BTreeSet<(Instant, RequestId)>,
}

impl Deadlines {
    pub(crate) fn insert(&mut self, at: Instant, id: RequestId) {
        self.set.insert((at, id));
    }

    pub(crate) fn remove(&mut self, at: Instant, id: &RequestId) {
        // The key is rebuilt from its parts; ids are cheap to clone (small or boxed str).
        self.set.remove(&(at, id.clone()));
    }

    /// The earliest deadline.
    pub(crate) fn first(&self) -> Option<Instant> {
        self.set.first().map(|(at, _)| *at)
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<RequestId> {
        if self.first()? <= now {
            self.set.pop_first().map(|(_, id)| id)
        } else {
            None
        }
    }

    pub(crate) fn clear(&mut self) {
        self.set.clear();
    }
}
