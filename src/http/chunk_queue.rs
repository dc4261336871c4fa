//! The chunks of one response stream waiting for its reader, counted in chunks and bytes. A
//! reader that falls behind by [`MAX_CHUNKS`] chunks or [`MAX_BYTES`] bytes is too slow: the
//! stream's owner cuts it loose (a Streamable HTTP client resumes from the replay buffer; an
//! HTTP+SSE session, which cannot resume, ends) instead of holding without bound what a
//! client that never reads makes the server produce. Chunks placed whole (a resume's replay,
//! the answers routed before a stream opened) are bounded by what placed them (the replay
//! budget, the POST body) and do not count: the limits apply to what is queued after them,
//! so a long replay is written before a live event can cut its reader loose.

use std::collections::VecDeque;

use bytes::Bytes;

/// Undelivered chunks on one stream, at most.
pub(crate) const MAX_CHUNKS: usize = 4096;
/// Undelivered bytes on one stream, at most (an empty queue takes one chunk of any size, so
/// a message as large as `max_body` always goes).
pub(crate) const MAX_BYTES: usize = 32 << 20;

/// Chunks waiting for a stream's reader, and their total size.
#[derive(Debug, Default)]
pub(crate) struct ChunkQueue {
    chunks: VecDeque<Bytes>,
    bytes: usize,
    /// How many chunks at the front were placed whole (not counted), and their bytes.
    whole: usize,
    whole_bytes: usize,
}

impl ChunkQueue {
    /// Whether a chunk of `len` bytes fits under the limits.
    pub(crate) fn has_room(&self, len: usize) -> bool {
        let counted = self.chunks.len() - self.whole;
        let counted_bytes = self.bytes - self.whole_bytes;
        counted == 0 || (counted < MAX_CHUNKS && counted_bytes.saturating_add(len) <= MAX_BYTES)
    }

    /// Queues `chunk` whatever the limits (callers look at [`ChunkQueue::has_room`] first
    /// where the reader decides the size).
    pub(crate) fn push_back(&mut self, chunk: Bytes) {
        self.bytes += chunk.len();
        self.chunks.push_back(chunk);
    }

    /// Queues `chunk` whole, not counted against the limits, when only whole chunks are
    /// queued (the caller places them before the stream takes live events); behind a counted
    /// chunk it is counted like any other.
    pub(crate) fn push_whole(&mut self, chunk: Bytes) {
        if self.whole == self.chunks.len() {
            self.whole += 1;
            self.whole_bytes += chunk.len();
        }
        self.push_back(chunk);
    }

    pub(crate) fn pop_front(&mut self) -> Option<Bytes> {
        let chunk = self.chunks.pop_front()?;
        self.bytes -= chunk.len();
        if self.whole > 0 {
            self.whole -= 1;
            self.whole_bytes -= chunk.len();
        }
        Some(chunk)
    }

    pub(crate) fn clear(&mut self) {
        *self = ChunkQueue::default();
    }

    pub(crate) fn len(&self) -> usize {
        self.chunks.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }
}

impl From<VecDeque<Bytes>> for ChunkQueue {
    fn from(chunks: VecDeque<Bytes>) -> Self {
        let bytes = chunks.iter().map(Bytes::len).sum();
        ChunkQueue {
            whole: chunks.len(),
            whole_bytes: bytes,
            chunks,
            bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_runs_out_by_chunks_or_by_bytes_and_an_empty_queue_takes_any_chunk() {
        let mut queue = ChunkQueue::default();
        assert!(queue.has_room(MAX_BYTES * 2), "one chunk of any size");
        queue.push_back(Bytes::from(vec![0; MAX_BYTES - 10]));
        assert!(queue.has_room(10));
        assert!(!queue.has_room(11), "past the bytes");
        assert_eq!(queue.pop_front().map(|c| c.len()), Some(MAX_BYTES - 10));
        assert!(queue.is_empty());
        for _ in 0..MAX_CHUNKS {
            assert!(queue.has_room(1));
            queue.push_back(Bytes::from_static(b"x"));
        }
        assert!(!queue.has_room(1), "past the chunks");
        queue.clear();
        assert!(queue.has_room(MAX_BYTES));
    }

    /// Chunks placed whole (a replay) do not count: as many chunks and bytes again fit behind
    /// them, and the limits apply again once the reader has taken them.
    #[test]
    fn chunks_placed_whole_are_not_counted() {
        let replay = VecDeque::from(vec![Bytes::from_static(b"r"); MAX_CHUNKS + 10]);
        let mut queue = ChunkQueue::from(replay);
        queue.push_whole(Bytes::from(vec![0; MAX_BYTES]));
        for _ in 0..MAX_CHUNKS {
            assert!(queue.has_room(1));
            queue.push_back(Bytes::from_static(b"x"));
        }
        assert!(
            !queue.has_room(1),
            "the chunks queued after the replay count"
        );
        for _ in 0..MAX_CHUNKS + 11 {
            queue.pop_front();
        }
        assert_eq!(queue.len(), MAX_CHUNKS);
        assert!(!queue.has_room(1), "still full of counted chunks");
        queue.pop_front();
        assert!(queue.has_room(1));
        let mut queue = ChunkQueue::from(VecDeque::from([Bytes::from(vec![0; 10])]));
        queue.push_back(Bytes::from(vec![0; MAX_BYTES - 10]));
        assert!(queue.has_room(10), "the replay's bytes are not counted");
        assert!(
            !queue.has_room(11),
            "the bytes queued after the replay count"
        );
    }
}
