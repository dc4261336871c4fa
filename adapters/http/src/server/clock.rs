//! The server thread's clock, read at most once per wake-up of the thread.
//!
//! Every exchange needs the time several times: the end of a request (the keep-alive
//! timeout counts from it), hyper's header-read deadline, the endpoint's `now`. While
//! [`PerWake`] polls the server's executor, the first [`now`] of a wake-up reads the clock
//! and the later ones reuse that reading: the tasks of one wake-up run within microseconds,
//! and every deadline here is counted in seconds. Outside it (a caller driving `run_on` on
//! its own executor, a drop after `run` returned) [`now`] reads the clock every time.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

/// The state of this thread's reading.
#[derive(Clone, Copy)]
enum Reading {
    /// Not inside [`PerWake`]: every [`now`] reads the clock.
    Off,
    /// Inside a poll of [`PerWake`], not read yet.
    Unread,
    /// Read during this poll.
    Read(Instant),
}

thread_local! {
    static READING: Cell<Reading> = const { Cell::new(Reading::Off) };
}

/// The time of this wake-up of the server thread (see the module header).
pub(crate) fn now() -> Instant {
    READING.with(|reading| match reading.get() {
        Reading::Read(at) => at,
        Reading::Unread => {
            let at = Instant::now();
            reading.set(Reading::Read(at));
            at
        }
        Reading::Off => Instant::now(),
    })
}

/// Polls `F` with one clock reading per poll for everything it runs.
pub(crate) struct PerWake<F>(pub(crate) F);

impl<F: Future + Unpin> Future for PerWake<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let outer = READING.with(|reading| reading.replace(Reading::Unread));
        let polled = Pin::new(&mut self.0).poll(cx);
        READING.with(|reading| reading.set(outer));
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inside one poll the reading is taken once and reused; the next poll reads again;
    /// outside, every call reads the clock.
    #[test]
    fn one_reading_per_poll() {
        let mut polls = 0;
        let mut seen = Vec::new();
        let waiting = std::future::poll_fn(|cx| {
            let first = now();
            std::thread::sleep(std::time::Duration::from_millis(2));
            assert_eq!(now(), first, "the same reading within a poll");
            seen.push(first);
            polls += 1;
            if polls < 2 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(())
        });
        smol::block_on(PerWake(Box::pin(waiting)));
        assert!(seen[1] > seen[0], "a new reading per poll");
        let outside = now();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(now() > outside, "outside a poll, the clock itself");
    }
}
