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
use std::task::Poll;
use std::time::Instant;

use smol::channel::Receiver;
use smol::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use smol::stream::Stream;
use smol::Timer;

use crate::driven::Driven;
use crate::driver::{DriveOptions, EndReason, Finished};
use crate::handle::{LocalCommand, RemoteCommand};
use crate::shared_loop::{earliest, Machine, Out};

/// The command queues; a queue whose senders are all gone becomes `None`.
pub(crate) struct Queues<D> {
    // Boxed: a receiver is `!Unpin` and is polled as a stream across iterations.
    pub(crate) local: Option<Pin<Box<Receiver<LocalCommand<D>>>>>,
    pub(crate) remote: Option<Pin<Box<Receiver<RemoteCommand<D>>>>>,
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

/// The state of one run.
pub(crate) struct Loop<'w, D, R, W> {
    machine: Machine<D>,
    reader: R,
    output: Output<'w, W>,
    queues: Queues<D>,
    options: DriveOptions,
    scratch: Vec<u8>,
    /// Output drained from the machine, not yet handed to the writer.
    pending: Vec<u8>,
    /// A spare buffer, swapped with `pending` when a write starts.
    spare: Vec<u8>,
    input_open: bool,
    timer: Timer,
    armed: Option<Instant>,
    input_error: Option<io::Error>,
    output_error: Option<io::Error>,
}

impl<'w, D: Driven, R: AsyncRead + Unpin, W: AsyncWrite + Unpin + 'w> Loop<'w, D, R, W> {
    pub(crate) fn new(
        driven: D,
        reader: R,
        writer: W,
        queues: Queues<D>,
        options: DriveOptions,
    ) -> Self {
        Self {
            machine: Machine::new(driven, options.max_line_len),
            scratch: vec![0; options.read_chunk.max(1)],
            reader,
            output: Output::Idle(writer),
            queues,
            options,
            pending: Vec::new(),
            spare: Vec::new(),
            input_open: true,
            timer: Timer::never(),
            armed: None,
            input_error: None,
            output_error: None,
        }
    }

    pub(crate) async fn run(mut self) -> Finished<D> {
        let reason = loop {
            self.drain();
            self.start_write();
            if self.machine.backlog && !self.machine.driven.is_closed() {
                // Lines held back at the high-water mark: feed them while the writer works.
                let now = Instant::now();
                self.feed_buffered(now);
                self.machine.end_input_if_fed(now);
                self.start_write();
            }
            let flushed = self.pending.is_empty() && !matches!(self.output, Output::Busy(_));
            if self.machine.driven.is_closed() {
                if flushed {
                    break EndReason::Closed;
                }
                self.machine.closed_unflushed(Instant::now());
            }
            let linger_end = self.machine.linger_end(self.options.linger);
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
            driven: self.machine.driven,
            reason,
            input_error: self.input_error,
            output_error: self.output_error,
        }
    }

    /// Moves every pending transmit of the machine into `pending`, one line each.
    fn drain(&mut self) {
        self.machine.drain(&mut self.pending);
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

    /// Arms the timer for the machine's deadline (or the linger's end), but only when that
    /// moves earlier than what is armed. Each request moves a client's deadline later (its own
    /// timeout), and re-setting the reactor's timer costs a wake-up of the reactor per request;
    /// a timer left armed too early fires once, finds nothing due (`handle_wakes` checks
    /// `poll_timeout` against the clock) and is re-armed for the real deadline.
    fn arm_timer(&mut self, linger_end: Option<Instant>) {
        let deadline = earliest(self.machine.driven.poll_timeout(), linger_end);
        if let Some(at) = deadline {
            if self.armed.is_none_or(|armed| at < armed) {
                self.timer.set_at(at);
                self.armed = Some(at);
            }
        }
    }

    /// Waits until at least one source is ready; collects every source that is.
    async fn wait(&mut self) -> Wakes<W, D> {
        let want_read = self.input_open
            && !self.machine.backlog
            && !self.machine.driven.is_closed()
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
                    self.machine.transport_gone(now);
                }
            }
        }
        if let Some(result) = wakes.read {
            self.handle_read(now, result);
        }
        match wakes.local {
            Some(Some(command)) => command(&mut self.machine.driven, now),
            Some(None) => self.queues.local = None,
            None => {}
        }
        self.drain();
        match wakes.remote {
            Some(Some(command)) => command(&mut self.machine.driven, now),
            Some(None) => self.queues.remote = None,
            None => {}
        }
        self.drain();
        let driven = &mut self.machine.driven;
        if wakes.timer && driven.poll_timeout().is_some_and(|at| at <= now) {
            driven.handle_timeout(now);
        }
    }

    fn handle_read(&mut self, now: Instant, result: io::Result<usize>) {
        let out = Out {
            buf: &mut self.pending,
            counted_from: 0,
            high_water: self.options.output_high_water,
        };
        match result {
            Ok(0) => {
                self.input_open = false;
                self.machine.handle_input_end(now, out);
            }
            Ok(n) => self.machine.handle_bytes(now, &self.scratch[..n], out),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => {
                self.input_open = false;
                self.input_error = Some(error);
                self.machine.transport_gone(now);
            }
        }
    }

    /// Feeds lines held back at the high-water mark.
    fn feed_buffered(&mut self, now: Instant) {
        let out = Out {
            buf: &mut self.pending,
            counted_from: 0,
            high_water: self.options.output_high_water,
        };
        self.machine.feed_buffered(now, out);
    }
}
