//! The wake hook of a client loop: the app `Client`'s handles ring it (from any thread) when
//! they pushed work, and the loop's wait returns. Rings before the wait are kept (one flag),
//! so none is lost; many rings between two waits cost one wake-up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

/// A flag and the loop's waker.
#[derive(Default)]
pub(crate) struct Doorbell {
    rung: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Doorbell {
    /// Sets the flag and wakes the loop (once until it looks).
    pub(crate) fn ring(&self) {
        if self.rung.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Ok(waker) = self.waker.lock() {
            if let Some(waker) = waker.as_ref() {
                waker.wake_by_ref();
            }
        }
    }

    /// Ready (and clears the flag) when rung since the last time; otherwise keeps `cx`'s
    /// waker for the next ring.
    pub(crate) fn poll_rung(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.rung.swap(false, Ordering::AcqRel) {
            return Poll::Ready(());
        }
        if let Ok(mut waker) = self.waker.lock() {
            if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *waker = Some(cx.waker().clone());
            }
        }
        // A ring between the first look and storing the waker woke nobody: look again.
        if self.rung.swap(false, Ordering::AcqRel) {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}
