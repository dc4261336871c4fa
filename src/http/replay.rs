//! The per-session replay buffer: the SSE events a session sent, oldest first, within a byte
//! budget. Resumption (`Last-Event-ID`) replays the events of one stream after a cursor; a
//! cursor older than what the buffer still holds is refused, never answered with a gap.

use std::collections::VecDeque;

use bytes::Bytes;

use super::event_id::EventId;

/// Events kept for resumption, evicted oldest first past `budget` bytes.
#[derive(Debug)]
pub(crate) struct ReplayBuffer {
    events: VecDeque<(EventId, Bytes)>,
    bytes: usize,
    budget: usize,
    /// The highest `seq` evicted so far (0 = nothing evicted; seqs start at 1).
    evicted_upto: u64,
}

/// Why a resumption cannot be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplayError {
    /// Events after the cursor were evicted (the replay budget was exceeded).
    Evicted,
}

impl ReplayBuffer {
    /// An empty buffer holding at most `budget` bytes of event data.
    pub(crate) fn new(budget: usize) -> Self {
        ReplayBuffer {
            events: VecDeque::new(),
            bytes: 0,
            budget,
            evicted_upto: 0,
        }
    }

    /// Records one written event (`data` is the encoded SSE event). An event larger than the
    /// whole budget is not kept, and counts as evicted.
    pub(crate) fn push(&mut self, id: EventId, data: Bytes) {
        self.bytes += data.len();
        self.events.push_back((id, data));
        while self.bytes > self.budget {
            let Some((old, data)) = self.events.pop_front() else {
                break;
            };
            self.bytes -= data.len();
            self.evicted_upto = self.evicted_upto.max(old.seq);
        }
    }

    /// The events of `cursor.stream` after `cursor.seq`, in order, or an error when an event
    /// after the cursor may have been evicted.
    pub(crate) fn replay_after(&self, cursor: EventId) -> Result<Vec<Bytes>, ReplayError> {
        if self.evicted_upto > cursor.seq {
            return Err(ReplayError::Evicted);
        }
        Ok(self
            .events
            .iter()
            .filter(|(id, _)| id.stream == cursor.stream && id.seq > cursor.seq)
            .map(|(_, data)| data.clone())
            .collect())
    }

    /// Bytes held now.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes
    }

    /// The highest sequence number evicted so far (0 when none).
    #[cfg(test)]
    fn evicted_upto(&self) -> u64 {
        self.evicted_upto
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(stream: u64, seq: u64) -> EventId {
        EventId { stream, seq }
    }

    #[test]
    fn replays_only_the_suffix_of_one_stream() {
        let mut r = ReplayBuffer::new(1000);
        r.push(id(1, 1), Bytes::from_static(b"a"));
        r.push(id(2, 2), Bytes::from_static(b"b"));
        r.push(id(1, 3), Bytes::from_static(b"c"));
        r.push(id(1, 4), Bytes::from_static(b"d"));
        assert_eq!(r.replay_after(id(1, 1)).unwrap(), vec!["c", "d"]);
        assert_eq!(r.replay_after(id(2, 0)).unwrap(), vec!["b"]);
        assert!(r.replay_after(id(1, 4)).unwrap().is_empty());
    }

    #[test]
    fn eviction_past_the_budget_is_visible_and_refuses_old_cursors() {
        let mut r = ReplayBuffer::new(10);
        for seq in 1..=5 {
            r.push(id(1, seq), Bytes::from(vec![b'x'; 4]));
        }
        assert_eq!(r.events.len(), 2);
        assert!(r.bytes() <= 10);
        assert_eq!(r.evicted_upto(), 3);
        assert_eq!(r.replay_after(id(1, 2)), Err(ReplayError::Evicted));
        assert_eq!(r.replay_after(id(1, 3)).unwrap().len(), 2);
    }
}
