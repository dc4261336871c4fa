//! The client-side judge of a simulation: every request ends exactly once, results reach the
//! request whose exact id they answer, and a request's progress arrives complete and in order
//! before its result (docs/fuzzing.md, invariants 1–3). Violations are returned as text so the
//! seed loop can print the seed and its replay command.

use std::collections::HashMap;

use mcp_sansio::jsonrpc::RequestId;
use mcp_sansio::session::{Event, Outcome};
use serde_json::Value;

use super::worker::{echo_result, Work};

/// One request we sent and what has come back for it so far.
#[derive(Debug)]
struct Pending {
    work: Option<Work>,
    progress_seen: u32,
}

/// How the requests of one run ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Completed with the worker's result.
    pub results: u64,
    /// Completed with an error.
    pub errors: u64,
    /// Timed out.
    pub timed_out: u64,
    /// Cancelled by us.
    pub cancelled: u64,
    /// Ended by the session closing (connection loss, restart, expiry).
    pub closed: u64,
}

impl Tally {
    /// Requests ended, whichever way.
    pub fn ended(&self) -> u64 {
        self.results + self.errors + self.timed_out + self.cancelled + self.closed
    }

    /// Adds another tally.
    pub fn add(&mut self, other: &Tally) {
        self.results += other.results;
        self.errors += other.errors;
        self.timed_out += other.timed_out;
        self.cancelled += other.cancelled;
        self.closed += other.closed;
    }
}

/// The requests of one client session and the checks on their events.
#[derive(Debug, Default)]
pub struct Ledger {
    outstanding: HashMap<RequestId, Pending>,
    /// Requests sent (each id once).
    pub sent: u64,
    /// How they ended.
    pub tally: Tally,
    /// Progress notifications seen.
    pub progress: u64,
}

impl Ledger {
    /// Records a request we sent; `work` is what it asked of the worker (`None`: a ping).
    pub fn sent(&mut self, id: RequestId, work: Option<Work>) -> Result<(), String> {
        self.sent += 1;
        let pending = Pending {
            work,
            progress_seen: 0,
        };
        match self.outstanding.insert(id.clone(), pending) {
            None => Ok(()),
            Some(_) => Err(format!("id {id} allocated twice")),
        }
    }

    /// Requests not ended yet.
    pub fn outstanding(&self) -> usize {
        self.outstanding.len()
    }

    /// Some outstanding id, picked by `index` in a stable order.
    pub fn outstanding_at(&self, index: u64) -> Option<RequestId> {
        let mut ids: Vec<&RequestId> = self.outstanding.keys().collect();
        ids.sort();
        let n = ids.len() as u64;
        (n > 0).then(|| ids[(index % n) as usize].clone())
    }

    /// Judges one client event.
    pub fn event(&mut self, event: &Event) -> Result<(), String> {
        match event {
            Event::Progress { id, progress, .. } => {
                let Some(p) = self.outstanding.get_mut(id) else {
                    return Err(format!("progress for {id}, which is not outstanding"));
                };
                let want = p.progress_seen + 1;
                if *progress != f64::from(want) {
                    return Err(format!("progress {progress} for {id}, expected {want}"));
                }
                p.progress_seen = want;
                self.progress += 1;
                Ok(())
            }
            Event::Completed { id, outcome } => {
                let Some(p) = self.outstanding.remove(id) else {
                    return Err(format!("{id} completed but is not outstanding (twice?)"));
                };
                self.completed(id, &p, outcome)
            }
            Event::Closed { .. } if !self.outstanding.is_empty() => Err(format!(
                "closed with requests never completed: {:?}",
                self.outstanding.keys().collect::<Vec<_>>()
            )),
            _ => Ok(()),
        }
    }

    fn completed(&mut self, id: &RequestId, p: &Pending, outcome: &Outcome) -> Result<(), String> {
        match outcome {
            Outcome::Result(raw) => {
                self.tally.results += 1;
                let Some(work) = p.work else { return Ok(()) };
                let got: Value =
                    serde_json::from_slice(raw.as_bytes()).map_err(|e| e.to_string())?;
                if got != echo_result(id) {
                    return Err(format!("{id} got another request's result: {got}"));
                }
                if p.progress_seen != work.steps {
                    return Err(format!(
                        "{id} ended with {} of {} progress steps (lost or out of order)",
                        p.progress_seen, work.steps
                    ));
                }
            }
            Outcome::Error(_) => self.tally.errors += 1,
            Outcome::TimedOut => self.tally.timed_out += 1,
            Outcome::Cancelled => self.tally.cancelled += 1,
            Outcome::Closed => self.tally.closed += 1,
        }
        Ok(())
    }
}
