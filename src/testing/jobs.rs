//! [`Jobs`]: the handler jobs a machine handed out, polled with a no-op waker so a test
//! decides when they run (a job waiting on a gate stays pending until the test opens it and
//! runs the jobs again).

use std::task::{Context, Waker};

use crate::runtime::Job;

/// Pending handler jobs.
#[derive(Default)]
pub struct Jobs {
    jobs: Vec<Job>,
}

impl Jobs {
    /// No jobs.
    pub fn new() -> Jobs {
        Jobs::default()
    }

    /// Keeps `job` until it finishes.
    pub fn push(&mut self, job: Job) {
        self.jobs.push(job);
    }

    /// Polls every job once; returns how many finished.
    pub fn run(&mut self) -> usize {
        let before = self.jobs.len();
        let mut cx = Context::from_waker(Waker::noop());
        self.jobs
            .retain_mut(|j| j.as_mut().poll(&mut cx).is_pending());
        before - self.jobs.len()
    }

    /// Jobs not finished yet.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Whether every job finished.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Drops every pending job (as a driver does when its executor stops).
    pub fn clear(&mut self) {
        self.jobs.clear();
    }
}

impl std::fmt::Debug for Jobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jobs")
            .field("pending", &self.jobs.len())
            .finish()
    }
}
