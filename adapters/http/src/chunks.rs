//! A body's data chunks joined into one buffer: the first chunk kept as it is (a small body
//! arrives in one, so it is not copied), later ones copied after it.

use bytes::{Bytes, BytesMut};

/// The chunks of one body read so far.
#[derive(Debug, Default)]
pub(crate) struct Chunks {
    /// The first chunk, while it is the only one.
    first: Bytes,
    /// Every chunk, once a second one came.
    joined: Option<BytesMut>,
}

impl Chunks {
    /// Bytes read so far.
    pub(crate) fn len(&self) -> usize {
        self.joined.as_ref().map_or(self.first.len(), BytesMut::len)
    }

    /// Adds the next chunk.
    pub(crate) fn push(&mut self, chunk: Bytes) {
        match &mut self.joined {
            Some(buf) => buf.extend_from_slice(&chunk),
            None if self.first.is_empty() => self.first = chunk,
            None => {
                let mut buf = BytesMut::with_capacity(self.first.len() + chunk.len());
                buf.extend_from_slice(&self.first);
                buf.extend_from_slice(&chunk);
                self.joined = Some(buf);
            }
        }
    }

    /// The body read: the one chunk itself, or the chunks joined.
    pub(crate) fn into_bytes(self) -> Bytes {
        self.joined.map_or(self.first, BytesMut::freeze)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_chunk_is_kept_as_it_is_and_more_are_joined_in_order() {
        let one = Bytes::from_static(b"{\"a\":1}");
        let mut chunks = Chunks::default();
        chunks.push(one.clone());
        assert_eq!(chunks.len(), one.len());
        let whole = chunks.into_bytes();
        assert_eq!(whole, one);
        assert_eq!(whole.as_ptr(), one.as_ptr(), "a single chunk is not copied");

        let mut chunks = Chunks::default();
        for part in ["ab", "", "cde", "f"] {
            chunks.push(Bytes::from(part));
        }
        assert_eq!(chunks.len(), 6);
        assert_eq!(chunks.into_bytes(), Bytes::from_static(b"abcdef"));
        assert!(Chunks::default().into_bytes().is_empty());
    }
}
