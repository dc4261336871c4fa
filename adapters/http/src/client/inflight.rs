//! The exchanges in flight of one client loop, as futures in a set the loop polls itself (no
//! task and no channel per exchange), and the queue their inputs go to.
//!
//! An exchange future performs its request and queues what it learns (head, body chunks, end
//! or failure) on the shared [`Inputs`]; the loop polls the set once per wake-up, then takes
//! every queued input. A finished exchange leaves the set by itself; an aborted one is
//! dropped at once (its connection and body with it).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use futures_util::stream::{FuturesUnordered, StreamExt};

use super::exchange::Input;

/// Inputs queued at most; past it, a streaming exchange waits for the loop (backpressure).
const INPUT_QUEUE: usize = 1024;

/// The inputs the exchanges queued for the loop, and how many exchanges await their answer.
#[derive(Default)]
pub(crate) struct Inputs {
    queue: RefCell<VecDeque<Input>>,
    awaiting: Cell<usize>,
}

/// An exchange counted as awaiting its answer's head, until [`Awaiting::answered`] or drop
/// (a failed or aborted exchange).
pub(crate) struct Awaiting<'a> {
    count: &'a Cell<usize>,
    done: bool,
}

impl Awaiting<'_> {
    /// The answer's head came: no longer counted.
    pub(crate) fn answered(&mut self) {
        if !std::mem::replace(&mut self.done, true) {
            self.count.set(self.count.get().saturating_sub(1));
        }
    }
}

impl Drop for Awaiting<'_> {
    fn drop(&mut self) {
        self.answered();
    }
}

impl Inputs {
    /// Counts an exchange as awaiting its answer while the guard says so.
    pub(crate) fn awaiting(&self) -> Awaiting<'_> {
        self.awaiting.set(self.awaiting.get() + 1);
        Awaiting {
            count: &self.awaiting,
            done: false,
        }
    }

    /// Queues `input`, first waiting while the queue is full.
    pub(crate) async fn send(&self, input: Input) {
        std::future::poll_fn(|cx| {
            if self.queue.borrow().len() < INPUT_QUEUE {
                Poll::Ready(())
            } else {
                // The set yields to the loop when a future wakes itself: the loop drains.
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        })
        .await;
        self.queue.borrow_mut().push_back(input);
    }
}

/// One exchange: its key (the core's exchange or request number) and its future.
struct Entry {
    key: u64,
    future: Pin<Box<dyn Future<Output = ()>>>,
}

impl Future for Entry {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.future.as_mut().poll(cx)
    }
}

/// The exchanges in flight and their input queue.
pub(crate) struct InFlight {
    set: FuturesUnordered<Entry>,
    inputs: Rc<Inputs>,
}

impl InFlight {
    pub(crate) fn new() -> Self {
        InFlight {
            set: FuturesUnordered::new(),
            inputs: Rc::default(),
        }
    }

    /// The queue exchange futures report to.
    pub(crate) fn inputs(&self) -> Rc<Inputs> {
        self.inputs.clone()
    }

    /// Adds exchange `key`; it is first polled by the next [`InFlight::poll_input`].
    pub(crate) fn start(&mut self, key: u64, future: impl Future<Output = ()> + 'static) {
        self.set.push(Entry {
            key,
            future: Box::pin(future),
        });
    }

    /// Drops exchange `key` now. The set cannot remove one member, so it is rebuilt without
    /// it (aborts are rare: a cancelled call, a closing session).
    pub(crate) fn abort(&mut self, key: u64) {
        let old = std::mem::take(&mut self.set);
        for entry in old {
            if entry.key != key {
                self.set.push(entry);
            }
        }
    }

    /// Exchanges in flight that have not had their answer's head yet (a standing GET stream
    /// that already answered is not one).
    pub(crate) fn awaiting_answers(&self) -> usize {
        self.inputs.awaiting.get()
    }

    /// Drops every exchange.
    pub(crate) fn clear(&mut self) {
        self.set.clear();
    }

    /// Polls the exchanges that were woken, then hands out the first queued input; pending
    /// (woken again by any exchange) when none is queued.
    pub(crate) fn poll_input(&mut self, cx: &mut Context<'_>) -> Poll<Input> {
        // Ready(Some) per finished exchange; Pending once none is ready (the set yields on
        // its own after polling each member once); Ready(None) when empty.
        while let Poll::Ready(Some(())) = self.set.poll_next_unpin(cx) {}
        match self.try_input() {
            Some(input) => Poll::Ready(input),
            None => Poll::Pending,
        }
    }

    /// The next queued input, without polling.
    pub(crate) fn try_input(&mut self) -> Option<Input> {
        self.inputs.queue.borrow_mut().pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Waker;

    /// Counted from its first poll until it is answered, fails or is dropped.
    #[test]
    fn exchanges_count_as_awaiting_until_answered_or_dropped() {
        let mut inflight = InFlight::new();
        let mut cx = Context::from_waker(Waker::noop());
        let answer: Rc<RefCell<Option<Waker>>> = Rc::default();
        let answered = Rc::new(Cell::new(false));
        for key in 1..=3 {
            let inputs = inflight.inputs();
            let (answer, answered) = (answer.clone(), answered.clone());
            inflight.start(key, async move {
                let mut awaiting = inputs.awaiting();
                if key != 1 {
                    return std::future::pending().await;
                }
                // Exchange 1 gets its head once woken (the waker is taken from the slot).
                let mut parked = false;
                std::future::poll_fn(|cx| {
                    if std::mem::replace(&mut parked, true) && answer.borrow().is_none() {
                        return Poll::Ready(());
                    }
                    *answer.borrow_mut() = Some(cx.waker().clone());
                    Poll::Pending
                })
                .await;
                awaiting.answered();
                answered.set(true);
                std::future::pending::<()>().await;
            });
        }
        assert_eq!(inflight.awaiting_answers(), 0, "not polled yet");
        assert!(inflight.poll_input(&mut cx).is_pending());
        assert_eq!(inflight.awaiting_answers(), 3);
        let head = answer.borrow_mut().take().unwrap();
        head.wake();
        assert!(inflight.poll_input(&mut cx).is_pending());
        assert!(answered.get());
        assert_eq!(inflight.awaiting_answers(), 2, "answered (a streaming GET)");
        inflight.abort(2);
        assert_eq!(inflight.awaiting_answers(), 1, "aborted");
        inflight.clear();
        assert_eq!(inflight.awaiting_answers(), 0);
    }
}
