//! The run loop: moves bytes between a reader/writer pair and a [`Driven`] machine, moves time
//! into it, and runs the application's tasks and commands next to it on one thread.
//!
//! One iteration: drain the machine's transmits into the pending output, hand that batch to
//! the writer if it is idle (one `write_all` + `flush` per batch), then wait for whatever comes
//! first: bytes read, a write finished, a command, a task's result, the machine's deadline. Each
//! input is fed to the machine and followed by a drain, as the drive-loop contract requires.
//! Reading pauses while the pending output is above a high-water mark, so a peer that does not
//! read cannot make us buffer without bound; writing never stops reading below that mark, so
//! two peers that both write before they read cannot deadlock on full pipes.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::{Duration, Instant};

use smol::channel::{Receiver, Sender};
use smol::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use smol::stream::Stream;
use smol::{LocalExecutor, Timer};

use crate::driven::Driven;
use crate::handle::{LocalCommand, LoopHandle, Remote, RemoteCommand};
use crate::interim_line_splitter::{LineItem, LineSplitter};

/// Transport limits and timings of the loop. Protocol limits live in the machine's own config.
#[derive(Debug, Clone)]
pub struct DriveOptions {
    /// Longest accepted line in bytes, newline excluded; longer ones become
    /// [`crate::FrameError::TooLong`]. Default 4 MiB (the core's `max_frame_len` default).
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
            max_line_len: 4 * 1024 * 1024,
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
    local_tx: Sender<LocalCommand<D>>,
    local_rx: Receiver<LocalCommand<D>>,
    remote_tx: Sender<RemoteCommand<D>>,
    remote_rx: Receiver<RemoteCommand<D>>,
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
        let (local_tx, local_rx) = smol::channel::unbounded();
        let (remote_tx, remote_rx) = smol::channel::bounded(options.command_capacity.max(1));
        Self {
            executor: Rc::new(LocalExecutor::new()),
            local_tx,
            local_rx,
            remote_tx,
            remote_rx,
            options,
        }
    }

    /// The options this driver runs with.
    pub fn options(&self) -> &DriveOptions {
        &self.options
    }

    /// Spawns tasks on this driver's executor; they run while [`Driver::run`] runs.
    pub fn handle(&self) -> LoopHandle<D> {
        LoopHandle {
            executor: Rc::clone(&self.executor),
            local_tx: self.local_tx.clone(),
        }
    }

    /// Sends commands into the loop from other threads.
    pub fn remote(&self) -> Remote<D> {
        Remote {
            tx: self.remote_tx.clone(),
        }
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
            local_tx,
            local_rx,
            remote_tx,
            remote_rx,
            options,
        } = self;
        // Only Remote clones keep the queue open, so it reports closed once they are all gone.
        drop(remote_tx);
        drop(local_tx);
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

/// The command queues; a queue whose senders are all gone becomes `None`.
struct Queues<D> {
    // Boxed: a receiver is `!Unpin` and is polled as a stream across iterations.
    local: Option<Pin<Box<Receiver<LocalCommand<D>>>>>,
    remote: Option<Pin<Box<Receiver<RemoteCommand<D>>>>>,
}

type WriteJob<'w, W> = Pin<Box<dyn Future<Output = (W, Vec<u8>, io::Result<()>)> + 'w>>;

/// The writer and the batch it is writing.
enum Output<'w, W> {
    Idle(W),
    Busy(WriteJob<'w, W>),
    Failed,
}

/// Everything that became ready during one wait.
struct Wakes<W, D> {
    written: Option<(W, Vec<u8>, io::Result<()>)>,
    read: Option<io::Result<usize>>,
    local: Option<Option<LocalCommand<D>>>,
    remote: Option<Option<RemoteCommand<D>>>,
    timer: bool,
}

impl<W, D> Wakes<W, D> {
    fn any(&self) -> bool {
        self.written.is_some()
            || self.read.is_some()
            || self.local.is_some()
            || self.remote.is_some()
            || self.timer
    }
}

struct Loop<'w, D, R, W> {
    driven: D,
    reader: R,
    output: Output<'w, W>,
    queues: Queues<D>,
    options: DriveOptions,
    splitter: LineSplitter,
    scratch: Vec<u8>,
    /// Output drained from the machine, not yet handed to the writer.
    pending: Vec<u8>,
    /// A spare buffer, swapped with `pending` when a write starts.
    spare: Vec<u8>,
    input_open: bool,
    /// When the transport went away (end of input or failed write): starts the linger.
    gone_at: Option<Instant>,
    /// When the machine was first seen closed: starts the linger for the final flush.
    closed_at: Option<Instant>,
    /// Complete lines are buffered in the splitter but feeding stopped at the high-water mark.
    backlog: bool,
    timer: Timer,
    armed: Option<Instant>,
    input_error: Option<io::Error>,
    output_error: Option<io::Error>,
}

impl<'w, D: Driven, R: AsyncRead + Unpin, W: AsyncWrite + Unpin + 'w> Loop<'w, D, R, W> {
    fn new(driven: D, reader: R, writer: W, queues: Queues<D>, options: DriveOptions) -> Self {
        Self {
            splitter: LineSplitter::new(options.max_line_len),
            scratch: vec![0; options.read_chunk.max(1)],
            driven,
            reader,
            output: Output::Idle(writer),
            queues,
            options,
            pending: Vec::new(),
            spare: Vec::new(),
            input_open: true,
            gone_at: None,
            closed_at: None,
            backlog: false,
            timer: Timer::never(),
            armed: None,
            input_error: None,
            output_error: None,
        }
    }

    async fn run(mut self) -> Finished<D> {
        let reason = loop {
            self.drain();
            self.start_write();
            if self.backlog && !self.driven.is_closed() {
                // Lines held back at the high-water mark: feed them while the writer works.
                self.feed_buffered(Instant::now());
                self.start_write();
            }
            let flushed = self.pending.is_empty() && !matches!(self.output, Output::Busy(_));
            if self.driven.is_closed() {
                if flushed {
                    break EndReason::Closed;
                }
                self.closed_at.get_or_insert_with(Instant::now);
            }
            let linger_end = match (self.gone_at, self.closed_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
            .map(|t| t + self.options.linger);
            if linger_end.is_some_and(|end| Instant::now() >= end) {
                break EndReason::LingerExpired;
            }
            self.arm_timer(linger_end);
            let wakes = self.wait().await;
            self.handle_wakes(wakes);
        };
        if let Output::Idle(mut writer) = std::mem::replace(&mut self.output, Output::Failed) {
            let _ = writer.close().await;
        }
        Finished {
            driven: self.driven,
            reason,
            input_error: self.input_error,
            output_error: self.output_error,
        }
    }

    /// Moves every pending transmit of the machine into `pending`, one line each.
    fn drain(&mut self) {
        while let Some(_len) = self.driven.poll_transmit(&mut self.pending) {
            debug_assert!(
                !self.pending.ends_with(b"\n"),
                "a transmit must not carry its own newline"
            );
            self.pending.push(b'\n');
        }
        if matches!(self.output, Output::Failed) {
            self.pending.clear();
        }
    }

    /// Hands the pending batch to the writer when it is idle: one write and flush per batch.
    fn start_write(&mut self) {
        if self.pending.is_empty() || !matches!(self.output, Output::Idle(_)) {
            return;
        }
        let Output::Idle(mut writer) = std::mem::replace(&mut self.output, Output::Failed) else {
            return;
        };
        let batch = std::mem::replace(&mut self.pending, std::mem::take(&mut self.spare));
        self.output = Output::Busy(Box::pin(async move {
            let result = async {
                writer.write_all(&batch).await?;
                writer.flush().await
            }
            .await;
            (writer, batch, result)
        }));
    }

    fn arm_timer(&mut self, linger_end: Option<Instant>) {
        let deadline = match (self.driven.poll_timeout(), linger_end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if deadline != self.armed {
            match deadline {
                Some(at) => self.timer.set_at(at),
                None => self.timer = Timer::never(),
            }
            self.armed = deadline;
        }
    }

    /// Waits until at least one source is ready; collects every source that is.
    async fn wait(&mut self) -> Wakes<W, D> {
        let want_read = self.input_open
            && !self.backlog
            && !self.driven.is_closed()
            && self.pending.len() < self.options.output_high_water;
        let Self {
            reader,
            output,
            queues,
            scratch,
            timer,
            armed,
            ..
        } = self;
        std::future::poll_fn(|cx| {
            let mut wakes = Wakes {
                written: None,
                read: None,
                local: None,
                remote: None,
                timer: false,
            };
            if let Output::Busy(job) = output {
                if let Poll::Ready(done) = job.as_mut().poll(cx) {
                    wakes.written = Some(done);
                }
            }
            if let Some(rx) = queues.local.as_mut() {
                if let Poll::Ready(item) = rx.as_mut().poll_next(cx) {
                    wakes.local = Some(item);
                }
            }
            if let Some(rx) = queues.remote.as_mut() {
                if let Poll::Ready(item) = rx.as_mut().poll_next(cx) {
                    wakes.remote = Some(item);
                }
            }
            if want_read {
                if let Poll::Ready(result) = Pin::new(&mut *reader).poll_read(cx, scratch) {
                    wakes.read = Some(result);
                }
            }
            if armed.is_some() && Pin::new(&mut *timer).poll(cx).is_ready() {
                *armed = None;
                wakes.timer = true;
            }
            if wakes.any() {
                Poll::Ready(wakes)
            } else {
                Poll::Pending
            }
        })
        .await
    }

    fn handle_wakes(&mut self, wakes: Wakes<W, D>) {
        let now = Instant::now();
        if let Some((writer, mut batch, result)) = wakes.written {
            match result {
                Ok(()) => {
                    batch.clear();
                    self.spare = batch;
                    self.output = Output::Idle(writer);
                }
                Err(error) => {
                    self.output = Output::Failed;
                    self.pending.clear();
                    self.output_error = Some(error);
                    // Nothing can answer the peer any more: stop reading it too.
                    self.input_open = false;
                    self.transport_gone(now);
                }
            }
        }
        if let Some(result) = wakes.read {
            self.handle_read(now, result);
        }
        match wakes.local {
            Some(Some(command)) => command(&mut self.driven, now),
            Some(None) => self.queues.local = None,
            None => {}
        }
        self.drain();
        match wakes.remote {
            Some(Some(command)) => command(&mut self.driven, now),
            Some(None) => self.queues.remote = None,
            None => {}
        }
        self.drain();
        if wakes.timer && self.driven.poll_timeout().is_some_and(|at| at <= now) {
            self.driven.handle_timeout(now);
        }
    }

    fn handle_read(&mut self, now: Instant, result: io::Result<usize>) {
        match result {
            Ok(0) => {
                self.input_open = false;
                if let Some(item) = self.splitter.finish() {
                    self.feed(now, item);
                }
                self.transport_gone(now);
            }
            Ok(n) => {
                self.splitter.push(&self.scratch[..n]);
                self.feed_buffered(now);
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => {
                self.input_open = false;
                self.input_error = Some(error);
                self.transport_gone(now);
            }
        }
    }

    /// Feeds buffered lines, each followed by a drain, until none is left or the pending
    /// output reaches the high-water mark (then the rest waits in the splitter: a read chunk
    /// full of tiny requests with large answers cannot make the output grow without bound).
    fn feed_buffered(&mut self, now: Instant) {
        self.backlog = false;
        while !self.driven.is_closed() {
            if self.pending.len() >= self.options.output_high_water {
                self.backlog = true;
                return;
            }
            let Some(item) = self.splitter.next_item() else {
                return;
            };
            self.feed(now, item);
            self.drain();
        }
    }

    fn feed(&mut self, now: Instant, item: LineItem) {
        match item {
            LineItem::Frame(frame) => self.driven.handle_frame(now, frame),
            LineItem::Error(error) => self.driven.handle_frame_error(now, error),
        }
    }

    /// Tells the machine once that the transport is gone and starts the linger.
    fn transport_gone(&mut self, now: Instant) {
        if self.gone_at.is_none() {
            self.gone_at = Some(now);
            self.driven.handle_eof(now);
        }
    }
}
