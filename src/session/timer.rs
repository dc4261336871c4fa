//! Deadlines of outbound requests, ordered so the earliest is found cheaply.
//!
//! Almost every request of a session uses the same timeout and is sent at a time no earlier
//! than the one before it, so requests of one timeout expire in the order they were sent: a
//! FIFO per timeout value ("lane") keeps them sorted with O(1) insertion, and removing the
//! oldest (responses mostly arrive in order) is O(1) too. A removal from the middle marks the
//! entry dead (found by binary search on the deadline); dead entries leave with the front or in
//! a compaction once they outnumber the live ones. What does not fit a lane (a timeout past the
//! lane limit, a clock that went backwards, a deadline moved by progress) goes to an ordered
//! set. The requests the pending table keeps in its ring (`pending.rs`), already in deadline
//! order, have no entry here. Bounds: live entries mirror the pending table's map; dead ones
//! never exceed the live ones plus [`COMPACT_SLACK`].

use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use crate::jsonrpc::RequestId;

/// At most this many distinct timeouts get a FIFO lane; more go to the ordered set.
const MAX_LANES: usize = 4;

/// Dead entries tolerated beyond the live count before a lane is compacted.
const COMPACT_SLACK: usize = 32;

/// Requests with one timeout value, in deadline order (`None`: removed, not yet dropped).
#[derive(Debug)]
struct Lane {
    timeout: Duration,
    entries: VecDeque<(Instant, Option<RequestId>)>,
    dead: usize,
}

impl Lane {
    fn front(&self) -> Option<Instant> {
        self.entries.front().map(|(at, _)| *at)
    }

    /// Removes `(at, id)`; false when it is not in this lane.
    fn remove(&mut self, at: Instant, id: &RequestId) -> bool {
        if let Some((front, Some(first))) = self.entries.front() {
            // The usual case (responses in send order): the oldest entry leaves at once.
            if *front == at && first == id {
                self.pop_front();
                return true;
            }
        }
        let found = self.find(at, id);
        let Some(entry) = found.and_then(|index| self.entries.get_mut(index)) else {
            return false;
        };
        entry.1 = None;
        self.dead += 1;
        self.drop_dead_front();
        if self.dead > self.entries.len() - self.dead + COMPACT_SLACK {
            self.entries.retain(|(_, id)| id.is_some());
            self.dead = 0;
        }
        true
    }

    /// The index of the live entry `(at, id)`, by binary search on the deadline.
    fn find(&self, at: Instant, id: &RequestId) -> Option<usize> {
        let start = self.entries.partition_point(|(t, _)| *t < at);
        self.entries
            .range(start..)
            .take_while(|(t, _)| *t == at)
            .position(|(_, entry)| entry.as_ref() == Some(id))
            .map(|offset| start + offset)
    }

    fn drop_dead_front(&mut self) {
        while let Some((_, None)) = self.entries.front() {
            self.entries.pop_front();
            self.dead -= 1;
        }
    }

    fn pop_front(&mut self) -> Option<RequestId> {
        let (_, id) = self.entries.pop_front()?;
        self.drop_dead_front();
        id
    }
}

/// The deadlines of the pending table it mirrors.
#[derive(Debug, Default)]
pub(crate) struct Deadlines {
    lanes: Vec<Lane>,
    others: BTreeSet<(Instant, RequestId)>,
}

/// Where the earliest deadline lives.
enum Earliest {
    Lane(usize),
    Others,
}

impl Deadlines {
    /// Adds the deadline `at` of request `id`, sent with `timeout`.
    // Only requests outside the pending table's ring have an entry here (unusual ids, mixed
    // timeouts, extended deadlines): out of the request path (instruction cache).
    #[cold]
    #[inline(never)]
    pub(crate) fn insert(&mut self, at: Instant, timeout: Duration, id: RequestId) {
        let lane = match self.lanes.iter().position(|l| l.timeout == timeout) {
            Some(i) => Some(i),
            None if self.lanes.len() < MAX_LANES => {
                self.lanes.push(Lane {
                    timeout,
                    entries: VecDeque::new(),
                    dead: 0,
                });
                Some(self.lanes.len() - 1)
            }
            None => None,
        };
        match lane.and_then(|i| self.lanes.get_mut(i)) {
            Some(lane) if lane.entries.back().is_none_or(|(last, _)| *last <= at) => {
                lane.entries.push_back((at, Some(id)));
            }
            _ => {
                self.others.insert((at, id));
            }
        }
    }

    /// Removes the deadline `at` of request `id` (no-op when absent).
    #[cold]
    #[inline(never)]
    pub(crate) fn remove(&mut self, at: Instant, id: &RequestId) {
        if self.lanes.iter_mut().any(|lane| lane.remove(at, id)) {
            return;
        }
        // The key is rebuilt from its parts; ids are cheap to clone (small or boxed str).
        self.others.remove(&(at, id.clone()));
    }

    /// The earliest deadline.
    pub(crate) fn first(&self) -> Option<Instant> {
        let lanes = self.lanes.iter().filter_map(Lane::front).min();
        let others = self.others.first().map(|(at, _)| *at);
        match (lanes, others) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn earliest(&self) -> Option<(Instant, Earliest)> {
        let mut best = self.others.first().map(|(at, _)| (*at, Earliest::Others));
        for (i, lane) in self.lanes.iter().enumerate() {
            if let Some(at) = lane.front() {
                if best.as_ref().is_none_or(|(b, _)| at < *b) {
                    best = Some((at, Earliest::Lane(i)));
                }
            }
        }
        best
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<RequestId> {
        let (at, which) = self.earliest()?;
        if at > now {
            return None;
        }
        match which {
            Earliest::Lane(i) => self.lanes.get_mut(i)?.pop_front(),
            Earliest::Others => self.others.pop_first().map(|(_, id)| id),
        }
    }

    pub(crate) fn clear(&mut self) {
        self.lanes.clear();
        self.others.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> RequestId {
        RequestId::unsigned(n)
    }

    /// Pops everything due at `now`, in order.
    fn drain(d: &mut Deadlines, now: Instant) -> Vec<RequestId> {
        std::iter::from_fn(|| d.pop_due(now)).collect()
    }

    #[test]
    fn one_timeout_expires_in_send_order_and_skips_removed_entries() {
        let t0 = Instant::now();
        let timeout = Duration::from_secs(10);
        let mut d = Deadlines::default();
        for n in 0..5 {
            d.insert(t0 + Duration::from_secs(n) + timeout, timeout, id(n));
        }
        d.remove(t0 + Duration::from_secs(2) + timeout, &id(2));
        d.remove(t0 + timeout, &id(0));
        assert_eq!(d.first(), Some(t0 + Duration::from_secs(1) + timeout));
        assert_eq!(d.pop_due(t0), None);
        let all = drain(&mut d, t0 + Duration::from_secs(60));
        assert_eq!(all, vec![id(1), id(3), id(4)]);
        assert_eq!(d.first(), None);
    }

    #[test]
    fn mixed_timeouts_backwards_clocks_and_many_lanes_stay_ordered() {
        let t0 = Instant::now() + Duration::from_secs(100);
        let mut d = Deadlines::default();
        let mut expected = Vec::new();
        // Six distinct timeouts (more than MAX_LANES), sent at times that go back and forth.
        for n in 0..60u64 {
            let sent = t0 + Duration::from_millis((n * 37) % 50) - Duration::from_millis(20);
            let timeout = Duration::from_millis(100 * (1 + n % 6));
            let at = sent + timeout;
            d.insert(at, timeout, id(n));
            expected.push((at, n));
        }
        // Remove every third one, including from the middle of lanes.
        for n in (0..60u64).step_by(3) {
            let at = expected.iter().find(|(_, m)| *m == n).unwrap().0;
            d.remove(at, &id(n));
        }
        expected.retain(|(_, n)| n % 3 != 0);
        expected.sort();
        assert_eq!(d.first(), expected.first().map(|(at, _)| *at));
        let mut got = Vec::new();
        let mut now = t0;
        while got.len() < expected.len() {
            now += Duration::from_millis(10);
            for popped in drain(&mut d, now) {
                let at = expected.iter().find(|(_, n)| id(*n) == popped).unwrap().0;
                assert!(at <= now);
                got.push((at, popped));
            }
        }
        let deadlines: Vec<Instant> = got.iter().map(|(at, _)| *at).collect();
        assert!(deadlines.windows(2).all(|w| w[0] <= w[1]), "out of order");
        assert_eq!(got.len(), expected.len());
        assert_eq!(d.first(), None);
    }

    #[test]
    fn removing_the_front_takes_the_dead_entries_behind_it() {
        let t0 = Instant::now();
        let timeout = Duration::from_secs(5);
        let mut d = Deadlines::default();
        for n in 0..4 {
            d.insert(t0 + Duration::from_secs(n) + timeout, timeout, id(n));
        }
        d.remove(t0 + Duration::from_secs(1) + timeout, &id(1));
        d.remove(t0 + Duration::from_secs(2) + timeout, &id(2));
        assert_eq!((d.lanes[0].entries.len(), d.lanes[0].dead), (4, 2));
        d.remove(t0 + timeout, &id(0));
        assert_eq!((d.lanes[0].entries.len(), d.lanes[0].dead), (1, 0));
        assert_eq!(d.first(), Some(t0 + Duration::from_secs(3) + timeout));
        // A front entry of the same deadline but another id is not taken.
        d.remove(t0 + Duration::from_secs(3) + timeout, &id(9));
        assert_eq!(drain(&mut d, t0 + Duration::from_secs(60)), vec![id(3)]);
    }

    #[test]
    fn removals_from_the_middle_are_compacted() {
        let t0 = Instant::now();
        let timeout = Duration::from_secs(1);
        let mut d = Deadlines::default();
        for n in 0..1000 {
            d.insert(t0 + timeout, timeout, id(n));
        }
        // The oldest stays pending while all the others complete.
        for n in 1..1000 {
            d.remove(t0 + timeout, &id(n));
        }
        let lane = &d.lanes[0];
        assert!(
            lane.entries.len() <= 1 + COMPACT_SLACK + 1,
            "{}",
            lane.entries.len()
        );
        assert_eq!(drain(&mut d, t0 + timeout), vec![id(0)]);
    }
}
