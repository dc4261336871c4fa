//! The inbound in-flight table: the peer's requests not answered yet, keyed by the peer's ids.
//!
//! A session that gets one or two requests at a time keeps them in a short list
//! searched in order: no hashing, and a few lines of code on the per-request path where a
//! hash table's insertion and removal fill about twenty (instruction cache). Past
//! [`FEW`] at once, new requests go to a hash table until it empties again. An id is in
//! one of the two, never both.
//!
//! Bounds: the caller refuses requests past `max_inflight_inbound` ([`InFlightTable::len`]);
//! the list never holds more than [`FEW`].

use std::collections::HashMap;

use super::idhash::IdBuildHasher;
use crate::jsonrpc::RequestId;

/// How many requests the short list holds before new ones go to the hash table.
const FEW: usize = 2;

/// The requests in flight, each with a `V`.
#[derive(Debug)]
pub(crate) struct InFlightTable<V> {
    /// Up to [`FEW`] entries, searched in order.
    few: Vec<(RequestId, V)>,
    /// The rest.
    many: HashMap<RequestId, V, IdBuildHasher>,
}

impl<V> Default for InFlightTable<V> {
    fn default() -> Self {
        InFlightTable {
            few: Vec::new(),
            many: HashMap::default(),
        }
    }
}

impl<V> InFlightTable<V> {
    /// How many requests are in flight.
    pub(crate) fn len(&self) -> usize {
        self.few.len() + self.many.len()
    }

    /// Forgets every request.
    pub(crate) fn clear(&mut self) {
        self.few.clear();
        self.many.clear();
    }

    /// Whether `id` is in flight. Inlined with its empty-table test: the session answers
    /// `ping` after this check, mostly with nothing in flight.
    #[inline]
    pub(crate) fn contains(&self, id: &RequestId) -> bool {
        self.len() != 0 && self.get(id).is_some()
    }

    /// The value filed with `id`.
    pub(crate) fn get(&self, id: &RequestId) -> Option<&V> {
        match self.few.iter().find(|(key, _)| key == id) {
            Some((_, value)) => Some(value),
            None if self.many.is_empty() => None,
            None => self.many.get(id),
        }
    }

    /// Files `id` with `value`; `false` (and nothing changed) when `id` is in flight already.
    pub(crate) fn insert_new(&mut self, id: RequestId, value: V) -> bool {
        if self.few.iter().any(|(key, _)| *key == id) {
            return false;
        }
        if self.many.is_empty() && self.few.len() < FEW {
            self.few.push((id, value));
            return true;
        }
        self.insert_many(id, value)
    }

    /// Files a request while the list is full or the hash table in use.
    #[inline(never)]
    fn insert_many(&mut self, id: RequestId, value: V) -> bool {
        match self.many.entry(id) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(value);
                true
            }
        }
    }

    /// Every id in flight, in no particular order.
    pub(crate) fn ids(&self) -> Vec<RequestId> {
        let few = self.few.iter().map(|(id, _)| id.clone());
        few.chain(self.many.keys().cloned()).collect()
    }

    /// Takes `id`'s entry out (with the id as filed).
    pub(crate) fn remove(&mut self, id: &RequestId) -> Option<(RequestId, V)> {
        if let Some(at) = self.few.iter().position(|(key, _)| key == id) {
            return Some(self.few.swap_remove(at));
        }
        if self.many.is_empty() {
            return None;
        }
        self.many.remove_entry(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> RequestId {
        RequestId::unsigned(n)
    }

    #[test]
    fn entries_past_the_list_go_to_the_hash_table_and_every_one_is_found_once() {
        let mut t = InFlightTable::default();
        for n in 0..10 {
            assert!(t.insert_new(id(n), n));
            assert!(!t.insert_new(id(n), 99), "a duplicate changes nothing");
        }
        assert_eq!((t.few.len(), t.many.len(), t.len()), (FEW, 10 - FEW, 10));
        for n in 0..10 {
            assert_eq!(t.get(&id(n)), Some(&n));
        }
        // Freed list places are not reused while the hash table holds entries: no id is in
        // both.
        assert_eq!(t.remove(&id(0)), Some((id(0), 0)));
        assert!(t.insert_new(id(0), 100));
        assert!(!t.insert_new(id(9), 0));
        assert_eq!(t.many.len(), 10 - FEW + 1);
        for n in (0..10).rev() {
            assert!(t.remove(&id(n)).is_some());
            assert!(t.remove(&id(n)).is_none());
            assert!(!t.contains(&id(n)));
        }
        assert_eq!(t.len(), 0);
        // Once the hash table is empty the list is used again.
        assert!(t.insert_new(RequestId::string("a"), 1));
        assert_eq!(t.few.len(), 1);
        assert!(t.contains(&RequestId::string("a")));
        assert!(!t.contains(&id(0)));
        t.clear();
        assert_eq!(t.len(), 0);
    }
}
