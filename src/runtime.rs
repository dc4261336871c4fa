//! Runtime-agnostic primitives shared by the server and client application layers: a shared
//! outbox with a wake hook, a oneshot channel, a cancellation token, the `Job` type, the
//! inline first poll and a handler's panic turned into an error reply. No IO, no threads, no clock: whoever drives the state machine brings the
//! executor.

mod catch_panic;

pub(crate) use catch_panic::{CatchPanic, HANDLER_PANICKED};

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// A unit of handler work: a boxed `Send` future the driver runs on its own executor.
pub type Job = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A boxed `Send` future with an output (what adapted handlers return).
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The hook called when something was pushed into an outbox from outside the state machine.
pub(crate) type WakeHook = Arc<dyn Fn() + Send + Sync>;

/// Locks a mutex, recovering the data if a panicking thread poisoned it (the data structures
/// guarded here stay consistent between statements, so poisoning carries no meaning).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Polls `job` once with a no-op waker. Returns `None` when it finished right there (a sync
/// handler), or the still-pending job for the driver to run.
pub fn first_poll(mut job: Job) -> Option<Job> {
    let mut cx = Context::from_waker(Waker::noop());
    match job.as_mut().poll(&mut cx) {
        Poll::Ready(()) => None,
        Poll::Pending => Some(job),
    }
}

/// A future that is pending once (waking itself at once), then ready: awaited in a handler, it
/// hands control back to the executor, so the handler becomes a job the driver runs instead
/// of finishing on its first poll.
pub fn yield_now() -> impl Future<Output = ()> + Send + 'static {
    let mut yielded = false;
    std::future::poll_fn(move |cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
}

/// A queue shared between the state machine and the jobs it handed out.
///
/// Jobs push items (replies, progress, log messages, registry changes) and call the wake hook;
/// the state machine drains it at the start of every `handle_*` and `poll_transmit`.
///
/// Bounds: `push_required` items (one reply per handler invocation) are bounded by the number
/// of live handlers, which the session's `max_inflight_inbound` bounds; `push` items (progress,
/// logs, notifications) are refused past `capacity` and counted in `dropped`.
pub struct Outbox<T> {
    inner: Arc<OutboxShared<T>>,
}

struct OutboxShared<T> {
    /// Whether `queue` holds an item: set and cleared under its lock, read without it, so
    /// the state machine's many drains that find nothing (a client pumps about a dozen per
    /// exchange) take no lock.
    queued: AtomicBool,
    queue: Mutex<OutboxInner<T>>,
}

struct OutboxInner<T> {
    items: VecDeque<T>,
    capacity: usize,
    dropped: u64,
    wake: Option<WakeHook>,
}

impl<T> Clone for Outbox<T> {
    fn clone(&self) -> Self {
        Outbox {
            inner: self.inner.clone(),
        }
    }
}

impl<T> fmt::Debug for Outbox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = lock(&self.inner.queue);
        f.debug_struct("Outbox")
            .field("len", &inner.items.len())
            .field("capacity", &inner.capacity)
            .field("dropped", &inner.dropped)
            .finish()
    }
}

impl<T> Outbox<T> {
    /// An empty outbox holding at most `capacity` optional items.
    pub fn new(capacity: usize) -> Self {
        Outbox {
            inner: Arc::new(OutboxShared {
                queued: AtomicBool::new(false),
                queue: Mutex::new(OutboxInner {
                    items: VecDeque::new(),
                    capacity,
                    dropped: 0,
                    wake: None,
                }),
            }),
        }
    }

    /// Sets the hook called after every push (the driver's "run your loop once" signal).
    pub fn set_wake_hook(&self, hook: WakeHook) {
        lock(&self.inner.queue).wake = Some(hook);
    }

    /// Pushes an optional item (progress, log, notification); `false` and counted when full.
    pub fn push(&self, item: T) -> bool {
        let wake = {
            let mut inner = lock(&self.inner.queue);
            if inner.items.len() >= inner.capacity {
                inner.dropped += 1;
                return false;
            }
            inner.items.push_back(item);
            self.inner.queued.store(true, Ordering::Release);
            inner.wake.clone()
        };
        if let Some(wake) = wake {
            wake();
        }
        true
    }

    /// Pushes an item that must not be lost (a handler's one reply); never refused.
    pub fn push_required(&self, item: T) {
        let wake = {
            let mut inner = lock(&self.inner.queue);
            inner.items.push_back(item);
            self.inner.queued.store(true, Ordering::Release);
            inner.wake.clone()
        };
        if let Some(wake) = wake {
            wake();
        }
    }

    /// Takes every queued item, oldest first.
    pub fn drain(&self) -> VecDeque<T> {
        let mut items = VecDeque::new();
        self.drain_into(&mut items);
        items
    }

    /// Moves every queued item, oldest first, to the end of `into`. When `into` is empty the
    /// two queues swap storage: a driver that drains into one queue it keeps (and empties)
    /// hands the outbox back a grown buffer, so a push allocates nothing once both have grown.
    pub fn drain_into(&self, into: &mut VecDeque<T>) {
        // A push from another thread that this misses calls the wake hook after it, so the
        // driver drains again.
        if !self.inner.queued.load(Ordering::Acquire) {
            return;
        }
        let mut inner = lock(&self.inner.queue);
        self.inner.queued.store(false, Ordering::Release);
        if into.is_empty() {
            std::mem::swap(&mut inner.items, into);
        } else {
            into.extend(inner.items.drain(..));
        }
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        !self.inner.queued.load(Ordering::Acquire)
    }

    /// Optional items refused because the outbox was full.
    pub fn dropped(&self) -> u64 {
        lock(&self.inner.queue).dropped
    }
}

struct Slot<T> {
    value: Option<T>,
    waker: Option<Waker>,
    sender_gone: bool,
}

/// Creates a oneshot channel: one value from the core to one waiting future.
pub fn oneshot<T>() -> (OneshotSender<T>, OneshotReceiver<T>) {
    let slot = Arc::new(Mutex::new(Slot {
        value: None,
        waker: None,
        sender_gone: false,
    }));
    (
        OneshotSender {
            slot: Some(slot.clone()),
        },
        OneshotReceiver { slot },
    )
}

/// The sending side of [`oneshot`]; dropping it unsent resolves the receiver with `None`.
pub struct OneshotSender<T> {
    slot: Option<Arc<Mutex<Slot<T>>>>,
}

impl<T> fmt::Debug for OneshotSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OneshotSender")
    }
}

impl<T> OneshotSender<T> {
    /// Delivers the value and wakes the receiver.
    pub fn send(mut self, value: T) {
        if let Some(slot) = self.slot.take() {
            let waker = {
                let mut s = lock(&slot);
                s.value = Some(value);
                s.sender_gone = true;
                s.waker.take()
            };
            if let Some(w) = waker {
                w.wake();
            }
        }
    }
}

impl<T> Drop for OneshotSender<T> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            let waker = {
                let mut s = lock(&slot);
                s.sender_gone = true;
                s.waker.take()
            };
            if let Some(w) = waker {
                w.wake();
            }
        }
    }
}

/// The receiving side of [`oneshot`]: a future resolving to the value, or to `None` when the
/// sender was dropped without sending.
pub struct OneshotReceiver<T> {
    slot: Arc<Mutex<Slot<T>>>,
}

impl<T> fmt::Debug for OneshotReceiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OneshotReceiver")
    }
}

impl<T> OneshotReceiver<T> {
    /// The value if it already arrived (non-blocking).
    pub fn try_take(&self) -> Option<T> {
        lock(&self.slot).value.take()
    }
}

impl<T> Future for OneshotReceiver<T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut s = lock(&self.slot);
        if let Some(v) = s.value.take() {
            return Poll::Ready(Some(v));
        }
        if s.sender_gone {
            return Poll::Ready(None);
        }
        s.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// A cancellation flag shared by the core (which sets it) and a handler (which watches it).
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Arc<CancelInner>,
}

#[derive(Default)]
struct CancelInner {
    flag: AtomicBool,
    /// Wakers of pending `cancelled()` futures; one entry per distinct waiting task.
    wakers: Mutex<Vec<Waker>>,
}

impl fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl CancelToken {
    /// A token not cancelled yet.
    pub fn new() -> Self {
        CancelToken::default()
    }

    /// Sets the flag and wakes every waiting `cancelled()` future.
    pub fn cancel(&self) {
        self.inner.flag.store(true, Ordering::SeqCst);
        let wakers = std::mem::take(&mut *lock(&self.inner.wakers));
        for w in wakers {
            w.wake();
        }
    }

    /// Clears a token that nothing else holds and that was never cancelled, for another
    /// request: `false` (and the token left as is) if a clone of it lives on or it was
    /// cancelled.
    pub(crate) fn reset_if_unused(&mut self) -> bool {
        let Some(inner) = Arc::get_mut(&mut self.inner) else {
            return false;
        };
        if *inner.flag.get_mut() {
            return false;
        }
        // Wakers of dropped `cancelled()` futures: nothing can wait on this token any more.
        inner
            .wakers
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        true
    }

    /// Whether `cancel` was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.flag.load(Ordering::SeqCst)
    }

    /// A future that resolves once the token is cancelled.
    pub fn cancelled(&self) -> impl Future<Output = ()> + Send + Unpin + 'static {
        self.wait()
    }

    /// [`CancelToken::cancelled`] as its named type, for a field.
    pub(crate) fn wait(&self) -> Cancelled {
        Cancelled {
            token: self.clone(),
        }
    }
}

/// The future returned by [`CancelToken::cancelled`].
#[derive(Debug)]
pub(crate) struct Cancelled {
    token: CancelToken,
}

impl Future for Cancelled {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.token.is_cancelled() {
            return Poll::Ready(());
        }
        let mut wakers = lock(&self.token.inner.wakers);
        // Re-check under the lock: `cancel` takes the wakers under the same lock.
        if self.token.is_cancelled() {
            return Poll::Ready(());
        }
        // One entry per waiting task keeps the list bounded by the number of waiters.
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct CountWake(AtomicUsize);
    impl Wake for CountWake {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll_once<F: Future + Unpin>(f: &mut F, waker: &Waker) -> Poll<F::Output> {
        Pin::new(f).poll(&mut Context::from_waker(waker))
    }

    #[test]
    fn first_poll_finishes_ready_jobs_and_returns_pending_ones() {
        assert!(first_poll(Box::pin(async {})).is_none());
        let (_tx, rx) = oneshot::<u8>();
        let pending = first_poll(Box::pin(async move {
            let _ = rx.await;
        }));
        assert!(pending.is_some());
    }

    #[test]
    fn oneshot_delivers_and_wakes() {
        let counter = Arc::new(CountWake(AtomicUsize::new(0)));
        let waker = Waker::from(counter.clone());
        let (tx, mut rx) = oneshot();
        assert!(poll_once(&mut rx, &waker).is_pending());
        tx.send(7);
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
        assert_eq!(poll_once(&mut rx, &waker), Poll::Ready(Some(7)));
    }

    #[test]
    fn oneshot_dropped_sender_cancels() {
        let (tx, mut rx) = oneshot::<u8>();
        drop(tx);
        assert_eq!(poll_once(&mut rx, Waker::noop()), Poll::Ready(None));
    }

    #[test]
    fn cancel_token_wakes_waiters_once_each() {
        let counter = Arc::new(CountWake(AtomicUsize::new(0)));
        let waker = Waker::from(counter.clone());
        let token = CancelToken::new();
        let mut fut = token.cancelled();
        assert!(poll_once(&mut fut, &waker).is_pending());
        assert!(poll_once(&mut fut, &waker).is_pending());
        assert_eq!(lock(&token.inner.wakers).len(), 1);
        token.cancel();
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
        assert!(token.is_cancelled());
        assert!(poll_once(&mut fut, &waker).is_ready());
    }

    #[test]
    fn outbox_bounds_optional_items_and_calls_the_hook() {
        let calls = Arc::new(AtomicUsize::new(0));
        let outbox = Outbox::new(2);
        let c = calls.clone();
        outbox.set_wake_hook(Arc::new(move || {
            c.fetch_add(1, Ordering::SeqCst);
        }));
        assert!(outbox.push(1));
        assert!(outbox.push(2));
        assert!(!outbox.push(3));
        outbox.push_required(4);
        assert_eq!(outbox.dropped(), 1);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(
            outbox.drain().into_iter().collect::<Vec<_>>(),
            vec![1, 2, 4]
        );
        assert!(outbox.is_empty());
    }

    /// `drain_into` hands over the items in order; into an empty queue it swaps storage, so
    /// the outbox gets the caller's grown buffer back; into a non-empty one it appends.
    #[test]
    fn drain_into_moves_items_in_order_and_swaps_storage_when_empty() {
        let outbox = Outbox::new(8);
        let mut into = VecDeque::with_capacity(16);
        let grown = into.capacity();
        outbox.push_required(1);
        outbox.push_required(2);
        outbox.drain_into(&mut into);
        assert_eq!(into, [1, 2]);
        assert!(outbox.is_empty());
        // The outbox now holds the caller's buffer: pushes up to its capacity reuse it.
        assert!(lock(&outbox.inner.queue).items.capacity() >= grown);
        outbox.push_required(3);
        outbox.drain_into(&mut into);
        assert_eq!(into, [1, 2, 3]);
        assert!(outbox.is_empty());
    }
}
