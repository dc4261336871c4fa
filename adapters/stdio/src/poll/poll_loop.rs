//! The poll driver's loop: the same drive-loop contract as the smol loop (`run_loop.rs`), on
//! plain file descriptors and `poll(2)`, for one machine per thread.
//!
//! One turn: run the queued tasks and commands, drain the machine's transmits, write the
//! pending output until the pipe is full, then sleep in one `poll(2)` on the input, the output
//! (only while a write is stuck), the [`Wake`] socket and the machine's deadline. When nothing
//! but input can happen (no live task, no `Remote`, no deadline, nothing to write), the loop
//! skips `poll` and blocks in `read`: one `read` and one `write` per round trip, the floor of a
//! pipe ping-pong.
//!
//! The input descriptor may block (it is only read after `poll` reported it, or when blocking
//! is the point); the output should not (the driver makes it non-blocking where it owns it), so
//! a peer that writes before it reads cannot deadlock us: reading goes on while output waits,
//! up to the same high-water mark as the smol loop.

use std::io;
use std::os::fd::BorrowedFd;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use smol::channel::Receiver;

use super::foreground::Foreground;
use super::tasks::Tasks;
use super::wake::Wake;
use crate::driven::Driven;
use crate::driver::{DriveOptions, EndReason, Finished};
use crate::handle::{LocalCommand, RemoteCommand};
use crate::shared_loop::{earliest, Machine, Out};

/// Drop the written head of the output buffer once it is this long and at least half of it.
const COMPACT_AT: usize = 64 * 1024;

/// Longest single sleep; a later deadline is reached in several (keeps the timespec small).
const MAX_SLEEP: Duration = Duration::from_secs(24 * 60 * 60);

/// What the loop runs next to the machine: tasks, a borrowed foreground future and the two
/// command queues.
pub(crate) struct Sources<'a, D> {
    pub(crate) tasks: Rc<Tasks>,
    pub(crate) foreground: Foreground<'a>,
    pub(crate) wake: Arc<Wake>,
    pub(crate) local: Receiver<LocalCommand<D>>,
    pub(crate) remote: Receiver<RemoteCommand<D>>,
}

/// The state of one run.
pub(crate) struct PollLoop<'fd, D> {
    machine: Machine<D>,
    input: BorrowedFd<'fd>,
    output: BorrowedFd<'fd>,
    sources: Sources<'fd, D>,
    options: DriveOptions,
    scratch: Vec<u8>,
    /// Output drained from the machine; `pending[written..]` is not written yet.
    pending: Vec<u8>,
    written: usize,
    /// End of the batch being written: output drained after it started is what the
    /// high-water mark limits (as in the smol loop, where a batch is handed to the writer).
    batch_end: usize,
    input_open: bool,
    output_open: bool,
    /// False once a read returned `EAGAIN`: the input never blocks, so always `poll` first.
    input_blocks: bool,
    input_error: Option<io::Error>,
    output_error: Option<io::Error>,
}

impl<'fd, D: Driven> PollLoop<'fd, D> {
    pub(crate) fn new(
        driven: D,
        input: BorrowedFd<'fd>,
        output: BorrowedFd<'fd>,
        sources: Sources<'fd, D>,
        options: DriveOptions,
    ) -> Self {
        Self {
            machine: Machine::new(driven, options.max_line_len),
            scratch: vec![0; options.read_chunk.max(1)],
            input,
            output,
            sources,
            options,
            pending: Vec::new(),
            written: 0,
            batch_end: 0,
            input_open: true,
            output_open: true,
            input_blocks: true,
            input_error: None,
            output_error: None,
        }
    }

    pub(crate) fn run(mut self) -> Finished<D> {
        let reason = loop {
            self.run_queued();
            self.drain();
            self.flush();
            if self.machine.backlog && !self.machine.driven.is_closed() {
                let now = Instant::now();
                self.feed_buffered(now);
                self.machine.end_input_if_fed(now);
                self.flush();
            }
            let now = Instant::now();
            if self.machine.driven.is_closed() {
                if self.unwritten() == 0 {
                    break EndReason::Closed;
                }
                self.machine.closed_unflushed(now);
            }
            let linger_end = self.machine.linger_end(self.options.linger);
            if linger_end.is_some_and(|end| now >= end) {
                break EndReason::LingerExpired;
            }
            let due = self.machine.driven.poll_timeout();
            if due.is_some_and(|at| at <= now) {
                self.machine.driven.handle_timeout(now);
                continue;
            }
            let deadline = earliest(due, linger_end);
            self.wait(now, deadline);
        };
        Finished {
            driven: self.machine.driven,
            reason,
            input_error: self.input_error,
            output_error: self.output_error,
        }
    }

    fn unwritten(&self) -> usize {
        self.pending.len() - self.written
    }

    /// Output waiting behind the batch being written.
    fn queued(&self) -> usize {
        self.pending.len() - self.batch_end
    }

    /// Runs woken tasks, then the commands they and other threads queued, each command
    /// followed by a drain.
    fn run_queued(&mut self) {
        if !self.sources.wake.take() {
            return;
        }
        self.sources.tasks.run_ready();
        self.sources.foreground.run();
        let now = Instant::now();
        while let Ok(command) = self.sources.local.try_recv() {
            command(&mut self.machine.driven, now);
            self.drain();
        }
        // Bounded: commands queued while these run wait for the next turn.
        for _ in 0..self.options.command_capacity.max(1) {
            let Ok(command) = self.sources.remote.try_recv() else {
                break;
            };
            command(&mut self.machine.driven, now);
            self.drain();
        }
        if self.sources.tasks.has_ready()
            || !self.sources.local.is_empty()
            || !self.sources.remote.is_empty()
        {
            self.sources.wake.signal();
        }
    }

    /// Moves every pending transmit of the machine into `pending`, one line each.
    fn drain(&mut self) {
        self.machine.drain(&mut self.pending);
        if !self.output_open {
            self.pending.clear();
            self.written = 0;
            self.batch_end = 0;
        }
    }

    /// Writes pending output until it is all written or the pipe is full.
    fn flush(&mut self) {
        if self.written >= self.batch_end {
            self.batch_end = self.pending.len();
        }
        while self.output_open && self.written < self.pending.len() {
            match rustix::io::write(self.output, &self.pending[self.written..]) {
                Ok(n) => self.written += n,
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => break,
                Err(error) => {
                    self.output_open = false;
                    self.pending.clear();
                    self.written = 0;
                    self.batch_end = 0;
                    self.output_error = Some(error.into());
                    // Nothing can answer the peer any more: stop reading it too.
                    self.input_open = false;
                    self.machine.transport_gone(Instant::now());
                }
            }
        }
        if self.written == self.pending.len() {
            self.pending.clear();
            self.written = 0;
            self.batch_end = 0;
        } else if self.written >= COMPACT_AT && self.written * 2 >= self.pending.len() {
            // At most half the buffer moves, so compaction stays linear in the bytes written.
            self.pending.drain(..self.written);
            self.batch_end -= self.written.min(self.batch_end);
            self.written = 0;
        }
    }

    /// Sleeps until input, room to write, a wake-up or the deadline; handles the input.
    fn wait(&mut self, now: Instant, deadline: Option<Instant>) {
        let want_read = self.input_open
            && !self.machine.backlog
            && !self.machine.driven.is_closed()
            && self.queued() < self.options.output_high_water;
        let want_write = self.unwritten() > 0;
        let wake = Arc::clone(&self.sources.wake);
        if !wake.begin_sleep() {
            wake.end_sleep();
            return;
        }
        let only_input = want_read
            && !want_write
            && deadline.is_none()
            && self.input_blocks
            && self.sources.tasks.live() == 0
            && !self.sources.foreground.is_live()
            && self.sources.remote.sender_count() == 0;
        if only_input {
            wake.end_sleep();
            self.read();
            return;
        }
        // The wake-up first, then the input and the output only when wanted.
        let mut fds = [
            PollFd::from_borrowed_fd(wake.fd(), PollFlags::IN),
            PollFd::from_borrowed_fd(wake.fd(), PollFlags::IN),
            PollFd::from_borrowed_fd(wake.fd(), PollFlags::IN),
        ];
        let mut used = 1;
        if want_read {
            fds[used] = PollFd::from_borrowed_fd(self.input, PollFlags::IN);
            used += 1;
        }
        if want_write {
            fds[used] = PollFd::from_borrowed_fd(self.output, PollFlags::OUT);
            used += 1;
        }
        let timeout = deadline.map(|at| {
            let wait = at.saturating_duration_since(now).min(MAX_SLEEP);
            Timespec::try_from(wait).unwrap_or_default()
        });
        let polled = poll(&mut fds[..used], timeout.as_ref());
        wake.end_sleep();
        match polled {
            Ok(_) => {}
            Err(Errno::INTR) => return,
            Err(error) => {
                self.fail_input(error.into());
                return;
            }
        }
        if !fds[0].revents().is_empty() {
            wake.clear();
        }
        if want_read && !fds[1].revents().is_empty() {
            // Readable, hung up or failed: the read tells which.
            self.read();
        }
    }

    /// One read of the input; every complete line goes to the machine.
    fn read(&mut self) {
        let out = Out {
            buf: &mut self.pending,
            counted_from: self.batch_end,
            high_water: self.options.output_high_water,
        };
        match rustix::io::read(self.input, &mut self.scratch[..]) {
            Ok(0) => {
                self.input_open = false;
                self.machine.handle_input_end(Instant::now(), out);
            }
            Ok(n) => {
                let now = Instant::now();
                self.machine.handle_bytes(now, &self.scratch[..n], out);
            }
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => self.input_blocks = false,
            Err(error) => self.fail_input(error.into()),
        }
    }

    fn fail_input(&mut self, error: io::Error) {
        self.input_open = false;
        self.input_error = Some(error);
        self.machine.transport_gone(Instant::now());
    }

    /// Feeds lines held back at the high-water mark.
    fn feed_buffered(&mut self, now: Instant) {
        let out = Out {
            buf: &mut self.pending,
            counted_from: self.batch_end,
            high_water: self.options.output_high_water,
        };
        self.machine.feed_buffered(now, out);
    }
}
