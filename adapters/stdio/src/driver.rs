//! The driver's public face: options, the result of a run, and [`Driver`], which owns the
//! loop's executor and command queues. The loop itself is in `run_loop.rs`.

use std::io;
use std::rc::Rc;
use std::time::Duration;

use smol::io::{AsyncRead, AsyncWrite};
use smol::LocalExecutor;

use crate::driven::Driven;
use crate::handle::{Channels, Executor, LoopHandle, Remote};
use crate::run_loop::{Loop, Queues};
/// Transport limits and timings of the loop. Protocol limits live in the machine's own config.
#[derive(Debug, Clone)]
pub struct DriveOptions {
    /// Longest accepted line in bytes, newline excluded; longer ones become
    /// [`crate::FrameError::TooLong`]. Default 16 MiB (the core's `max_frame_len` default).
    pub max_line_len: usize,
    /// Bytes asked for per read. Default 64 KiB.
    pub read_chunk: usize,
    /// Reading pauses while at least this many output bytes wait behind a busy writer.
    /// Default 1 MiB.
    pub output_high_water: usize,
    /// Capacity of the [`Remote`] command queue. Default 1024.
    pub command_capacity: usize,
    /// How long the loop keeps running once it should wind down, at most:
    /// - after the transport is gone (end of input or a failed write) while the machine stays
    ///   open: time for in-flight handlers to answer a peer that closed its writing side but
    ///   still reads;
    /// - after the machine closed while its last output cannot be written (a peer that stopped
    ///   reading).
    ///
    /// Default 10 s.
    pub linger: Duration,
}

impl Default for DriveOptions {
    fn default() -> Self {
        Self {
            max_line_len: mcp_sansio::config::DEFAULT_MAX_FRAME_LEN,
            read_chunk: 64 * 1024,
            output_high_water: 1024 * 1024,
            command_capacity: 1024,
            linger: Duration::from_secs(10),
        }
    }
}

/// Why the loop returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The machine reported [`Driven::is_closed`] and its output was flushed (or could not be).
    Closed,
    /// The [`DriveOptions::linger`] time ran out: the transport went away and the machine did
    /// not close, or the machine closed and its output could not be flushed.
    LingerExpired,
}

/// What the loop hands back when it returns: the machine, why it stopped, and IO errors seen.
#[derive(Debug)]
pub struct Finished<D> {
    /// The machine, for inspection (counters, final state).
    pub driven: D,
    /// Why the loop returned.
    pub reason: EndReason,
    /// A read error that ended the input, if any (end of file is not an error).
    pub input_error: Option<io::Error>,
    /// A write error that ended the output, if any (e.g. a broken pipe).
    pub output_error: Option<io::Error>,
}

/// Owns the loop's executor and command queues; create it first, give its [`LoopHandle`] and
/// [`Remote`] to the machine or the application, then [`Driver::run`] it.
pub struct Driver<D> {
    executor: Rc<LocalExecutor<'static>>,
    channels: Channels<D>,
    options: DriveOptions,
}

impl<D: Driven + 'static> Default for Driver<D> {
    fn default() -> Self {
        Self::new(DriveOptions::default())
    }
}

impl<D: Driven + 'static> Driver<D> {
    /// A driver with its own single-threaded executor.
    pub fn new(options: DriveOptions) -> Self {
        Self {
            executor: Rc::new(LocalExecutor::new()),
            channels: Channels::new(options.command_capacity),
            options,
        }
    }

    /// The options this driver runs with.
    pub fn options(&self) -> &DriveOptions {
        &self.options
    }

    /// Spawns tasks on this driver's executor; they run while [`Driver::run`] runs.
    pub fn handle(&self) -> LoopHandle<D> {
        let executor = Executor::Smol(Rc::clone(&self.executor));
        self.channels.handle(executor)
    }

    /// Sends commands into the loop from other threads.
    pub fn remote(&self) -> Remote<D> {
        self.channels.remote(None)
    }

    /// Drives `driven` over `reader`/`writer` until it closes (see [`EndReason`]), running the
    /// spawned tasks alongside. The writer is closed before this returns.
    pub async fn run<R, W>(self, driven: D, reader: R, writer: W) -> Finished<D>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let Driver {
            executor,
            channels,
            options,
        } = self;
        let (local_rx, remote_rx) = channels.into_receivers();
        let queues = Queues {
            local: Some(Box::pin(local_rx)),
            remote: Some(Box::pin(remote_rx)),
        };
        let state = Loop::new(driven, reader, writer, queues, options);
        executor.run(state.run()).await
    }

    /// [`Driver::run`] on the current thread, blocking until it returns.
    pub fn block_on<R, W>(self, driven: D, reader: R, writer: W) -> Finished<D>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        smol::block_on(self.run(driven, reader, writer))
    }
}
