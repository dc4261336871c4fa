//! A bounded memory of finished request ids, so late messages about them are recognised.

use std::collections::{HashSet, VecDeque};

use crate::jsonrpc::RequestId;

/// Remembers at most `capacity` ids; the oldest is forgotten first.
#[derive(Debug)]
pub(crate) struct Tombstones {
    capacity: usize,
    order: VecDeque<RequestId>,
    set: HashSet<RequestId>,
}

impl Tombstones {
    pub(crate) fn new(capacity: usize) -> Self {
        Tombstones {
            capacity,
            order: VecDeque::new(),
            set: HashSet::new(),
        }
    }

    pub(crate) fn insert(&mut self, id: RequestId) {
        if self.capacity == 0 || self.set.contains(&id) {
            return;
        }
        if self.order.len() >= self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        self.set.insert(id.clone());
        self.order.push_back(id);
    }

    pub(crate) fn contains(&self, id: &RequestId) -> bool {
        self.set.contains(id)
    }

    pub(crate) fn remove(&mut self, id: &RequestId) -> bool {
        if self.set.remove(id) {
            self.order.retain(|x| x != id);
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgets_the_oldest_past_capacity() {
        let mut t = Tombstones::new(2);
        for n in 0..3 {
            t.insert(RequestId::number(n));
        }
        assert!(!t.contains(&RequestId::number(0)));
        assert!(t.contains(&RequestId::number(1)) && t.contains(&RequestId::number(2)));
        assert!(t.remove(&RequestId::number(1)));
        assert!(!t.contains(&RequestId::number(1)));
    }
}
