//! Requests handed to the core endpoint in batches: a connection task parks its request here
//! and yields once; the first of the parked tasks to run again hands every parked request to
//! the endpoint, one after the other, and each task takes its own response.
//!
//! Why: with many requests in flight, handling each one from parse to write in one go runs
//! hyper's parser, the adapter, the endpoint, the session, the application and hyper's writer
//! for every request: far more code than the CPU's instruction cache holds, so every request
//! fetches most of it again. Split in three (hyper reads every ready request, the endpoint
//! handles them all, hyper writes every answer), each part runs for a whole batch, so what of
//! its code the cache holds serves every request of the batch (measured with echo at 64 in
//! flight against the bare hyper floor: docs/benchmarks.md). With one
//! request in flight a batch is one request, and the cost is one extra poll of its task.
//!
//! The slots live in one table reused for the server's life: no allocation per request. An
//! HTTP/1.1 connection has one request in hand at a time, so the table holds at most one slot
//! per open connection (bounded by `HttpServerOptions::max_connections`).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use bytes::Bytes;
use mcp_sansio::http::{HttpRequestHead, HttpResponse};

use super::clock;
use super::shared::Shared;

/// What the endpoint takes for one request (see `Router::handle_request`).
pub(crate) struct Parked {
    pub(crate) head: HttpRequestHead,
    pub(crate) body: Bytes,
    pub(crate) random: [u8; 16],
}

/// One slot of the table. A parked request is held inline (not boxed): the slots are reused,
/// so a request costs no allocation here.
enum Slot {
    Free,
    Parked(Parked),
    Answered(HttpResponse),
}

/// The parked requests of one server, shared by its connection tasks.
#[derive(Default)]
pub(crate) struct Staging {
    slots: Vec<Slot>,
    /// Indexes of free slots.
    free: Vec<usize>,
    /// Indexes of parked requests, in arrival order.
    queue: Vec<usize>,
}

impl Staging {
    /// Parks `request`; returns its slot.
    fn park(&mut self, request: Parked) -> usize {
        let index = match self.free.pop() {
            Some(index) => {
                self.slots[index] = Slot::Parked(request);
                index
            }
            None => {
                self.slots.push(Slot::Parked(request));
                self.slots.len() - 1
            }
        };
        self.queue.push(index);
        index
    }

    /// The answer of slot `index`, once answered (the slot is freed).
    fn take_answer(&mut self, index: usize) -> Option<HttpResponse> {
        let Some(Slot::Answered(response)) =
            self.take(index, |slot| matches!(slot, Slot::Answered(_)))
        else {
            return None;
        };
        self.free.push(index);
        Some(response)
    }

    /// The request parked in slot `index`, taken to be answered; the slot is not freed, as its
    /// answer goes there. `None` when the slot holds no parked request.
    fn take_parked(&mut self, index: usize) -> Option<Parked> {
        match self.take(index, |slot| matches!(slot, Slot::Parked(_)))? {
            Slot::Parked(parked) => Some(parked),
            _ => None,
        }
    }

    /// The content of slot `index` if `wanted` accepts it (else the slot stays as it was).
    /// The slot is left `Free` but not listed free: the caller says what it becomes.
    fn take(&mut self, index: usize, wanted: impl FnOnce(&Slot) -> bool) -> Option<Slot> {
        let slot = &mut self.slots[index];
        wanted(slot).then(|| std::mem::replace(slot, Slot::Free))
    }

    /// Frees slot `index` whatever it holds (its task is gone); a parked request leaves the
    /// queue unhandled.
    fn release(&mut self, index: usize) {
        if let Slot::Parked(_) = std::mem::replace(&mut self.slots[index], Slot::Free) {
            self.queue.retain(|&queued| queued != index);
        }
        self.free.push(index);
    }
}

/// Hands `request` to the endpoint in the next batch and returns its response.
pub(crate) fn handle(
    shared: &Shared,
    staging: &Rc<RefCell<Staging>>,
    request: Parked,
) -> Turn<impl FnMut(&RefCell<Staging>) + Unpin> {
    let shared = shared.clone();
    Turn::new(staging, request, move |staging: &RefCell<Staging>| {
        run_batch(&shared, staging)
    })
}

/// The future of one staged request (see the module header); `batch` answers every parked
/// request.
pub(crate) struct Turn<B> {
    batch: B,
    staging: Rc<RefCell<Staging>>,
    state: TurnState,
}

/// Where a turn's request is.
enum TurnState {
    /// Not yet parked (before the first poll).
    Unparked(Parked),
    /// Parked in this slot, until its answer is taken.
    Parked(usize),
    /// Answered and returned.
    Done,
}

impl<B> Turn<B> {
    fn new(staging: &Rc<RefCell<Staging>>, request: Parked, batch: B) -> Self {
        Turn {
            batch,
            staging: staging.clone(),
            state: TurnState::Unparked(request),
        }
    }
}

impl<B: FnMut(&RefCell<Staging>) + Unpin> Future for Turn<B> {
    type Output = HttpResponse;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<HttpResponse> {
        let this = self.get_mut();
        let slot = match std::mem::replace(&mut this.state, TurnState::Done) {
            TurnState::Parked(slot) => slot,
            TurnState::Unparked(request) => {
                this.state = TurnState::Parked(this.staging.borrow_mut().park(request));
                // Back of the executor's queue: the tasks already woken read their requests
                // first.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            TurnState::Done => panic!("a staged turn polled after it returned its answer"),
        };
        let mut answered = this.staging.borrow_mut().take_answer(slot);
        if answered.is_none() {
            (this.batch)(&this.staging);
            answered = this.staging.borrow_mut().take_answer(slot);
        }
        // Always answered after a batch: it answers every parked request, this one included.
        // Were it not, the task runs again rather than waiting for a wake-up that never comes.
        let Some(response) = answered else {
            this.state = TurnState::Parked(slot);
            cx.waker().wake_by_ref();
            return Poll::Pending;
        };
        Poll::Ready(response)
    }
}

impl<B> Drop for Turn<B> {
    fn drop(&mut self) {
        if let TurnState::Parked(slot) = self.state {
            // A dropped future (its connection closed) has its request left unhandled.
            if let Ok(mut staging) = self.staging.try_borrow_mut() {
                staging.release(slot);
            }
        }
    }
}

/// Hands every parked request to the endpoint, in arrival order, and stores the answers;
/// then settles once for the whole batch (jobs started, bodies woken, driver kicked: see
/// `Shared::settle`), before any of the answers goes out.
fn run_batch(shared: &Shared, staging: &RefCell<Staging>) {
    let now = clock::now();
    answer_all(staging, |parked| {
        shared.unsettled(|core| {
            core.endpoint
                .handle_request(now, &parked.head, parked.body, parked.random)
        })
    });
    shared.settle();
}

/// Answers every parked request with `answer`, in arrival order. `staging` is not borrowed
/// while `answer` runs (a handler may park or release other slots meanwhile).
fn answer_all(staging: &RefCell<Staging>, mut answer: impl FnMut(Parked) -> HttpResponse) {
    let queue = std::mem::take(&mut staging.borrow_mut().queue);
    for &index in &queue {
        // A slot released since it was queued no longer holds its request.
        let Some(parked) = staging.borrow_mut().take_parked(index) else {
            continue;
        };
        let response = answer(parked);
        staging.borrow_mut().slots[index] = Slot::Answered(response);
    }
    // The queue's room is kept for the next batch (unless requests parked meanwhile).
    let mut emptied = queue;
    emptied.clear();
    let mut staging = staging.borrow_mut();
    if staging.queue.is_empty() {
        staging.queue = emptied;
    }
}

#[cfg(test)]
mod tests {
    use mcp_sansio::http::{Body, HttpMethod};

    use super::*;

    fn parked(path: &str) -> Parked {
        Parked {
            head: HttpRequestHead::new(HttpMethod::Post, path),
            body: Bytes::copy_from_slice(path.as_bytes()),
            random: [0; 16],
        }
    }

    /// The answer names the request it answers (its body).
    fn echo(parked: Parked) -> HttpResponse {
        HttpResponse {
            status: 200,
            headers: Vec::new(),
            body: Body::Full(parked.body),
        }
    }

    /// A turn whose batches do nothing (the test answers by hand).
    fn park_only(
        staging: &Rc<RefCell<Staging>>,
        request: Parked,
    ) -> Turn<impl FnMut(&RefCell<Staging>) + Unpin> {
        Turn::new(staging, request, |_: &RefCell<Staging>| {})
    }

    fn body_of(response: HttpResponse) -> Bytes {
        match response.body {
            Body::Full(bytes) => bytes,
            _ => panic!("not a full body"),
        }
    }

    /// A batch answers every parked request in arrival order, each in its own slot; a slot is
    /// reused once its answer is taken, and nothing is answered twice.
    #[test]
    fn a_batch_answers_every_parked_request_in_order() {
        let staging = RefCell::new(Staging::default());
        let a = staging.borrow_mut().park(parked("/a"));
        let b = staging.borrow_mut().park(parked("/b"));
        assert!(
            staging.borrow_mut().take_answer(a).is_none(),
            "not yet answered"
        );
        let mut order = Vec::new();
        answer_all(&staging, |p| {
            order.push(p.body.clone());
            echo(p)
        });
        assert_eq!(order, [&b"/a"[..], &b"/b"[..]]);
        assert_eq!(body_of(staging.borrow_mut().take_answer(b).unwrap()), "/b");
        assert_eq!(body_of(staging.borrow_mut().take_answer(a).unwrap()), "/a");
        assert!(staging.borrow_mut().take_answer(a).is_none(), "taken once");
        // Freed slots are reused; the next batch holds only the new request.
        let c = staging.borrow_mut().park(parked("/c"));
        assert!(c == a || c == b);
        let mut seen = 0;
        answer_all(&staging, |p| {
            seen += 1;
            echo(p)
        });
        assert_eq!(seen, 1);
        assert_eq!(body_of(staging.borrow_mut().take_answer(c).unwrap()), "/c");
        assert_eq!(staging.borrow().slots.len(), 2, "no slot grown for a reuse");
    }

    /// A request whose task is gone before its batch is never handed to the endpoint; an
    /// answered slot whose task is gone is freed too.
    #[test]
    fn a_released_request_is_not_answered() {
        let staging = RefCell::new(Staging::default());
        let gone = staging.borrow_mut().park(parked("/gone"));
        let kept = staging.borrow_mut().park(parked("/kept"));
        staging.borrow_mut().release(gone);
        let mut seen = Vec::new();
        answer_all(&staging, |p| {
            seen.push(p.body.clone());
            echo(p)
        });
        assert_eq!(seen, [&b"/kept"[..]]);
        staging.borrow_mut().release(kept);
        assert_eq!(staging.borrow().free.len(), 2);
        assert!(staging.borrow().queue.is_empty());
    }

    /// The future parks on its first poll (waking itself, so it runs again after the tasks
    /// already woken) and takes its answer on the next, once a batch answered it; dropped
    /// while parked, it leaves nothing queued.
    #[test]
    fn a_turn_parks_then_takes_its_answer() {
        let staging = Rc::new(RefCell::new(Staging::default()));
        let woken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        struct Count(std::sync::Arc<std::sync::atomic::AtomicUsize>);
        impl std::task::Wake for Count {
            fn wake(self: std::sync::Arc<Self>) {
                self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let waker = std::task::Waker::from(std::sync::Arc::new(Count(woken.clone())));
        let mut cx = Context::from_waker(&waker);
        let mut first = Box::pin(park_only(&staging, parked("/1")));
        let mut second = Box::pin(park_only(&staging, parked("/2")));
        assert!(first.as_mut().poll(&mut cx).is_pending());
        assert!(second.as_mut().poll(&mut cx).is_pending());
        assert_eq!(woken.load(std::sync::atomic::Ordering::Relaxed), 2);
        assert_eq!(staging.borrow().queue.len(), 2);
        drop(second);
        assert_eq!(
            staging.borrow().queue.len(),
            1,
            "a dropped turn leaves the queue"
        );
        answer_all(&staging, echo);
        match first.as_mut().poll(&mut cx) {
            Poll::Ready(response) => assert_eq!(body_of(response), "/1"),
            Poll::Pending => panic!("answered"),
        }
    }
}
