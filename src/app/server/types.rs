//! Handler plumbing shared by every registration: the type-erased handler, the `handler` /
//! `sync_handler` setters, and small JSON helpers for wire forms.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::{Map, Value};

use super::context::RequestContext;
use crate::jsonrpc::ErrorObject;
use crate::runtime::{BoxFuture, CatchPanic, HANDLER_PANICKED};

/// A type-erased async handler taking `I` and answering `O`.
pub(crate) type HandlerFn<I, O> =
    Arc<dyn Fn(I, RequestContext) -> BoxFuture<Result<O, ErrorObject>> + Send + Sync + 'static>;

pub(crate) fn boxed<I, O, F, Fut>(f: F) -> HandlerFn<I, O>
where
    F: Fn(I, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ErrorObject>> + Send + 'static,
{
    Arc::new(move |i, ctx| Box::pin(f(i, ctx)))
}

/// A type-erased sync handler: it answers in the call.
type SyncHandlerFn<I, O> =
    Arc<dyn Fn(I, &RequestContext) -> Result<O, ErrorObject> + Send + Sync + 'static>;

/// A registered handler. A sync one is kept as it is, not wrapped in a future: calling it
/// boxes nothing (a `tools/call` of a sync tool is the common request).
pub(crate) enum Handler<I, O> {
    /// Set with `handler`: its future is boxed.
    Async(HandlerFn<I, O>),
    /// Set with `sync_handler`.
    Sync(SyncHandlerFn<I, O>),
}

impl<I, O> Clone for Handler<I, O> {
    fn clone(&self) -> Self {
        match self {
            Handler::Async(f) => Handler::Async(Arc::clone(f)),
            Handler::Sync(f) => Handler::Sync(Arc::clone(f)),
        }
    }
}

impl<I, O> Handler<I, O> {
    /// Starts the handler on `input`; a sync one runs to its end here. A panic in it, now
    /// or in a later poll, is its request's internal error (`CatchPanic`).
    pub(crate) fn call(&self, input: I, ctx: RequestContext) -> CatchPanic<HandlerCall<O>> {
        CatchPanic::start(|| match self {
            Handler::Async(f) => HandlerCall::Running(f(input, ctx)),
            Handler::Sync(f) => HandlerCall::Done(Some(f(input, &ctx))),
        })
    }
}

impl<I, O> Handler<I, O> {
    /// Starts the handler on `input` like [`Handler::call`], a sync one's outcome given as
    /// it is (not as a future to poll): its reply can be sent at once.
    pub(crate) fn start(&self, input: I, ctx: RequestContext) -> Started<O> {
        match self {
            Handler::Sync(f) => Started::Done(
                catch_unwind(AssertUnwindSafe(|| f(input, &ctx)))
                    .unwrap_or_else(|_| Err(ErrorObject::internal(HANDLER_PANICKED))),
            ),
            Handler::Async(_) => Started::Running(self.call(input, ctx)),
        }
    }
}

/// A handler just started: a sync one's outcome, or an async one's future.
pub(crate) enum Started<O> {
    /// The outcome of a sync handler (a panic in it is its request's internal error).
    Done(Result<O, ErrorObject>),
    /// An async handler's future.
    Running(CatchPanic<HandlerCall<O>>),
}

impl<O> Started<O> {
    /// The outcome as a future, whichever way the handler ran.
    pub(crate) fn into_future(self) -> CatchPanic<HandlerCall<O>> {
        match self {
            Started::Done(out) => CatchPanic::start(|| HandlerCall::Done(Some(out))),
            Started::Running(fut) => fut,
        }
    }
}

/// A started handler, as the future of its outcome.
pub(crate) enum HandlerCall<O> {
    /// A sync handler's outcome (taken by the first poll).
    Done(Option<Result<O, ErrorObject>>),
    /// An async handler's future.
    Running(crate::runtime::BoxFuture<Result<O, ErrorObject>>),
}

// Nothing in it is pinned in place: the outcome is moved out, the future is boxed.
impl<O> Unpin for HandlerCall<O> {}

impl<O> Future for HandlerCall<O> {
    type Output = Result<O, ErrorObject>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<O, ErrorObject>> {
        match self.get_mut() {
            // Polled again after its outcome was taken: never ready again (no panic).
            HandlerCall::Done(outcome) => outcome.take().map_or(Poll::Pending, Poll::Ready),
            HandlerCall::Running(fut) => fut.as_mut().poll(cx),
        }
    }
}

/// Generates `handler` (async) and `sync_handler` setters for a registration type.
macro_rules! handler_setters {
    ($input:ty, $output:ty) => {
        /// Sets an async handler (its future runs as a job; see `Server::poll_job`).
        pub fn handler<F, Fut>(mut self, f: F) -> Self
        where
            F: Fn($input, RequestContext) -> Fut + Send + Sync + 'static,
            Fut: ::std::future::Future<Output = Result<$output, $crate::jsonrpc::ErrorObject>>
                + Send
                + 'static,
        {
            self.handler = Some($crate::app::server::types::Handler::Async(
                $crate::app::server::types::boxed(f),
            ));
            self
        }

        /// Sets a sync handler (it finishes inside the server's inline first poll).
        pub fn sync_handler<F>(mut self, f: F) -> Self
        where
            F: Fn($input, &RequestContext) -> Result<$output, $crate::jsonrpc::ErrorObject>
                + Send
                + Sync
                + 'static,
        {
            self.handler = Some($crate::app::server::types::Handler::Sync(
                ::std::sync::Arc::new(f),
            ));
            self
        }
    };
}

pub(crate) fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        map.insert(key.to_owned(), v);
    }
}

pub(crate) use handler_setters;

#[cfg(test)]
mod tests {
    use std::task::Waker;

    use super::*;
    use crate::jsonrpc::RequestId;
    use crate::runtime::{CancelToken, Outbox};

    fn context() -> RequestContext {
        let shared = Arc::new(super::super::outbox::Shared::default());
        RequestContext::new(
            RequestId::number(1),
            CancelToken::new(),
            Outbox::new(4),
            shared,
        )
    }

    fn poll<O>(call: &mut CatchPanic<HandlerCall<O>>) -> Poll<Result<O, ErrorObject>> {
        Pin::new(call).poll(&mut Context::from_waker(Waker::noop()))
    }

    /// A sync handler has run when the call returns: its outcome is ready at the first poll,
    /// and a poll after that is pending, not a panic. An async handler's future runs as it is.
    #[test]
    fn a_sync_handler_answers_in_the_call_and_an_async_one_through_its_future() {
        let ran = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = ran.clone();
        let sync: Handler<u32, u32> = Handler::Sync(Arc::new(move |n, _| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(n + 1)
        }));
        let mut call = sync.call(1, context());
        assert_eq!(
            ran.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "ran in the call"
        );
        assert!(matches!(poll(&mut call), Poll::Ready(Ok(2))));
        assert!(poll(&mut call).is_pending());
        let failing: Handler<u32, u32> =
            Handler::Sync(Arc::new(|_, _| Err(ErrorObject::invalid_params("no"))));
        assert!(matches!(
            poll(&mut failing.call(1, context())),
            Poll::Ready(Err(_))
        ));
        let later: Handler<u32, u32> = Handler::Async(boxed(|n: u32, _| async move { Ok(n * 3) }));
        let mut call = later.clone().call(2, context());
        assert!(matches!(poll(&mut call), Poll::Ready(Ok(6))));
    }

    /// `start` gives a sync handler's outcome as it is, a panic in it as the internal error a
    /// polled call gives, and an async handler's future to poll.
    #[test]
    fn start_gives_a_sync_outcome_at_once_and_an_async_future() {
        let sync: Handler<u32, u32> = Handler::Sync(Arc::new(|n, _| Ok(n + 1)));
        assert!(matches!(sync.start(1, context()), Started::Done(Ok(2))));
        let panicking: Handler<u32, u32> = Handler::Sync(Arc::new(|_, _| panic!("in the handler")));
        let Started::Done(Err(e)) = panicking.start(1, context()) else {
            panic!("the panic was not caught");
        };
        assert_eq!(e.code, crate::jsonrpc::code::INTERNAL_ERROR);
        assert_eq!(e.message, HANDLER_PANICKED);
        let later: Handler<u32, u32> = Handler::Async(boxed(|n: u32, _| async move { Ok(n * 3) }));
        let Started::Running(mut call) = later.start(2, context()) else {
            panic!("an async handler runs as a future");
        };
        assert!(matches!(poll(&mut call), Poll::Ready(Ok(6))));
        let mut done = Started::Done(Ok::<u32, ErrorObject>(4)).into_future();
        assert!(matches!(poll(&mut done), Poll::Ready(Ok(4))));
    }
}
