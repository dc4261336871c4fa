//! The 2026-07-28 listen streams an endpoint holds, each with the key of the peer that
//! opened it, and the choice of the stream to end when a new one arrives at the cap: the
//! oldest stream of the peer that holds the most (the newcomer counted with one more), so one
//! peer opening stream after stream only ever ends its own, and a peer with few streams is
//! always served.

use std::collections::HashMap;

/// Open listen streams (their exchange ids) in opening order, with their peer keys (`None`:
/// a peer the server could not name; all such count as one peer).
#[derive(Debug, Default)]
pub(crate) struct ListenSlots {
    open: Vec<(u64, Option<String>)>,
}

impl ListenSlots {
    pub(crate) fn len(&self) -> usize {
        self.open.len()
    }

    pub(crate) fn contains(&self, xid: u64) -> bool {
        self.open.iter().any(|(x, _)| *x == xid)
    }

    /// The exchange ids, oldest first.
    pub(crate) fn xids(&self) -> impl Iterator<Item = u64> + '_ {
        self.open.iter().map(|(xid, _)| *xid)
    }

    /// Keeps the streams whose exchange `live` says still exists.
    pub(crate) fn retain(&mut self, mut live: impl FnMut(u64) -> bool) {
        self.open.retain(|(xid, _)| live(*xid));
    }

    /// Exchange `xid` opened a listen stream for peer `key`.
    pub(crate) fn push(&mut self, xid: u64, key: Option<String>) {
        self.open.push((xid, key));
    }

    /// Forgets stream `xid`.
    pub(crate) fn remove(&mut self, xid: u64) {
        self.open.retain(|(x, _)| *x != xid);
    }

    /// The stream to end for a newcomer of peer `key`: the oldest of the peer holding the
    /// most streams, the newcomer's own counted with one more (so a tie with it ends one of
    /// its own), ties going to the peer whose oldest stream is older. `None` when empty.
    pub(crate) fn victim(&self, key: Option<&str>) -> Option<u64> {
        let mut held: HashMap<Option<&str>, usize> = HashMap::new();
        for (_, k) in &self.open {
            *held.entry(k.as_deref()).or_default() += 1;
        }
        let weight = |k: Option<&str>| held.get(&k).copied().unwrap_or(0) + usize::from(k == key);
        let mut best: Option<(u64, usize)> = None;
        for (xid, k) in &self.open {
            let w = weight(k.as_deref());
            if best.is_none_or(|(_, most)| w > most) {
                best = Some((*xid, w));
            }
        }
        best.map(|(xid, _)| xid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(keys: &[&str]) -> ListenSlots {
        let mut slots = ListenSlots::default();
        for (xid, key) in (1..).zip(keys) {
            slots.push(xid, Some((*key).to_owned()));
        }
        slots
    }

    #[test]
    fn the_peer_holding_most_loses_its_oldest_stream() {
        let full = slots(&["a", "a", "b", "a"]);
        assert_eq!(
            full.victim(Some("b")),
            Some(1),
            "a newcomer takes from the greedy peer"
        );
        assert_eq!(full.victim(None), Some(1), "an unnamed newcomer too");
        assert_eq!(
            full.victim(Some("a")),
            Some(1),
            "the greedy peer takes from itself"
        );
        // A tie with the newcomer's own streams ends one of its own.
        let even = slots(&["a", "b", "b", "a"]);
        assert_eq!(even.victim(Some("b")), Some(2));
        assert_eq!(even.victim(Some("a")), Some(1));
        // A tie between others goes to the older stream.
        assert_eq!(even.victim(Some("c")), Some(1));
        assert_eq!(ListenSlots::default().victim(Some("a")), None);
    }

    #[test]
    fn removed_and_dead_streams_are_forgotten() {
        let mut s = slots(&["a", "b", "c"]);
        s.remove(1);
        s.retain(|xid| xid != 3);
        assert_eq!((s.len(), s.contains(2), s.contains(1)), (1, true, false));
        assert_eq!(s.xids().collect::<Vec<_>>(), [2]);
    }
}
