//! A timer whose pending polls cost an atomic load: no clock reading, no reactor call.
//!
//! An `async_io::Timer` reads the clock on every poll. The connection code polls its
//! timers (keep-alive, header read) on nearly every wake-up of its task, while they fire
//! once in seconds. [`Alarm`] registers the timer with a waker of its own that records the
//! firing before it wakes the task: until then a poll from the same task only loads that
//! flag. Once it rang (or another task polls) the timer itself is polled.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use smol::Timer;

/// A re-armable timer (see the module header).
pub(crate) struct Alarm {
    timer: Timer,
    /// The waker the timer is registered with, once polled.
    bell: Option<(Arc<Bell>, Waker)>,
    /// Set anew: the next poll asks the timer (a timer that fired is registered again only
    /// when polled).
    reset: bool,
}

/// Records that the timer fired, then wakes the task that polled it.
struct Bell {
    rang: AtomicBool,
    task: Waker,
}

impl Wake for Bell {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.rang.store(true, Ordering::Release);
        self.task.wake_by_ref();
    }
}

impl Alarm {
    /// An alarm that rings at `at`.
    pub(crate) fn at(at: Instant) -> Self {
        Alarm {
            timer: Timer::at(at),
            bell: None,
            reset: true,
        }
    }

    /// Rings at `at` instead (a call to the reactor: keep it rare).
    pub(crate) fn set_at(&mut self, at: Instant) {
        self.timer.set_at(at);
        self.reset = true;
    }

    /// Ready once the time set passed.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let bell = match &self.bell {
            Some((bell, waker)) if bell.task.will_wake(cx.waker()) => {
                if !self.reset && !bell.rang.load(Ordering::Acquire) {
                    return Poll::Pending;
                }
                bell.rang.store(false, Ordering::Relaxed);
                waker.clone()
            }
            _ => {
                let bell = Arc::new(Bell {
                    rang: AtomicBool::new(false),
                    task: cx.waker().clone(),
                });
                let waker = Waker::from(bell.clone());
                self.bell = Some((bell, waker.clone()));
                waker
            }
        };
        self.reset = false;
        // Rang (perhaps for a time set before a later `set_at`), or a first poll: the timer
        // itself says, and registers the bell again if not due.
        let mut cx = Context::from_waker(&bell);
        Pin::new(&mut self.timer).poll(&mut cx).map(|_| ())
    }
}
