//! `Traced`: a [`Driven`] machine wrapped so that every frame it takes in and hands out also
//! reaches a [`TraceSink`]. A machine that is not wrapped pays nothing.

use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::trace::{Direction, FrameTrace, TraceSink};

use crate::{Driven, FrameError};

/// A machine whose frames are reported to a sink as they pass (the ndjson newline excluded).
///
/// A frame handed out is timed with the latest instant the loop gave the machine: the loop
/// drains output right after each input, so that is when the frame was produced.
pub struct Traced<D, S> {
    inner: D,
    sink: S,
    now: Option<Instant>,
}

impl<D, S> Traced<D, S> {
    /// Wraps `inner`; its frames go to `sink`.
    pub fn new(inner: D, sink: S) -> Self {
        Traced {
            inner,
            sink,
            now: None,
        }
    }

    /// The wrapped machine.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// The wrapped machine, mutably.
    pub fn inner_mut(&mut self) -> &mut D {
        &mut self.inner
    }

    /// The machine and the sink, unwrapped.
    pub fn into_parts(self) -> (D, S) {
        (self.inner, self.sink)
    }
}

impl<D: Driven, S: TraceSink> Driven for Traced<D, S> {
    fn handle_frame(&mut self, now: Instant, frame: Bytes) {
        self.now = Some(now);
        let trace = FrameTrace::new(Direction::Recv, now, &frame);
        self.sink.frame(&trace, &frame);
        self.inner.handle_frame(now, frame);
    }

    fn handle_frame_error(&mut self, now: Instant, error: FrameError) {
        self.now = Some(now);
        self.inner.handle_frame_error(now, error);
    }

    fn handle_eof(&mut self, now: Instant) {
        self.now = Some(now);
        self.inner.handle_eof(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.now = Some(now);
        self.inner.handle_timeout(now);
    }

    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        let start = buf.len();
        let len = self.inner.poll_transmit(buf)?;
        if let (Some(now), Some(raw)) = (self.now, buf.get(start..start + len)) {
            let frame = Bytes::copy_from_slice(raw);
            let trace = FrameTrace::new(Direction::Send, now, &frame);
            self.sink.frame(&trace, &frame);
        }
        Some(len)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.inner.poll_timeout()
    }

    fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers every frame with itself.
    #[derive(Default)]
    struct Echo(Vec<Bytes>);

    impl Driven for Echo {
        fn handle_frame(&mut self, _now: Instant, frame: Bytes) {
            self.0.push(frame);
        }
        fn handle_frame_error(&mut self, _now: Instant, _error: FrameError) {}
        fn handle_eof(&mut self, _now: Instant) {}
        fn handle_timeout(&mut self, _now: Instant) {}
        fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
            let frame = self.0.pop()?;
            buf.extend_from_slice(&frame);
            Some(frame.len())
        }
        fn poll_timeout(&self) -> Option<Instant> {
            None
        }
        fn is_closed(&self) -> bool {
            false
        }
    }

    #[derive(Default)]
    struct Collect(Vec<(FrameTrace, Vec<u8>)>);

    impl TraceSink for Collect {
        fn frame(&mut self, trace: &FrameTrace, raw: &[u8]) {
            self.0.push((trace.clone(), raw.to_vec()));
        }
    }

    #[test]
    fn both_directions_reach_the_sink() {
        let mut traced = Traced::new(Echo::default(), Collect::default());
        let now = Instant::now();
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        traced.handle_frame(now, Bytes::from_static(line));
        let mut buf = b"earlier".to_vec();
        assert_eq!(traced.poll_transmit(&mut buf), Some(line.len()));
        assert_eq!(traced.poll_transmit(&mut buf), None);
        let (_, sink) = traced.into_parts();
        let dirs: Vec<_> = sink.0.iter().map(|(t, _)| t.dir).collect();
        assert_eq!(dirs, [Direction::Recv, Direction::Send]);
        for (trace, raw) in &sink.0 {
            assert_eq!(
                (raw.as_slice(), trace.bytes, trace.at),
                (&line[..], line.len(), now)
            );
            assert_eq!(trace.method.as_deref(), Some("ping"));
        }
    }
}
