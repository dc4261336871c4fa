//! The table of our pending requests, keyed by exact id.
//!
//! A session allocates its own request ids; a client's are integers counting up from 0. While
//! they stay in sequence, the entries sit in a ring indexed by `id - base`: inserting appends,
//! the usual removal (responses mostly come in send order) pops the front, and neither hashes.
//! Ids that do not continue the ring (strings, a number out of sequence, a ring at its
//! [`RING_LIMIT`]) and entries the caller keeps out of it go to a hash map beside it. An id is
//! in one place at most; lookups try the ring, then the map, so the table answers exactly as
//! one map would.
//!
//! The caller decides, entry by entry, whether an entry may follow the ring's last one (the
//! session keeps the ring in deadline order, so its front is its earliest deadline).
//!
//! Bound: the ring holds at most [`RING_LIMIT`] slots, live or answered (an old request still
//! pending keeps the answered ones behind it until it leaves); the map holds the rest of the
//! entries, which the session bounds (`max_pending_outbound`).

use std::collections::VecDeque;

use super::idhash::IdMap;
use crate::jsonrpc::RequestId;

/// The most slots the ring keeps; past it new ids go to the map until the ring's front leaves.
pub(crate) const RING_LIMIT: usize = 4096;

/// Where an entry was kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// In the ring, in id order.
    Ring,
    /// In the map.
    Map,
}

/// Pending entries by exact id: a ring for ids in sequence, a map for the others.
#[derive(Debug)]
pub(crate) struct PendingTable<V> {
    /// The id of the ring's first slot.
    base: u64,
    /// Slot `k` holds the entry of id `base + k` (`None`: not in the ring). Never starts or
    /// ends with `None`.
    ring: VecDeque<Option<V>>,
    /// Live entries in the ring.
    in_ring: usize,
    /// Entries whose ids did not continue the ring, or that the caller kept out of it.
    others: IdMap<RequestId, V>,
}

impl<V> Default for PendingTable<V> {
    fn default() -> Self {
        PendingTable {
            base: 0,
            ring: VecDeque::new(),
            in_ring: 0,
            others: IdMap::default(),
        }
    }
}

/// The id as a ring index candidate: a non-negative integer that fits a `u64`.
fn numeric(id: &RequestId) -> Option<u64> {
    u64::try_from(id.as_number()?).ok()
}

impl<V> PendingTable<V> {
    /// Entries in the table.
    pub(crate) fn len(&self) -> usize {
        self.in_ring + self.others.len()
    }

    /// The ring slot of `id`, when the ring spans it.
    fn slot(&self, id: &RequestId) -> Option<usize> {
        let offset = numeric(id)?.checked_sub(self.base)?;
        let offset = usize::try_from(offset).ok()?;
        (offset < self.ring.len()).then_some(offset)
    }

    /// Adds the entry of `id`, which must not be in the table yet (a present id keeps its old
    /// entry and gets nothing). The entry goes to the ring when `id` continues it and
    /// `may_follow` accepts the ring's last entry (`None`: the ring is empty) as its
    /// predecessor; else to the map. Returns where it went.
    pub(crate) fn insert(
        &mut self,
        id: RequestId,
        value: V,
        may_follow: impl FnOnce(Option<&V>) -> bool,
    ) -> Option<Place> {
        if self.get(&id).is_some() {
            return None;
        }
        if let Some(n) = numeric(&id) {
            let next = self.base.checked_add(self.ring.len() as u64);
            let continues = self.ring.is_empty() || next == Some(n);
            if continues && self.ring.len() < RING_LIMIT && may_follow(self.ring_back()) {
                if self.ring.is_empty() {
                    self.base = n;
                }
                self.ring.push_back(Some(value));
                self.in_ring += 1;
                return Some(Place::Ring);
            }
        }
        self.insert_other(id, value)
    }

    /// The ring's last entry (live: the ring never ends with an empty slot).
    fn ring_back(&self) -> Option<&V> {
        self.ring.back()?.as_ref()
    }

    /// The ring's first entry and its id: the oldest id the ring holds.
    pub(crate) fn ring_front(&self) -> Option<(RequestId, &V)> {
        let value = self.ring.front()?.as_ref()?;
        Some((RequestId::unsigned(self.base), value))
    }

    /// The entry of `id`.
    pub(crate) fn get(&self, id: &RequestId) -> Option<&V> {
        if let Some(k) = self.slot(id) {
            if let Some(value) = self.ring.get(k).and_then(Option::as_ref) {
                return Some(value);
            }
        }
        if self.others.is_empty() {
            return None;
        }
        self.get_other(id)
    }

    // The map holds the unusual ids (strings, out of order, past the ring's limit): its
    // lookups stay out of the ring's path (instruction cache).

    /// The entry of `id` in the map.
    #[cold]
    #[inline(never)]
    fn get_other(&self, id: &RequestId) -> Option<&V> {
        self.others.get(id)
    }

    /// Removes the entry of `id` from the map.
    #[cold]
    #[inline(never)]
    fn remove_other(&mut self, id: &RequestId) -> Option<(V, Place)> {
        self.others.remove(id).map(|value| (value, Place::Map))
    }

    /// Adds the entry of `id` to the map.
    #[cold]
    #[inline(never)]
    fn insert_other(&mut self, id: RequestId, value: V) -> Option<Place> {
        self.others.insert(id, value);
        Some(Place::Map)
    }

    /// Removes the entry of `id`; returns it and where it was.
    pub(crate) fn remove(&mut self, id: &RequestId) -> Option<(V, Place)> {
        if let Some(k) = self.slot(id) {
            if let Some(value) = self.ring.get_mut(k).and_then(Option::take) {
                self.in_ring -= 1;
                self.trim();
                return Some((value, Place::Ring));
            }
        }
        if self.others.is_empty() {
            return None;
        }
        self.remove_other(id)
    }

    /// Drops empty slots at both ends, so the ring starts and ends with a live entry.
    fn trim(&mut self) {
        while let Some(None) = self.ring.front() {
            self.ring.pop_front();
            // Past `u64::MAX` only when the ring emptied: its base means nothing then.
            self.base = self.base.wrapping_add(1);
        }
        while let Some(None) = self.ring.back() {
            self.ring.pop_back();
        }
    }

    /// Removes every entry; returns them with their ids (ring first, in id order, then the map
    /// in no particular order).
    pub(crate) fn drain(&mut self) -> Vec<(RequestId, V)> {
        let base = self.base;
        let mut all: Vec<(RequestId, V)> = self
            .ring
            .drain(..)
            .enumerate()
            .filter_map(|(k, v)| Some((RequestId::unsigned(base + k as u64), v?)))
            .collect();
        all.extend(self.others.drain());
        self.in_ring = 0;
        all
    }

    /// Slots in the ring, live or not (for the bound's tests).
    #[cfg(test)]
    fn ring_len(&self) -> usize {
        self.ring.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn any_place<V>(_: Option<&V>) -> bool {
        true
    }

    #[test]
    fn ids_in_sequence_stay_in_the_ring_and_leave_from_the_front() {
        let mut t = PendingTable::default();
        for n in 0..10u64 {
            assert_eq!(
                t.insert(RequestId::unsigned(n), n, any_place),
                Some(Place::Ring)
            );
        }
        assert_eq!(t.insert(RequestId::unsigned(3), 99, any_place), None);
        assert_eq!((t.len(), t.ring_len(), t.others.len()), (10, 10, 0));
        assert_eq!(t.remove(&RequestId::unsigned(0)), Some((0, Place::Ring)));
        assert_eq!(t.remove(&RequestId::unsigned(5)), Some((5, Place::Ring)));
        assert_eq!(t.remove(&RequestId::unsigned(5)), None);
        assert_eq!((t.len(), t.ring_len()), (8, 9));
        assert_eq!(t.ring_front(), Some((RequestId::unsigned(1), &1)));
        // Exact ids: the string "3" and the negative numbers are other ids.
        assert_eq!(t.get(&RequestId::from("3")), None);
        assert_eq!(t.get(&RequestId::number(-1)), None);
        assert_eq!(t.get(&RequestId::unsigned(3)), Some(&3));
        for n in 1..10u64 {
            t.remove(&RequestId::unsigned(n));
        }
        assert_eq!((t.len(), t.ring_len()), (0, 0));
        // An empty ring starts again at any number.
        t.insert(RequestId::unsigned(u64::MAX), 1, any_place);
        assert_eq!(t.get(&RequestId::unsigned(u64::MAX)), Some(&1));
        assert_eq!(
            t.insert(RequestId::unsigned(0), 2, any_place),
            Some(Place::Map)
        );
        assert_eq!(t.drain().len(), 2);
        assert_eq!(t.len(), 0);
        assert_eq!(t.remove(&RequestId::unsigned(u64::MAX)), None);
    }

    #[test]
    fn an_entry_kept_out_of_the_ring_is_found_in_the_map_even_inside_the_ring_span() {
        let mut t = PendingTable::default();
        for n in 0..3u64 {
            t.insert(RequestId::unsigned(n), n, any_place);
        }
        // The caller refuses the ring (say, another timeout): the map holds it.
        let refuse = |_: Option<&u64>| false;
        assert_eq!(
            t.insert(RequestId::unsigned(3), 3, refuse),
            Some(Place::Map)
        );
        // An entry taken out of the middle and put back refused: its slot stays empty.
        let (one, _) = t.remove(&RequestId::unsigned(1)).unwrap();
        assert_eq!(
            t.insert(RequestId::unsigned(1), one, refuse),
            Some(Place::Map)
        );
        assert_eq!(t.get(&RequestId::unsigned(1)), Some(&1));
        assert_eq!(t.remove(&RequestId::unsigned(1)), Some((1, Place::Map)));
        assert_eq!(t.remove(&RequestId::unsigned(3)), Some((3, Place::Map)));
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn an_old_request_holds_the_ring_only_up_to_its_limit() {
        let mut t = PendingTable::default();
        t.insert(RequestId::unsigned(0), (), any_place);
        for n in 1..(3 * RING_LIMIT as u64) {
            t.insert(RequestId::unsigned(n), (), any_place);
            t.remove(&RequestId::unsigned(n));
        }
        assert!(t.ring_len() <= RING_LIMIT);
        assert_eq!(t.len(), 1);
        assert_eq!(t.remove(&RequestId::unsigned(0)), Some(((), Place::Ring)));
        assert_eq!((t.len(), t.ring_len(), t.others.len()), (0, 0, 0));
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(RequestId, bool),
        Remove(RequestId),
        Get(RequestId),
    }

    fn ids() -> impl Strategy<Value = RequestId> {
        prop_oneof![
            (0u64..40).prop_map(RequestId::unsigned),
            (-3i64..3).prop_map(RequestId::number),
            (0u64..4).prop_map(|n| RequestId::string(n.to_string())),
            Just(RequestId::unsigned(u64::MAX)),
        ]
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        prop::collection::vec(
            prop_oneof![
                3 => (ids(), any::<bool>()).prop_map(|(id, ring)| Op::Insert(id, ring)),
                2 => ids().prop_map(Op::Remove),
                1 => ids().prop_map(Op::Get),
            ],
            0..200,
        )
    }

    proptest! {
        /// The table answers every operation as a plain map does, wherever the caller lets its
        /// entries go; the ring's front is its smallest id.
        #[test]
        fn the_table_is_a_map(ops in ops()) {
            let mut table = PendingTable::default();
            let mut model: HashMap<RequestId, usize> = HashMap::new();
            for (step, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Insert(id, ring) => {
                        let placed = table.insert(id.clone(), step, |_| ring);
                        prop_assert_eq!(placed.is_some(), !model.contains_key(&id));
                        model.entry(id).or_insert(step);
                    }
                    Op::Remove(id) => {
                        let removed = table.remove(&id).map(|(v, _)| v);
                        prop_assert_eq!(removed, model.remove(&id));
                    }
                    Op::Get(id) => prop_assert_eq!(table.get(&id), model.get(&id)),
                }
                prop_assert_eq!(table.len(), model.len());
                if let Some((front, _)) = table.ring_front() {
                    let ring_ids = table.ring.iter().enumerate().filter(|(_, v)| v.is_some());
                    let smallest = ring_ids.map(|(k, _)| table.base + k as u64).min();
                    prop_assert_eq!(front.as_number(), smallest.map(i128::from));
                }
            }
            let mut drained = table.drain();
            drained.sort();
            let mut expected: Vec<_> = model.into_iter().collect();
            expected.sort();
            prop_assert_eq!(drained, expected);
            prop_assert_eq!(table.len(), 0);
        }
    }
}
