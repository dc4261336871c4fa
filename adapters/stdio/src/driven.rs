//! The contract between the adapter and a protocol state machine: what the loop feeds it and
//! what it drains from it. The adapter decides nothing about the protocol; whatever implements
//! [`Driven`] (the session, the application-layer server or client) decides everything.

use std::time::Instant;

use bytes::Bytes;

/// A frame the transport could not deliver (an over-long line, its bytes discarded up to the
/// next newline), told to the machine so it can answer or count it: the core's framing error.
pub use mcp_sansio::framing::FrameError;

/// A sans-IO machine the adapter's loop drives.
///
/// The loop follows the crate-wide drive-loop contract: after every input (`handle_*`) and every
/// command it drains [`Driven::poll_transmit`] until `None`, writes the batch, then sleeps until
/// the earlier of new input, a command, and [`Driven::poll_timeout`]. Machines that produce
/// events (the session's `poll_event`) drain them inside their own `handle_*` methods or in a
/// wrapper that implements this trait: events are an application concern, not a transport one.
pub trait Driven {
    /// One frame: one JSON text (an ndjson line without its newline).
    fn handle_frame(&mut self, now: Instant, frame: Bytes);

    /// A frame the transport refused (an over-long line). The stream goes on after it.
    fn handle_frame_error(&mut self, now: Instant, error: FrameError);

    /// The transport is gone: the input reached end of file, failed, or the output could no
    /// longer be written. Called once. The loop keeps running (timers, commands, tasks, and
    /// writes while the output still works) until [`Driven::is_closed`] or the linger time
    /// ([`crate::DriveOptions::linger`]) runs out.
    fn handle_eof(&mut self, now: Instant);

    /// The deadline returned by [`Driven::poll_timeout`] has passed (or is about to be
    /// re-checked); `now` is the current time.
    fn handle_timeout(&mut self, now: Instant);

    /// Appends one outbound message to `buf` (compact JSON, no newline, no trailing newline)
    /// and returns its length, or `None` when nothing is pending.
    #[must_use]
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize>;

    /// The next instant at which [`Driven::handle_timeout`] must be called.
    #[must_use]
    fn poll_timeout(&self) -> Option<Instant>;

    /// True once the machine is done: the loop flushes what is pending and returns.
    #[must_use]
    fn is_closed(&self) -> bool;
}
