//! A handler's panic as an error reply: the future a handler returns runs inside
//! [`CatchPanic`], so a bug in one tool, prompt, resource, sampling or elicitation handler
//! answers its own request with an internal error (-32603) instead of unwinding through the
//! state machine and the driver, and every other request goes on being served. Needs the
//! default `panic = "unwind"`; with `panic = "abort"` the process ends as usual.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::jsonrpc::ErrorObject;

/// What the peer is told: nothing of the panic's message, which may hold internals (the
/// panic hook still prints it where the process's panics go, stderr by default).
pub(crate) const HANDLER_PANICKED: &str = "internal error: the handler panicked";

/// A handler future whose panic becomes `Err(-32603)`. Once it has answered (a value or
/// the panic) its future is dropped, and a poll after that is pending.
pub(crate) struct CatchPanic<F> {
    state: State<F>,
}

enum State<F> {
    Running(F),
    Panicked,
    Answered,
}

impl<F> CatchPanic<F> {
    /// Starts a handler (`start` calls it and returns its future): a panic in the call
    /// itself, as a sync handler runs there, answers like one in a later poll.
    pub(crate) fn start(start: impl FnOnce() -> F) -> Self {
        let state = match catch_unwind(AssertUnwindSafe(start)) {
            Ok(inner) => State::Running(inner),
            Err(_) => State::Panicked,
        };
        CatchPanic { state }
    }
}

impl<F, T> Future for CatchPanic<F>
where
    F: Future<Output = Result<T, ErrorObject>> + Unpin,
{
    type Output = Result<T, ErrorObject>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // `None`: it panicked. The future is dropped then and never polled again, so no
        // broken invariant of it is observed.
        let polled = match &mut self.state {
            State::Running(inner) => {
                catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))).ok()
            }
            State::Panicked => None,
            State::Answered => return Poll::Pending,
        };
        let out = match polled {
            Some(Poll::Pending) => return Poll::Pending,
            Some(Poll::Ready(out)) => out,
            None => Err(ErrorObject::internal(HANDLER_PANICKED)),
        };
        self.state = State::Answered;
        Poll::Ready(out)
    }
}

#[cfg(test)]
mod tests {
    use std::task::Waker;

    use super::*;

    fn poll<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
        Pin::new(f).poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn a_panic_on_any_poll_is_an_internal_error_and_values_pass_through() {
        let mut fine = CatchPanic::start(|| std::future::ready(Ok::<_, ErrorObject>(7)));
        assert!(matches!(poll(&mut fine), Poll::Ready(Ok(7))));

        let mut at_start = CatchPanic::start(|| -> std::future::Ready<Result<(), ErrorObject>> {
            panic!("in the call")
        });
        assert!(matches!(poll(&mut at_start), Poll::Ready(Err(_))));
        assert!(poll(&mut at_start).is_pending(), "answered once");

        let mut polls = 0;
        let mut late = CatchPanic::start(|| {
            std::future::poll_fn(move |_| -> Poll<Result<(), _>> {
                polls += 1;
                if polls == 1 {
                    return Poll::Pending;
                }
                panic!("second poll");
            })
        });
        assert!(poll(&mut late).is_pending());
        let Poll::Ready(Err(e)) = poll(&mut late) else {
            panic!("the panic was not caught");
        };
        assert_eq!(e.code, crate::jsonrpc::code::INTERNAL_ERROR);
        assert_eq!(e.message, HANDLER_PANICKED);
        assert!(poll(&mut late).is_pending(), "answered once");
    }
}
