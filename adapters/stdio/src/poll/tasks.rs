//! [`Tasks`]: the poll driver's run queue. Futures spawned through a [`crate::LoopHandle`] run
//! on the loop thread between reads; a waker (from any thread) pushes the task back on the
//! queue and signals the loop's [`Wake`].
//!
//! Tasks are `async_task` tasks, the same [`smol::Task`] handles the smol driver returns:
//! dropping one cancels it, `detach` lets it run on. When the queue is closed (the driver is
//! gone), a task woken later is leaked rather than dropped on a foreign thread (a `!Send`
//! future must be dropped where it was spawned).

use std::cell::Cell;
use std::collections::VecDeque;
use std::future::Future;
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard};

use async_task::Runnable;
use smol::Task;

use super::wake::Wake;

/// Tasks run per call of [`Tasks::run_ready`], so a task that keeps waking itself cannot keep
/// the loop from reading and writing.
const RUN_BUDGET: usize = 256;

/// The run queue, and whether it still accepts tasks.
#[derive(Default)]
struct Queue {
    ready: VecDeque<Runnable>,
    closed: bool,
}

/// The poll driver's local executor.
pub(crate) struct Tasks {
    queue: Arc<Mutex<Queue>>,
    wake: Arc<Wake>,
    /// Spawned and not yet finished or dropped: while any is, the loop polls its wake-up.
    live: Rc<Cell<usize>>,
}

/// Counts a task as live until its future completes or is dropped.
struct LiveGuard(Rc<Cell<usize>>);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

fn lock(queue: &Mutex<Queue>) -> MutexGuard<'_, Queue> {
    queue
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Tasks {
    pub(crate) fn new(wake: Arc<Wake>) -> Self {
        Self {
            queue: Arc::default(),
            wake,
            live: Rc::new(Cell::new(0)),
        }
    }

    /// Spawns `future`; it first runs at the loop's next turn.
    pub(crate) fn spawn<T: 'static>(&self, future: impl Future<Output = T> + 'static) -> Task<T> {
        self.live.set(self.live.get() + 1);
        let guard = LiveGuard(Rc::clone(&self.live));
        let future = async move {
            let _guard = guard;
            future.await
        };
        let queue = Arc::clone(&self.queue);
        let wake = Arc::clone(&self.wake);
        let schedule = move |runnable: Runnable| {
            let mut queue = lock(&queue);
            if queue.closed {
                std::mem::forget(runnable);
                return;
            }
            queue.ready.push_back(runnable);
            drop(queue);
            wake.signal();
        };
        let (runnable, task) = async_task::spawn_local(future, schedule);
        runnable.schedule();
        task
    }

    /// Runs the queued tasks (at most [`RUN_BUDGET`]).
    pub(crate) fn run_ready(&self) {
        for _ in 0..RUN_BUDGET {
            let Some(runnable) = lock(&self.queue).ready.pop_front() else {
                return;
            };
            runnable.run();
        }
    }

    /// A task is queued to run.
    pub(crate) fn has_ready(&self) -> bool {
        !lock(&self.queue).ready.is_empty()
    }

    /// Tasks spawned and not finished.
    pub(crate) fn live(&self) -> usize {
        self.live.get()
    }
}

impl Drop for Tasks {
    /// Cancels the queued tasks here, on the loop thread, and refuses later wake-ups.
    fn drop(&mut self) {
        let ready = {
            let mut queue = lock(&self.queue);
            queue.closed = true;
            std::mem::take(&mut queue.ready)
        };
        drop(ready);
    }
}
