//! The exchanges in flight of one client loop, as futures in a set the loop polls itself (no
//! task and no channel per exchange), and the queue their inputs go to.
//!
//! An exchange future performs its request and queues what it learns (head, body chunks, end
//! or failure) on the shared [`Inputs`]; the loop polls the set once per wake-up, then takes
//! every queued input. A finished exchange leaves the set by itself; an aborted one is
//! dropped at once (its connection and body with it).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use futures_util::stream::{FuturesUnordered, StreamExt};

use super::exchange::Input;

/// Inputs queued at most; past it, a streaming exchange waits for the loop (backpressure).
const INPUT_QUEUE: usize = 1024;

/// The inputs the exchanges queued for the loop.
#[derive(Default)]
pub(crate) struct Inputs {
    queue: RefCell<VecDeque<Input>>,
}

impl Inputs {
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
    /// it (aborts are rare: a cancelled call, a closing session), out of line.
    #[cold]
    #[inline(never)]
    pub(crate) fn abort(&mut self, key: u64) {
        let old = std::mem::take(&mut self.set);
        for entry in old {
            if entry.key != key {
                self.set.push(entry);
            }
        }
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
