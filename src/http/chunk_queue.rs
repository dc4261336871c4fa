//! The chunks of one response stream waiting for its reader, counted in chunks and bytes. A
//! reader that falls behind by [`MAX_CHUNKS`] chunks or [`MAX_BYTES`] bytes is too slow: the
//! stream's owner cuts it loose (a Streamable HTTP client resumes from the replay buffer; an
//! HTTP+SSE session, which cannot resume, ends) instead of holding without bound what a
//! client that never reads makes the server produce.

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
}

impl ChunkQueue {
    /// Whether a chunk of `len` bytes fits under the limits.
    pub(crate) fn has_room(&self, len: usize) -> bool {
        self.chunks.is_empty()
            || (self.chunks.len() < MAX_CHUNKS && self.bytes.saturating_add(len) <= MAX_BYTES)
    }

    /// Queues `chunk` whatever the limits (callers look at [`ChunkQueue::has_room`] first
    /// where the reader decides the size).
    pub(crate) fn push_back(&mut self, chunk: Bytes) {
        self.bytes += chunk.len();
        self.chunks.push_back(chunk);
    }

    pub(crate) fn pop_front(&mut self) -> Option<Bytes> {
        let chunk = self.chunks.pop_front()?;
        self.bytes -= chunk.len();
        Some(chunk)
    }

    pub(crate) fn clear(&mut self) {
        self.chunks.clear();
        self.bytes = 0;
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
        ChunkQueue { chunks, bytes }
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
        let queue = ChunkQueue::from(VecDeque::from([Bytes::from(vec![0; MAX_BYTES])]));
        assert!(!queue.has_room(1), "bytes counted when built from chunks");
    }
}
