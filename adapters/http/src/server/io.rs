//! hyper's timer trait over smol: one connection's sleeps on one timer (an [`Alarm`]), and
//! hyper's clock readings from the wake-up's one reading (`super::clock`). The TCP stream
//! wrapper both sides use is `crate::tcp_io`.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::{Sleep, Timer};

use super::alarm::Alarm;
use super::clock;

/// hyper's timer for one connection (its header read timeout), on one `async_io::Timer`.
///
/// hyper starts a new header-read sleep for every request of a keep-alive connection and drops
/// it once the head is read. A fresh async-io timer per request would cost a reactor wake-up
/// each time (registering a timer writes the reactor's eventfd). Instead the sleeps of one
/// connection share one timer that is re-armed only when a sleep needs an earlier wake-up:
/// the deadlines grow with each request, so the armed timer fires early at worst, the sleep
/// sees its own deadline not reached and arms the timer for it. hyper reads the clock for
/// each head it waits for; [`ConnTimer::now`] hands it the wake-up's reading.
#[derive(Clone, Default)]
pub(crate) struct ConnTimer(Arc<Mutex<SharedTimer>>);

#[derive(Default)]
struct SharedTimer {
    timer: Option<Alarm>,
    armed: Option<Instant>,
}

impl Timer for ConnTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(clock::now() + duration)
    }

    fn now(&self) -> Instant {
        clock::now()
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(ConnSleep {
            deadline,
            shared: self.0.clone(),
        })
    }
}

struct ConnSleep {
    deadline: Instant,
    shared: Arc<Mutex<SharedTimer>>,
}

impl Future for ConnSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        let Ok(mut shared) = self.shared.lock() else {
            return Poll::Ready(());
        };
        // Twice at most: a timer armed for an earlier sleep may fire first.
        for _ in 0..2 {
            // While the timer is armed for this deadline or an earlier one, only its firing
            // can end the sleep: the clock is read after it fires, not on every poll.
            let armed_in_time = shared.armed.is_some_and(|at| at <= deadline);
            if !armed_in_time {
                if Instant::now() >= deadline {
                    return Poll::Ready(());
                }
                match &mut shared.timer {
                    Some(timer) => timer.set_at(deadline),
                    None => shared.timer = Some(Alarm::at(deadline)),
                }
                shared.armed = Some(deadline);
            }
            let Some(timer) = shared.timer.as_mut() else {
                return Poll::Pending;
            };
            if timer.poll(cx).is_pending() {
                return Poll::Pending;
            }
            shared.armed = None;
        }
        Poll::Ready(())
    }
}

impl Sleep for ConnSleep {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sleep of one connection ends at its own deadline, never at the earlier deadline of a
    /// sleep dropped before it (whose timer stays armed), nor late when an earlier one follows
    /// a later one.
    #[test]
    fn shared_timer_sleeps_end_at_their_own_deadlines() {
        smol::block_on(async {
            let timer = ConnTimer::default();
            let start = Instant::now();
            let ms = |n| start + Duration::from_millis(n);
            // Armed for 40 ms, then dropped unfinished (what hyper does once a head is read).
            let mut first = timer.sleep_until(ms(40));
            let polled = std::future::poll_fn(|cx| Poll::Ready(first.as_mut().poll(cx))).await;
            assert!(polled.is_pending());
            drop(first);
            timer.sleep_until(ms(120)).await;
            assert!(start.elapsed() >= Duration::from_millis(120));
            // A later sleep armed, then an earlier one: the earlier one does not wait for it.
            let mut later = timer.sleep_until(Instant::now() + Duration::from_secs(30));
            let polled = std::future::poll_fn(|cx| Poll::Ready(later.as_mut().poll(cx))).await;
            assert!(polled.is_pending());
            let begun = Instant::now();
            timer.sleep(Duration::from_millis(30)).await;
            let waited = begun.elapsed();
            assert!(waited >= Duration::from_millis(30), "{waited:?}");
            assert!(waited < Duration::from_secs(10), "{waited:?}");
            drop(later);
        });
    }
}
