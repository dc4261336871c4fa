//! Room at the connection cap. Every open connection is on the roster with its requests in
//! flight ([`Busy`]). When `max_connections` are open and another connection waits to be
//! accepted, the connection idle longest (no request in flight: between two requests, or still
//! sending its first head) is asked to close, so connections that send nothing cannot keep
//! clients out until their header or keep-alive timeout. A connection with a request in flight
//! (a POST being answered, an open GET stream) is never asked.
//!
//! Joining and leaving cost one table update per connection; the roster is read only at the
//! cap. A connection looks at its flag when its task waits, as it does for shutdown.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::task::{Context, Waker};

use super::idle::Busy;

/// The open connections of one server (see the module header).
#[derive(Clone, Default)]
pub(crate) struct Roster(Rc<RefCell<Members>>);

#[derive(Default)]
struct Members {
    next: u64,
    open: HashMap<u64, (Busy, Rc<Ask>)>,
}

/// Whether a connection was asked to close, and the waker of its task.
#[derive(Default)]
struct Ask {
    asked: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Roster {
    /// Puts a new connection on the roster; it leaves when the returned place is dropped.
    pub(crate) fn join(&self, busy: Busy) -> Place {
        let ask = Rc::new(Ask::default());
        let mut members = self.0.borrow_mut();
        let id = members.next;
        members.next += 1;
        members.open.insert(id, (busy.clone(), ask.clone()));
        Place {
            roster: self.clone(),
            id,
            ask,
            busy,
        }
    }

    /// Asks the connection idle longest (and not asked yet) to close; whether there was one.
    pub(crate) fn reclaim_idlest(&self) -> bool {
        let members = self.0.borrow();
        let idlest = members
            .open
            .values()
            .filter(|(_, ask)| !ask.asked.get())
            .filter_map(|(busy, ask)| busy.idle_since().map(|since| (since, ask)))
            .min_by_key(|(since, _)| *since);
        let Some((_, ask)) = idlest else {
            return false;
        };
        ask.asked.set(true);
        if let Some(waker) = ask.waker.borrow_mut().take() {
            waker.wake();
        }
        true
    }

    /// How many connections are on the roster.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.borrow().open.len()
    }
}

/// One connection's place on the roster.
pub(crate) struct Place {
    roster: Roster,
    id: u64,
    ask: Rc<Ask>,
    busy: Busy,
}

impl Place {
    /// The connection's requests in flight.
    pub(crate) fn busy(&self) -> &Busy {
        &self.busy
    }

    /// Whether the connection was asked to close; registers the task's waker otherwise (only
    /// when it changed, so a look costs a flag load and a waker comparison).
    pub(crate) fn poll_asked(&self, cx: &mut Context<'_>) -> bool {
        if self.ask.asked.get() {
            return true;
        }
        let mut waker = self.ask.waker.borrow_mut();
        if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *waker = Some(cx.waker().clone());
        }
        false
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Ok(mut members) = self.roster.0.try_borrow_mut() {
            members.open.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    use std::task::Wake;
    use std::time::{Duration, Instant};

    struct Count(AtomicU32);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn the_connection_idle_longest_is_asked_and_busy_ones_never() {
        let t0 = Instant::now();
        let roster = Roster::default();
        let older = Busy::new(t0);
        let newer = Busy::new(t0 + Duration::from_secs(1));
        let busiest = Busy::new(t0 - Duration::from_secs(5));
        let _request = busiest.enter();
        let (a, b, c) = (
            roster.join(busiest.clone()),
            roster.join(newer.clone()),
            roster.join(older.clone()),
        );
        let woken = Arc::new(Count(AtomicU32::new(0)));
        let waker = Waker::from(woken.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(!c.poll_asked(&mut cx));

        assert!(roster.reclaim_idlest());
        assert!(c.poll_asked(&mut cx), "the one idle since t0 goes first");
        assert_eq!(woken.0.load(Ordering::Relaxed), 1, "its task is woken");
        assert!(!b.poll_asked(&mut cx));
        assert!(roster.reclaim_idlest());
        assert!(b.poll_asked(&mut cx));
        assert!(!roster.reclaim_idlest(), "only a busy connection is left");
        assert!(!a.poll_asked(&mut cx));

        drop((b, c));
        assert_eq!(roster.len(), 1);
        drop(a);
        assert_eq!(roster.len(), 0);
    }
}
