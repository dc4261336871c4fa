//! The endpoint's session table with a deadline index, so the next deadline and the sessions
//! due at a time are found without walking every session (the adapter asks after every
//! request, and an endpoint may hold `max_sessions` idle sessions). The endpoint keeps two:
//! one of stateful sessions (keyed by session id, with idle expiry and a handshake grace)
//! and one of stateless exchanges (keyed by a serial, with neither).
//!
//! Sessions whose handshake is not done (no `notifications/initialized` yet) are also kept in
//! creation order, so the oldest of them is found at once when a full table must make room.
//!
//! Every mutable access marks the session dirty: its machine may have moved its timers or
//! queued a job. [`SessionTable::flush`] re-files the dirty sessions under their new
//! deadlines; until then [`SessionTable::next_deadline`] computes theirs afresh, so its
//! answer is always exact. Sessions marked since their last `poll_job` that returned `None`
//! are the only ones asked for jobs, and sessions marked since the driver last asked are the
//! only ones whose response streams [`SessionTable::drain_touched`] visits.

use std::borrow::Borrow;
use std::collections::{BTreeSet, VecDeque};
use std::hash::Hash;
use std::time::{Duration, Instant};

use super::machine::SessionMachine;
use super::streams::SessionState;
use crate::runtime::Job;
use crate::session::idhash::IdMap;

/// When the entries of a table expire.
#[derive(Clone, Copy, Debug)]
pub(super) struct Expiry {
    /// An entry with no stream attached for this long is dropped (`None`: never).
    pub(super) idle: Option<Duration>,
    /// An entry whose handshake is not done this long after its creation is dropped, streams
    /// or not (`None`: never).
    pub(super) handshake: Option<Duration>,
}

/// Why an entry's time is up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lapse {
    /// No request and no stream for the idle timeout.
    Idle,
    /// No finished handshake within the grace.
    Handshake,
}

/// One session and its bookkeeping in the index.
struct Entry<M> {
    state: SessionState<M>,
    /// When it was added (the handshake grace runs from here).
    created: Instant,
    /// In `unready`: its handshake was not done when last looked at.
    unready: bool,
    /// Names this entry in the index and the work lists (never reused).
    serial: u64,
    /// The deadline the index holds for this entry.
    filed: Option<Instant>,
    /// In `dirty`: touched since it was last filed.
    dirty: bool,
    /// In `job_candidates`: touched since its machine last had no job.
    job_candidate: bool,
    /// In `touched`: touched since the driver last asked which streams may have output.
    touched: bool,
    /// In `logged`: stream-log entries were waiting when it was last filed.
    logged: bool,
}

/// Sessions (or stateless exchanges) by key.
pub(super) struct SessionTable<K, M> {
    /// Boxed: a session's state is a few KiB, and a hash table holds up to twice as many
    /// slots as entries (and both its old and new slots while it grows).
    entries: IdMap<K, Box<Entry<M>>>,
    ids: IdMap<u64, K>,
    /// (deadline, serial) of every clean session that has a deadline.
    deadlines: BTreeSet<(Instant, u64)>,
    /// (creation, serial) of the sessions whose handshake was not done when last looked at.
    unready: BTreeSet<(Instant, u64)>,
    /// Touched since filed; at most one per entry.
    dirty: Vec<u64>,
    /// Touched since their machine last had no job; at most one per entry.
    job_candidates: VecDeque<u64>,
    /// Touched since [`SessionTable::drain_touched`] last ran; at most one per entry.
    touched: Vec<u64>,
    /// Stream-log entries waiting when last filed ([`SessionTable::drain_logged`]); at most
    /// one per entry.
    logged: Vec<u64>,
    next_serial: u64,
    expiry: Expiry,
}

impl<K: Clone + Eq + Hash, M: SessionMachine> SessionTable<K, M> {
    /// An empty table whose entries expire by `expiry`.
    pub(super) fn new(expiry: Expiry) -> Self {
        SessionTable {
            entries: IdMap::default(),
            ids: IdMap::default(),
            deadlines: BTreeSet::new(),
            unready: BTreeSet::new(),
            dirty: Vec::new(),
            job_candidates: VecDeque::new(),
            touched: Vec::new(),
            logged: Vec::new(),
            next_serial: 0,
            expiry,
        }
    }

    /// Entries held.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether `id` is held.
    pub(super) fn contains_key<Q>(&self, id: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.contains_key(id)
    }

    /// Session `id`, read only (does not mark it).
    pub(super) fn get<Q>(&self, id: &Q) -> Option<&SessionState<M>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.get(id).map(|e| &e.state)
    }

    /// Session `id`, marked dirty and a job candidate.
    pub(super) fn get_mut<Q>(&mut self, id: &Q) -> Option<&mut SessionState<M>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let entry = self.entries.get_mut(id)?;
        mark(
            entry,
            &mut self.dirty,
            &mut self.job_candidates,
            &mut self.touched,
        );
        Some(&mut entry.state)
    }

    /// Adds session `id` (the caller checked it is not held), marked, created at its last
    /// activity.
    pub(super) fn insert(&mut self, id: K, state: SessionState<M>) {
        let serial = self.next_serial;
        self.next_serial += 1;
        let created = state.last_activity;
        let unready = self.expiry.handshake.is_some() && !state.machine.handshake_done();
        if unready {
            self.unready.insert((created, serial));
        }
        let mut entry = Entry {
            state,
            created,
            unready,
            serial,
            filed: None,
            dirty: false,
            job_candidate: false,
            touched: false,
            logged: false,
        };
        mark(
            &mut entry,
            &mut self.dirty,
            &mut self.job_candidates,
            &mut self.touched,
        );
        self.ids.insert(serial, id.clone());
        if let Some(old) = self.entries.insert(id, Box::new(entry)) {
            self.ids.remove(&old.serial);
            self.forget(&old);
        }
    }

    /// Removes session `id` and everything the index holds about it.
    pub(super) fn remove<Q>(&mut self, id: &Q) -> Option<SessionState<M>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let entry = self.entries.remove(id)?;
        self.ids.remove(&entry.serial);
        self.forget(&entry);
        Some(entry.state)
    }

    /// The ids of the sessions `keep` picks (a walk over every session).
    pub(super) fn ids_where(&self, mut keep: impl FnMut(&SessionState<M>) -> bool) -> Vec<K> {
        self.entries
            .iter()
            .filter(|(_, entry)| keep(&entry.state))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The oldest session whose handshake is not done: the first to make room for a new one.
    pub(super) fn oldest_unready(&self) -> Option<&K> {
        self.unready.iter().find_map(|(_, serial)| {
            let id = self.ids.get(serial)?;
            let entry = self.entries.get(id)?;
            (!entry.state.machine.handshake_done()).then_some(id)
        })
    }

    /// Why session `id`'s time is up at `now`, if it is (its machine's timers aside).
    pub(super) fn lapse<Q>(&self, id: &Q, now: Instant) -> Option<Lapse>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let entry = self.entries.get(id)?;
        let (idle, handshake) = expiries(entry, self.expiry);
        if handshake.is_some_and(|t| t <= now) {
            Some(Lapse::Handshake)
        } else if idle.is_some_and(|t| t <= now) {
            Some(Lapse::Idle)
        } else {
            None
        }
    }

    /// Drops a removed entry from the index and the work lists.
    fn forget(&mut self, entry: &Entry<M>) {
        if let Some(at) = entry.filed {
            self.deadlines.remove(&(at, entry.serial));
        }
        if entry.unready {
            self.unready.remove(&(entry.created, entry.serial));
        }
        if entry.dirty {
            self.dirty.retain(|&s| s != entry.serial);
        }
        if entry.job_candidate {
            self.job_candidates.retain(|&s| s != entry.serial);
        }
        if entry.touched {
            self.touched.retain(|&s| s != entry.serial);
        }
        if entry.logged {
            self.logged.retain(|&s| s != entry.serial);
        }
    }

    /// Appends to `out` the sessions whose stream-log entries were waiting when they were
    /// last filed (by [`SessionTable::flush`], after any mutable access), once each, and
    /// clears the marks: the endpoint collects from these instead of walking every session
    /// with a logged GET stream.
    pub(super) fn drain_logged(&mut self, out: &mut Vec<K>) {
        for serial in self.logged.drain(..) {
            let Some(id) = self.ids.get(&serial) else {
                continue;
            };
            if let Some(entry) = self.entries.get_mut(id) {
                entry.logged = false;
                out.push(id.clone());
            }
        }
    }

    /// Whether a session has stream-log entries waiting (see [`SessionTable::drain_logged`]).
    pub(super) fn any_logged(&self) -> bool {
        !self.logged.is_empty()
    }

    /// Visits every session touched since the last call (a request, a timer, a body's pull,
    /// a listen event: any mutable access), once each, and clears the marks.
    pub(super) fn drain_touched(&mut self, mut visit: impl FnMut(&mut SessionState<M>)) {
        for serial in self.touched.drain(..) {
            let Some(entry) = self
                .ids
                .get(&serial)
                .and_then(|id| self.entries.get_mut(id))
            else {
                continue;
            };
            entry.touched = false;
            visit(&mut entry.state);
        }
    }

    /// Files every dirty session under its current deadline.
    pub(super) fn flush(&mut self) {
        for serial in self.dirty.drain(..) {
            let Some(id) = self.ids.get(&serial) else {
                continue;
            };
            let Some(entry) = self.entries.get_mut(id) else {
                continue;
            };
            entry.dirty = false;
            if !entry.logged && entry.state.log_waiting() {
                entry.logged = true;
                self.logged.push(serial);
            }
            if entry.unready && entry.state.machine.handshake_done() {
                entry.unready = false;
                self.unready.remove(&(entry.created, serial));
            }
            let at = deadline(entry, self.expiry);
            if at != entry.filed {
                if let Some(old) = entry.filed {
                    self.deadlines.remove(&(old, serial));
                }
                if let Some(new) = at {
                    self.deadlines.insert((new, serial));
                }
                entry.filed = at;
            }
        }
    }

    /// The earliest deadline of any session: exact even with sessions not yet re-filed.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        let filed = self
            .deadlines
            .iter()
            .find(|(_, serial)| !self.dirty.contains(serial))
            .map(|&(at, _)| at);
        let fresh = self
            .dirty
            .iter()
            .filter_map(|serial| {
                let id = self.ids.get(serial)?;
                deadline(self.entries.get(id)?, self.expiry)
            })
            .min();
        filed.into_iter().chain(fresh).min()
    }

    /// The ids of the sessions whose deadline is at or before `now` (call after `flush`).
    pub(super) fn due(&self, now: Instant) -> Vec<K> {
        self.deadlines
            .iter()
            .take_while(|&&(at, _)| at <= now)
            .filter_map(|(_, serial)| self.ids.get(serial).cloned())
            .collect()
    }

    /// A pending handler future of any session touched since its machine last had none.
    pub(super) fn poll_job(&mut self) -> Option<Job> {
        while let Some(&serial) = self.job_candidates.front() {
            let entry = self
                .ids
                .get(&serial)
                .and_then(|id| self.entries.get_mut(id));
            let Some(entry) = entry else {
                self.job_candidates.pop_front();
                continue;
            };
            if let Some(job) = entry.state.machine.poll_job() {
                // Handing out a job may move the machine's timers.
                if !entry.dirty {
                    entry.dirty = true;
                    self.dirty.push(serial);
                }
                return Some(job);
            }
            entry.job_candidate = false;
            self.job_candidates.pop_front();
        }
        None
    }

    /// The earliest deadline by walking every session (the index's reference, for tests).
    #[cfg(test)]
    pub(super) fn walk_deadline(&self) -> Option<Instant> {
        self.entries
            .values()
            .filter_map(|e| deadline(e, self.expiry))
            .min()
    }
}

/// Marks `entry` as touched: to be re-filed, to be asked for jobs, and to have its streams
/// looked at.
fn mark<M>(
    entry: &mut Entry<M>,
    dirty: &mut Vec<u64>,
    job_candidates: &mut VecDeque<u64>,
    touched: &mut Vec<u64>,
) {
    if !entry.dirty {
        entry.dirty = true;
        dirty.push(entry.serial);
    }
    if !entry.job_candidate {
        entry.job_candidate = true;
        job_candidates.push_back(entry.serial);
    }
    if !entry.touched {
        entry.touched = true;
        touched.push(entry.serial);
    }
}

/// An entry's deadline: its machine's next timer or one of its expiries.
fn deadline<M: SessionMachine>(entry: &Entry<M>, expiry: Expiry) -> Option<Instant> {
    let (idle, handshake) = expiries(entry, expiry);
    let timer = entry.state.machine.poll_timeout();
    timer.into_iter().chain(idle).chain(handshake).min()
}

/// An entry's idle expiry (with no stream attached) and handshake expiry (handshake not
/// done), where they apply.
fn expiries<M: SessionMachine>(
    entry: &Entry<M>,
    expiry: Expiry,
) -> (Option<Instant>, Option<Instant>) {
    let s = &entry.state;
    let idle = expiry
        .idle
        .filter(|_| !s.has_attached())
        .and_then(|d| s.last_activity.checked_add(d));
    let handshake = expiry
        .handshake
        .filter(|_| !s.machine.handshake_done())
        .and_then(|d| entry.created.checked_add(d));
    (idle, handshake)
}
