//! Polling a client loop again at once when it woke itself while being polled.
//!
//! A loop wakes itself on most turns: an exchange hands the loop its answer, the application
//! queues its next call and rings the doorbell, a request wakes hyper's connection task. Under
//! `smol::block_on` (async-io) a wake that arrives during the poll makes the thread turn the
//! reactor without blocking before it polls again: five syscalls (the timerfd set and re-armed,
//! `epoll_pwait`, the notifier's read and re-arm) and the reactor's timer bookkeeping, for
//! work the next poll does anyway. [`Repoll`] notes such a wake and polls again itself; a wake
//! from outside a poll (the reactor, another thread) goes to the caller's waker as before.
//! After [`MAX_REPOLLS`] polls in a row it hands the wake on, so a future that keeps waking
//! itself still lets I/O be processed.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

/// Polls in a row of one `poll` call at most, before the wake is handed to the caller.
pub(crate) const MAX_REPOLLS: u32 = 16;

/// No poll of the inner future under way.
const IDLE: u8 = 0;
/// The inner future is being polled; no wake yet.
const POLLING: u8 = 1;
/// The inner future woke itself (or was woken) during the poll under way.
const WOKEN: u8 = 2;

/// The inner future's waker: marks a wake during a poll, forwards any other.
struct Hook {
    state: AtomicU8,
    outer: AtomicWaker,
}

impl Wake for Hook {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // During a poll the poller sees `WOKEN` and polls again: no need to wake anyone.
        match self
            .state
            .compare_exchange(POLLING, WOKEN, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) | Err(WOKEN) => {}
            Err(_) => self.outer.wake(),
        }
    }
}

/// `inner`, polled again at once (up to [`MAX_REPOLLS`] times) when it woke itself.
pub(crate) struct Repoll<F> {
    inner: Pin<Box<F>>,
    hook: Arc<Hook>,
    waker: Waker,
}

impl<F: Future> Repoll<F> {
    pub(crate) fn new(inner: F) -> Self {
        let hook = Arc::new(Hook {
            state: AtomicU8::new(IDLE),
            outer: AtomicWaker::new(),
        });
        Repoll {
            inner: Box::pin(inner),
            waker: Waker::from(hook.clone()),
            hook,
        }
    }
}

impl<F: Future> Future for Repoll<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        // Registered first: a wake after the last look below still reaches the caller.
        this.hook.outer.register(cx.waker());
        let mut inner_cx = Context::from_waker(&this.waker);
        for _ in 0..MAX_REPOLLS {
            this.hook.state.store(POLLING, Ordering::Release);
            let polled = this.inner.as_mut().poll(&mut inner_cx);
            let state = this.hook.state.swap(IDLE, Ordering::AcqRel);
            if polled.is_ready() {
                return polled;
            }
            if state != WOKEN {
                return Poll::Pending;
            }
        }
        // Still waking itself: let the caller run (turn the reactor), then poll again.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Wakes itself `wakes` times, counting its polls, then finishes.
    struct SelfWaking {
        wakes: usize,
        polls: Arc<AtomicUsize>,
    }

    impl Future for SelfWaking {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.polls.fetch_add(1, Ordering::Relaxed);
            if self.wakes == 0 {
                return Poll::Ready(());
            }
            self.wakes -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    /// Counts the wakes of the outer waker.
    struct Counter(AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn outer() -> (Arc<Counter>, Waker) {
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        let waker = Waker::from(counter.clone());
        (counter, waker)
    }

    #[test]
    fn self_wakes_are_polled_again_without_waking_the_caller() {
        let polls = Arc::new(AtomicUsize::new(0));
        let mut future = Repoll::new(SelfWaking {
            wakes: 5,
            polls: polls.clone(),
        });
        let (woken, waker) = outer();
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut future).poll(&mut cx).is_ready());
        assert_eq!(polls.load(Ordering::Relaxed), 6);
        assert_eq!(woken.0.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_future_that_keeps_waking_itself_yields_to_the_caller() {
        let polls = Arc::new(AtomicUsize::new(0));
        let wakes = MAX_REPOLLS as usize + 3;
        let mut future = Repoll::new(SelfWaking {
            wakes,
            polls: polls.clone(),
        });
        let (woken, waker) = outer();
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut future).poll(&mut cx).is_pending());
        assert_eq!(polls.load(Ordering::Relaxed), MAX_REPOLLS as usize);
        // Handed on: the caller polls again.
        assert_eq!(woken.0.load(Ordering::Relaxed), 1);
        assert!(Pin::new(&mut future).poll(&mut cx).is_ready());
        assert_eq!(polls.load(Ordering::Relaxed), wakes + 1);
    }

    #[test]
    fn a_wake_outside_a_poll_reaches_the_caller() {
        let parked: Arc<std::sync::Mutex<Option<Waker>>> = Arc::default();
        let keep = parked.clone();
        let mut future = Repoll::new(std::future::poll_fn(move |cx| {
            *keep.lock().unwrap() = Some(cx.waker().clone());
            Poll::<()>::Pending
        }));
        let (woken, waker) = outer();
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut future).poll(&mut cx).is_pending());
        assert_eq!(woken.0.load(Ordering::Relaxed), 0);
        let inner = parked.lock().unwrap().take().unwrap();
        std::thread::spawn(move || inner.wake()).join().unwrap();
        assert_eq!(woken.0.load(Ordering::Relaxed), 1);
    }
}
