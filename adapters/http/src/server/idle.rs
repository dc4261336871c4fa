//! The keep-alive timeout of one connection: which requests are in flight (from the head
//! handed to the service until hyper drops the response body), since when none is, and the
//! timer that closes the connection once none has been for the timeout.
//!
//! Per exchange this costs two counter updates and the wake-up's clock reading
//! (`super::clock`): the timer is polled only while no request is in flight, and a poll
//! before it fires loads a flag (`super::alarm`).

use std::cell::Cell;
use std::convert::Infallible;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};

use super::alarm::Alarm;
use super::body::ResponseBody;
use super::clock;

/// The requests in flight on one connection, shared by its service and its idle watch.
#[derive(Clone)]
pub(crate) struct Busy(Rc<BusyState>);

struct BusyState {
    in_flight: Cell<usize>,
    /// When the last request in flight ended (or the connection opened).
    idle_since: Cell<Instant>,
}

impl Busy {
    pub(crate) fn new(now: Instant) -> Self {
        Busy(Rc::new(BusyState {
            in_flight: Cell::new(0),
            idle_since: Cell::new(now),
        }))
    }

    /// A request starts; it ends when the guard is dropped.
    pub(crate) fn enter(&self) -> InFlight {
        self.0.in_flight.set(self.0.in_flight.get() + 1);
        InFlight(self.0.clone())
    }

    /// When the connection became idle, or `None` while a request is in flight.
    pub(crate) fn idle_since(&self) -> Option<Instant> {
        (self.0.in_flight.get() == 0).then(|| self.0.idle_since.get())
    }
}

/// One request in flight (see [`Busy::enter`]).
pub(crate) struct InFlight(Rc<BusyState>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let left = self.0.in_flight.get().saturating_sub(1);
        self.0.in_flight.set(left);
        if left == 0 {
            self.0.idle_since.set(clock::now());
        }
    }
}

/// A response body that keeps its request in flight until hyper drops it (written whole, or
/// the connection gone).
pub(crate) struct TrackedBody {
    body: ResponseBody,
    _request: InFlight,
}

impl TrackedBody {
    pub(crate) fn new(body: ResponseBody, request: InFlight) -> Self {
        TrackedBody {
            body,
            _request: request,
        }
    }
}

impl hyper::body::Body for TrackedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Fires once the connection has had no request in flight for `after`. One timer per
/// connection, re-armed only when it fires early (a request came and went meanwhile, or one
/// was in flight), not per request.
pub(crate) struct IdleWatch {
    after: Duration,
    busy: Busy,
    timer: Alarm,
}

impl IdleWatch {
    pub(crate) fn new(after: Duration, busy: Busy) -> Self {
        let since = busy.idle_since().unwrap_or_else(clock::now);
        IdleWatch {
            after,
            busy,
            timer: Alarm::at(since + after),
        }
    }

    /// Ready once the keep-alive timeout passed with no request in flight. Not even polled
    /// while a request is in flight: the request's end wakes the connection's task (hyper
    /// drops the body there), which polls this again. A timer that fired meanwhile is seen
    /// then.
    pub(crate) fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.busy.idle_since().is_none() {
            return Poll::Pending;
        }
        // Bounded: each round either waits or re-arms to a later deadline.
        for _ in 0..3 {
            if self.timer.poll(cx).is_pending() {
                return Poll::Pending;
            }
            let now = Instant::now();
            let next = match self.busy.idle_since() {
                Some(since) if since + self.after <= now => return Poll::Ready(()),
                Some(since) => since + self.after,
                // In flight: look again a timeout later (the request may end any time).
                None => now + self.after,
            };
            self.timer.set_at(next);
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
