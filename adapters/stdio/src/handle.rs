//! Ways for code outside the loop to act on the machine: [`LoopHandle`] runs futures and
//! blocking jobs on the loop's own executor and applies their results to the machine, and
//! [`Remote`] carries commands in from other threads or runtimes.
//!
//! A command is a closure `FnOnce(&mut D, Instant)`: it runs inside the loop with exclusive
//! access to the machine and the current time, and the loop drains the machine's outputs right
//! after it, as the drive-loop contract requires. This is how application handlers, wherever
//! they run, call `respond`, `notify` or `send_request` on the session.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use smol::channel::{Receiver, Sender, TrySendError};
use smol::{LocalExecutor, Task};

#[cfg(unix)]
use crate::poll::Tasks;

/// A command run on the machine inside the loop, sent from any thread.
pub(crate) type RemoteCommand<D> = Box<dyn FnOnce(&mut D, Instant) + Send>;
/// A command run on the machine inside the loop, produced by a task on the loop's executor.
pub(crate) type LocalCommand<D> = Box<dyn FnOnce(&mut D, Instant)>;

/// A loop's two command queues: commands from its own tasks (unbounded: at most one per live
/// task) and from [`Remote`]s (bounded by [`crate::DriveOptions::command_capacity`]).
pub(crate) struct Channels<D> {
    local_tx: Sender<LocalCommand<D>>,
    local_rx: Receiver<LocalCommand<D>>,
    remote_tx: Sender<RemoteCommand<D>>,
    remote_rx: Receiver<RemoteCommand<D>>,
}

impl<D> Channels<D> {
    pub(crate) fn new(command_capacity: usize) -> Self {
        let (local_tx, local_rx) = smol::channel::unbounded();
        let (remote_tx, remote_rx) = smol::channel::bounded(command_capacity.max(1));
        Self {
            local_tx,
            local_rx,
            remote_tx,
            remote_rx,
        }
    }

    /// A handle whose tasks run on `executor` and send their results through these queues.
    pub(crate) fn handle(&self, executor: Executor) -> LoopHandle<D> {
        LoopHandle {
            executor,
            local_tx: self.local_tx.clone(),
        }
    }

    /// A remote sending into these queues; `notify` wakes a loop that does not sleep on them.
    pub(crate) fn remote(&self, notify: Option<Notify>) -> Remote<D> {
        Remote {
            tx: self.remote_tx.clone(),
            notify,
        }
    }

    /// The receiving ends, for the loop. The senders are dropped here: only the clones held by
    /// handles and remotes keep a queue open, so it reports closed once they are all gone.
    pub(crate) fn into_receivers(self) -> (Receiver<LocalCommand<D>>, Receiver<RemoteCommand<D>>) {
        (self.local_rx, self.remote_rx)
    }
}

/// Spawns work on the loop's executor (same thread, concurrently with the loop) and applies
/// its result to the machine. Cloneable, not `Send`: keep it inside the machine or its handlers.
///
/// A slow handler never blocks the loop: while its future waits, the loop keeps reading frames,
/// running timers and other tasks. Dropping the returned [`Task`] cancels the work (use it for
/// `notifications/cancelled`); call [`Task::detach`] to let it run to completion on its own.
pub struct LoopHandle<D> {
    pub(crate) executor: Executor,
    pub(crate) local_tx: Sender<LocalCommand<D>>,
}

/// Where a [`LoopHandle`] runs its futures: the smol driver's executor, or the poll driver's
/// run queue (run by its loop thread between reads).
#[derive(Clone)]
pub(crate) enum Executor {
    Smol(Rc<LocalExecutor<'static>>),
    #[cfg(unix)]
    Poll(Rc<Tasks>),
}

impl Executor {
    fn spawn<T: 'static>(&self, future: impl Future<Output = T> + 'static) -> Task<T> {
        match self {
            Executor::Smol(executor) => executor.spawn(future),
            #[cfg(unix)]
            Executor::Poll(tasks) => tasks.spawn(future),
        }
    }
}

impl<D> Clone for LoopHandle<D> {
    fn clone(&self) -> Self {
        Self {
            executor: self.executor.clone(),
            local_tx: self.local_tx.clone(),
        }
    }
}

impl<D: 'static> LoopHandle<D> {
    /// Runs `future` on the loop's executor. It may be `!Send` and may hold other handles.
    pub fn spawn<T: 'static>(&self, future: impl Future<Output = T> + 'static) -> Task<T> {
        self.executor.spawn(future)
    }

    /// Runs `future` on the loop's executor, then `then(machine, now, output)` inside the loop.
    ///
    /// The typical use is an async request handler: `then` calls `respond` with its output.
    /// If the loop has ended by the time the future finishes, `then` is dropped unrun.
    pub fn spawn_then<T: 'static>(
        &self,
        future: impl Future<Output = T> + 'static,
        then: impl FnOnce(&mut D, Instant, T) + 'static,
    ) -> Task<()> {
        let tx = self.local_tx.clone();
        self.executor.spawn(async move {
            let output = future.await;
            let command: LocalCommand<D> = Box::new(move |machine, now| then(machine, now, output));
            // Unbounded: its length is bounded by the number of live tasks.
            let _ = tx.try_send(command);
        })
    }

    /// Runs the blocking closure `job` on the blocking thread pool, then `then` inside the loop.
    ///
    /// For synchronous handlers that compute or block (file reads, CPU work): the loop thread
    /// never runs them. Dropping the returned task stops waiting for the job; a job already
    /// running on its thread finishes there and its result is discarded.
    pub fn spawn_blocking_then<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
        then: impl FnOnce(&mut D, Instant, T) + 'static,
    ) -> Task<()> {
        self.spawn_then(smol::unblock(job), then)
    }
}

/// Sends commands into a running loop from any thread or runtime. Cloneable and `Send`.
///
/// The queue is bounded ([`crate::DriveOptions::command_capacity`]): [`Remote::send`] waits,
/// [`Remote::send_blocking`] blocks the calling thread, [`Remote::try_send`] refuses when full.
pub struct Remote<D> {
    pub(crate) tx: Sender<RemoteCommand<D>>,
    /// The poll driver's wake-up (its loop sleeps in `poll(2)`, not on the channel).
    pub(crate) notify: Option<Notify>,
}

/// Wakes a loop that does not sleep on the command channel itself.
pub(crate) type Notify = Arc<dyn Fn() + Send + Sync>;

impl<D> Clone for Remote<D> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
            notify: self.notify.clone(),
        }
    }
}

/// Why a command could not be queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteError {
    /// The loop's command queue is full (only from [`Remote::try_send`]).
    Full,
    /// The loop and its driver are gone.
    Closed,
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RemoteError::Full => "the loop's command queue is full",
            RemoteError::Closed => "the loop has ended",
        })
    }
}

impl std::error::Error for RemoteError {}

impl<D: 'static> Remote<D> {
    /// Queues `command`, waiting while the queue is full.
    pub async fn send(
        &self,
        command: impl FnOnce(&mut D, Instant) + Send + 'static,
    ) -> Result<(), RemoteError> {
        let command: RemoteCommand<D> = Box::new(command);
        self.tx
            .send(command)
            .await
            .map_err(|_| RemoteError::Closed)?;
        self.notify();
        Ok(())
    }

    /// Tells a poll driver's loop that a command is queued.
    fn notify(&self) {
        if let Some(notify) = &self.notify {
            notify();
        }
    }

    /// Queues `command`, blocking this thread while the queue is full. Not for async contexts.
    pub fn send_blocking(
        &self,
        command: impl FnOnce(&mut D, Instant) + Send + 'static,
    ) -> Result<(), RemoteError> {
        let command: RemoteCommand<D> = Box::new(command);
        self.tx
            .send_blocking(command)
            .map_err(|_| RemoteError::Closed)?;
        self.notify();
        Ok(())
    }

    /// Queues `command` if there is room.
    pub fn try_send(
        &self,
        command: impl FnOnce(&mut D, Instant) + Send + 'static,
    ) -> Result<(), RemoteError> {
        let command: RemoteCommand<D> = Box::new(command);
        self.tx.try_send(command).map_err(|e| match e {
            TrySendError::Full(_) => RemoteError::Full,
            TrySendError::Closed(_) => RemoteError::Closed,
        })?;
        self.notify();
        Ok(())
    }

    /// Runs `f` on the machine inside the loop and returns its result (e.g. the id
    /// `send_request` assigned). Fails if the loop ends before running it.
    pub async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut D, Instant) -> T + Send + 'static,
    ) -> Result<T, RemoteError> {
        let (reply_tx, reply_rx) = smol::channel::bounded(1);
        self.send(move |machine, now| {
            let _ = reply_tx.try_send(f(machine, now));
        })
        .await?;
        reply_rx.recv().await.map_err(|_| RemoteError::Closed)
    }
}
