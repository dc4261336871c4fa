//! Outgoing frames carved from one growing buffer instead of one allocation each: the client
//! machine writes a frame into a scratch `Vec`, and the frame the transport keeps is a view
//! into a shared block. hyper copies a request body into its write buffer and drops it, so a
//! block is soon unshared and [`bytes::BytesMut`] reuses it in place; a frame kept longer
//! (a held request) only makes the next frames start a fresh block.

use bytes::{Bytes, BytesMut};

/// The size of a fresh block: room for a round of 64 requests of about 160 bytes each.
const BLOCK: usize = 16 * 1024;

/// The block frames are carved from.
pub(crate) struct Frames {
    block: BytesMut,
}

impl Default for Frames {
    fn default() -> Self {
        Frames {
            block: BytesMut::with_capacity(BLOCK),
        }
    }
}

impl Frames {
    /// `text` as a frame: copied to the end of the block (reclaimed when no frame uses it
    /// any more, else a new block of at least [`BLOCK`]) and split off.
    pub(crate) fn frame(&mut self, text: &[u8]) -> Bytes {
        self.block.reserve(text.len());
        self.block.extend_from_slice(text);
        self.block.split().freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames hold their own text; once every frame of a block is dropped, the next frames
    /// reuse that block instead of allocating (the same addresses come back).
    #[test]
    fn frames_share_a_block_that_is_reused_when_free() {
        let mut frames = Frames::default();
        let a = frames.frame(b"{\"id\":1}");
        let b = frames.frame(b"{\"id\":22}");
        assert_eq!(a, &b"{\"id\":1}"[..]);
        assert_eq!(b, &b"{\"id\":22}"[..]);
        assert_eq!(b.as_ptr(), a.as_ptr().wrapping_add(a.len()), "one block");
        let first = a.as_ptr();
        drop((a, b));
        // Fill the block so the next frame needs room: the free block is taken again.
        let filler = vec![b'x'; BLOCK];
        let big = frames.frame(&filler);
        assert_eq!(big.len(), BLOCK);
        drop(big);
        let c = frames.frame(b"{}");
        assert_eq!(c, &b"{}"[..]);
        assert_eq!(c.as_ptr(), first, "the free block is reused");
    }

    /// A frame kept while the block fills does not stop new frames: they go to a new block,
    /// and the kept frame keeps its text.
    #[test]
    fn a_kept_frame_keeps_its_text_while_new_blocks_are_used() {
        let mut frames = Frames::default();
        let kept = frames.frame(b"kept");
        let many: Vec<Bytes> = (0..2_000u32)
            .map(|i| frames.frame(i.to_string().as_bytes()))
            .collect();
        assert_eq!(kept, &b"kept"[..]);
        for (i, frame) in many.iter().enumerate() {
            assert_eq!(frame, i.to_string().as_bytes());
        }
        let large = vec![b'y'; 3 * BLOCK];
        assert_eq!(frames.frame(&large), large);
    }
}
