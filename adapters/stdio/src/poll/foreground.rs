//! [`Foreground`]: one borrowed future the poll loop polls on its own thread, next to its
//! tasks. It lets a caller run its application (e.g. the client code of
//! [`crate::StdioClient`]) on the loop thread without making it `'static`: the loop borrows it
//! for the run, and whatever is left of it when the loop ends stays with the caller.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::wake::Wake;

/// A borrowed future polled by the loop until it completes.
pub(crate) type ForegroundFuture<'a> = Pin<&'a mut (dyn Future<Output = ()> + 'a)>;

/// The future, if any and not finished, and its waker.
pub(crate) struct Foreground<'a> {
    future: Option<ForegroundFuture<'a>>,
    woken: Arc<Woken>,
    waker: Waker,
}

/// Set by the future's waker (any thread); the loop polls the future only when it is set.
struct Woken {
    flag: AtomicBool,
    wake: Arc<Wake>,
}

impl std::task::Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.flag.store(true, SeqCst);
        self.wake.signal();
    }
}

impl<'a> Foreground<'a> {
    /// Polls `future` (if given) at the loop's first turn and whenever it is woken after.
    pub(crate) fn new(future: Option<ForegroundFuture<'a>>, wake: Arc<Wake>) -> Self {
        let woken = Arc::new(Woken {
            flag: AtomicBool::new(false),
            wake,
        });
        let waker = Waker::from(Arc::clone(&woken));
        if future.is_some() {
            waker.wake_by_ref();
        }
        Self {
            future,
            woken,
            waker,
        }
    }

    /// The future has not finished: the loop must not sleep where its waker cannot reach it.
    pub(crate) fn is_live(&self) -> bool {
        self.future.is_some()
    }

    /// Polls the future if it was woken; drops it once it is ready.
    pub(crate) fn run(&mut self) {
        let Some(future) = self.future.as_mut() else {
            return;
        };
        if !self.woken.flag.swap(false, SeqCst) {
            return;
        }
        let mut cx = Context::from_waker(&self.waker);
        if let Poll::Ready(()) = future.as_mut().poll(&mut cx) {
            self.future = None;
        }
    }
}
