//! [`PollDriver`]: the stdio loop without an async runtime, for one machine per thread. It
//! reads and writes the descriptors itself and sleeps in `poll(2)` (through `rustix`, already
//! under async-io), so a round trip costs a `read` and a `write` per side plus at most one
//! `poll`, where the smol driver also goes through its reactor (epoll, re-arming, wake-ups).
//!
//! It offers what the smol [`crate::Driver`] offers: a [`LoopHandle`] whose futures run on the
//! loop thread between reads (their wakers may fire on any thread), and a [`Remote`] whose
//! commands wake the loop. Timers and blocking jobs of smol (`smol::Timer`, `smol::unblock`)
//! work inside those futures: their completions wake the loop like any waker.

mod foreground;
mod poll_loop;
mod tasks;
mod wake;

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::rc::Rc;
use std::sync::Arc;

use crate::driven::Driven;
use crate::driver::{DriveOptions, Finished};
use crate::handle::{Channels, Executor, LoopHandle, Remote};
use foreground::Foreground;
pub(crate) use foreground::ForegroundFuture;
use poll_loop::{PollLoop, Sources};
pub(crate) use tasks::Tasks;
use wake::Wake;

/// Drives one machine on the calling thread with blocking reads, non-blocking writes and
/// `poll(2)`. Create it, give its [`LoopHandle`] and [`Remote`] to the machine or the
/// application, then [`PollDriver::run`] it (or [`PollDriver::serve_stdio`],
/// [`crate::ChildProcess::drive_poll`]).
///
/// Compared with the smol [`crate::Driver`]: fewer system calls and no reactor hand-offs per
/// message (see docs/benchmarks.md, "stdio"), but it owns its thread while it runs; use the
/// smol driver to run several machines or other async work on one thread.
pub struct PollDriver<D> {
    tasks: Rc<Tasks>,
    wake: Arc<Wake>,
    channels: Channels<D>,
    options: DriveOptions,
}

impl<D: Driven + 'static> PollDriver<D> {
    /// A driver for the calling thread. Fails only if its wake-up socket pair cannot be made.
    pub fn new(options: DriveOptions) -> io::Result<Self> {
        let wake = Arc::new(Wake::new()?);
        Ok(Self {
            tasks: Rc::new(Tasks::new(Arc::clone(&wake))),
            wake,
            channels: Channels::new(options.command_capacity),
            options,
        })
    }

    /// The options this driver runs with.
    pub fn options(&self) -> &DriveOptions {
        &self.options
    }

    /// Spawns tasks that run on the loop thread while [`PollDriver::run`] runs.
    pub fn handle(&self) -> LoopHandle<D> {
        let executor = Executor::Poll(Rc::clone(&self.tasks));
        self.channels.handle(executor)
    }

    /// Sends commands into the loop from other threads; each one wakes the loop.
    pub fn remote(&self) -> Remote<D> {
        let wake = Arc::clone(&self.wake);
        self.channels.remote(Some(Arc::new(move || wake.signal())))
    }

    /// Drives `driven` over `input` and `output` on this thread until it closes (see
    /// [`crate::EndReason`]). `input` may block; `output` should be non-blocking (a blocking
    /// one works, but a write to a peer that does not read then blocks the loop).
    pub fn run(self, driven: D, input: impl AsFd, output: impl AsFd) -> Finished<D> {
        self.run_with(driven, input.as_fd(), output.as_fd(), None)
    }

    /// [`PollDriver::run`], also polling `foreground` on this thread until it completes (it
    /// keeps the loop from sleeping in a blocking read while it lives).
    pub(crate) fn run_with<'a>(
        self,
        driven: D,
        input: BorrowedFd<'a>,
        output: BorrowedFd<'a>,
        foreground: Option<ForegroundFuture<'a>>,
    ) -> Finished<D> {
        let PollDriver {
            tasks,
            wake,
            channels,
            options,
        } = self;
        // Only handles and remotes keep the queues open: with none left, nothing but input can come.
        let (local_rx, remote_rx) = channels.into_receivers();
        let sources = Sources {
            foreground: Foreground::new(foreground, Arc::clone(&wake)),
            tasks,
            wake,
            local: local_rx,
            remote: remote_rx,
        };
        PollLoop::new(driven, input, output, sources, options).run()
    }

    /// Drives `driven` on this process's stdin and stdout, blocking the calling thread.
    ///
    /// Stdin is read as it is (a blocking read happens only when nothing else can wake the
    /// loop). Stdout, when it is a pipe on Linux, is reopened through `/proc/self/fd/1` with
    /// `O_NONBLOCK` on its own open file description (the parent's end keeps its flags);
    /// anything else is written with blocking writes.
    pub fn serve_stdio(self, driven: D) -> Finished<D> {
        let stdin = io::stdin();
        match crate::stdio::pipe::reopen_file(1) {
            Some(stdout) => self.run(driven, stdin, stdout),
            None => self.run(driven, stdin, io::stdout()),
        }
    }
}

/// Makes `fd` non-blocking or blocking (only for descriptions we own alone: a child's pipes).
pub(crate) fn set_nonblocking(fd: impl AsFd, nonblocking: bool) -> io::Result<()> {
    use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
    let flags = fcntl_getfl(&fd)?;
    let flags = if nonblocking {
        flags | OFlags::NONBLOCK
    } else {
        flags - OFlags::NONBLOCK
    };
    Ok(fcntl_setfl(&fd, flags)?)
}
