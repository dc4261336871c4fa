//! The endpoint's session table with a deadline index, so the next deadline and the sessions
//! due at a time are found without walking every session (the adapter asks after every
//! request, and an endpoint may hold `max_sessions` idle sessions).
//!
//! Every mutable access marks the session dirty: its machine may have moved its timers or
//! queued a job. [`SessionTable::flush`] re-files the dirty sessions under their new
//! deadlines; until then [`SessionTable::next_deadline`] computes theirs afresh, so its
//! answer is always exact. Sessions marked since their last `poll_job` that returned `None`
//! are the only ones asked for jobs, and sessions marked since the driver last asked are the
//! only ones whose response streams [`SessionTable::drain_touched`] visits.

use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use super::machine::Machine;
use super::streams::SessionState;
use crate::app::runtime::Job;
use crate::session::idhash::IdMap;

/// One session and its bookkeeping in the index.
struct Entry<M> {
    state: SessionState<M>,
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
}

/// Sessions (and in-flight stateless exchanges, whose ids start with `#`) by id.
pub(super) struct SessionTable<M> {
    /// Boxed: a session's state is a few KiB, and a hash table holds up to twice as many
    /// slots as entries (and both its old and new slots while it grows).
    entries: IdMap<String, Box<Entry<M>>>,
    ids: IdMap<u64, String>,
    /// (deadline, serial) of every clean session that has a deadline.
    deadlines: BTreeSet<(Instant, u64)>,
    /// Touched since filed; at most one per entry.
    dirty: Vec<u64>,
    /// Touched since their machine last had no job; at most one per entry.
    job_candidates: VecDeque<u64>,
    /// Touched since [`SessionTable::drain_touched`] last ran; at most one per entry.
    touched: Vec<u64>,
    next_serial: u64,
    /// Sessions proper (ids not starting with `#`), for the session cap.
    live: usize,
    idle_timeout: Duration,
}

impl<M: Machine> SessionTable<M> {
    /// An empty table whose sessions expire after `idle_timeout` with no stream attached.
    pub(super) fn new(idle_timeout: Duration) -> Self {
        SessionTable {
            entries: IdMap::default(),
            ids: IdMap::default(),
            deadlines: BTreeSet::new(),
            dirty: Vec::new(),
            job_candidates: VecDeque::new(),
            touched: Vec::new(),
            next_serial: 0,
            live: 0,
            idle_timeout,
        }
    }

    /// Entries held, stateless exchanges included.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Sessions proper held (stateless exchanges not counted).
    pub(super) fn live(&self) -> usize {
        self.live
    }

    /// Whether `id` is held.
    pub(super) fn contains_key(&self, id: &str) -> bool {
        self.entries.contains_key(id)
    }

    /// Session `id`, read only (does not mark it).
    pub(super) fn get(&self, id: &str) -> Option<&SessionState<M>> {
        self.entries.get(id).map(|e| &e.state)
    }

    /// Session `id`, marked dirty and a job candidate.
    pub(super) fn get_mut(&mut self, id: &str) -> Option<&mut SessionState<M>> {
        let entry = self.entries.get_mut(id)?;
        mark(
            entry,
            &mut self.dirty,
            &mut self.job_candidates,
            &mut self.touched,
        );
        Some(&mut entry.state)
    }

    /// Adds session `id` (the caller checked it is not held), marked.
    pub(super) fn insert(&mut self, id: String, state: SessionState<M>) {
        let serial = self.next_serial;
        self.next_serial += 1;
        let mut entry = Entry {
            state,
            serial,
            filed: None,
            dirty: false,
            job_candidate: false,
            touched: false,
        };
        mark(
            &mut entry,
            &mut self.dirty,
            &mut self.job_candidates,
            &mut self.touched,
        );
        let live = !id.starts_with('#');
        self.ids.insert(serial, id.clone());
        if let Some(old) = self.entries.insert(id, Box::new(entry)) {
            self.ids.remove(&old.serial);
            self.forget(&old);
        } else if live {
            self.live += 1;
        }
    }

    /// Removes session `id` and everything the index holds about it.
    pub(super) fn remove(&mut self, id: &str) -> Option<SessionState<M>> {
        let entry = self.entries.remove(id)?;
        self.ids.remove(&entry.serial);
        self.forget(&entry);
        if !id.starts_with('#') {
            self.live -= 1;
        }
        Some(entry.state)
    }

    /// Drops a removed entry from the index and the work lists.
    fn forget(&mut self, entry: &Entry<M>) {
        if let Some(at) = entry.filed {
            self.deadlines.remove(&(at, entry.serial));
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
            let at = deadline(id, &entry.state, self.idle_timeout);
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
                deadline(id, &self.entries.get(id)?.state, self.idle_timeout)
            })
            .min();
        filed.into_iter().chain(fresh).min()
    }

    /// The ids of the sessions whose deadline is at or before `now` (call after `flush`).
    pub(super) fn due(&self, now: Instant) -> Vec<String> {
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
            .iter()
            .filter_map(|(id, e)| deadline(id, &e.state, self.idle_timeout))
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

/// Session `id`'s deadline: its machine's next timer or, for a session proper with no
/// stream attached, its idle expiry.
fn deadline<M: Machine>(id: &str, s: &SessionState<M>, idle_timeout: Duration) -> Option<Instant> {
    let idle = (!id.starts_with('#') && !s.has_attached())
        .then(|| s.last_activity.checked_add(idle_timeout))
        .flatten();
    s.machine.poll_timeout().into_iter().chain(idle).min()
}
