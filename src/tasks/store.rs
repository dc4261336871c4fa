//! The task table: creation, the status machine (working ⇄ input_required → completed /
//! failed / cancelled), pending input requests, TTL expiry by the caller's clock, limits.
//!
//! Outcomes may arrive without a time (a job finishing off the state machine); such a task is
//! marked stale and gets `lastUpdatedAt` from the next call that passes the time in.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::model::TaskStatus;

/// Bounds of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskLimits {
    /// Tasks held at most (expired ones are dropped first).
    pub max_tasks: usize,
    /// The `ttlMs` every task gets (clamped to `max_ttl_ms`).
    pub ttl_ms: u64,
    /// The longest `ttlMs` the store grants.
    pub max_ttl_ms: u64,
    /// The `pollIntervalMs` suggested to clients (at least 1).
    pub poll_interval_ms: u64,
    /// Pending input requests per task at most.
    pub max_inputs: usize,
}

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            max_tasks: 1024,
            ttl_ms: 300_000,
            max_ttl_ms: 3_600_000,
            poll_interval_ms: 250,
            max_inputs: 64,
        }
    }
}

/// Why the store refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TaskError {
    /// No task with this id (never created, or expired).
    Unknown,
    /// `max_tasks` live tasks already.
    Full,
    /// The id the random bytes gave is taken (the caller's bytes are not random).
    Collision,
}

impl std::fmt::Display for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TaskError::Unknown => "no task has this id (never created, or expired)",
            TaskError::Full => {
                "the server holds as many tasks as it may; retry once some have ended or expired"
            }
            TaskError::Collision => "the random task id drawn is taken",
        })
    }
}

/// One task.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Task {
    /// The id (hex of the caller's random bytes).
    pub id: String,
    /// Current status.
    pub status: TaskStatus,
    /// Creation time, Unix ms.
    pub created_ms: u64,
    /// Last status change, Unix ms.
    pub updated_ms: u64,
    /// Time to live from creation, ms.
    pub ttl_ms: u64,
    /// Suggested polling interval, ms.
    pub poll_interval_ms: u64,
    /// The tool's result once completed.
    pub result: Option<Value>,
    /// The JSON-RPC error object once failed.
    pub error: Option<Value>,
    /// Pending input requests by key (non-empty exactly when `input_required`).
    pub input_requests: Map<String, Value>,
    stale: bool,
}

/// The bounded task table.
#[derive(Debug, Default)]
pub(crate) struct TaskStore {
    limits: TaskLimits,
    tasks: HashMap<String, Task>,
}

impl TaskStore {
    /// An empty store with `limits`.
    pub(crate) fn new(limits: TaskLimits) -> Self {
        TaskStore {
            limits,
            tasks: HashMap::new(),
        }
    }

    /// Live tasks.
    pub(crate) fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Creates a working task whose id is the hex of `random`, at `now_ms`.
    pub(crate) fn create(&mut self, random: [u8; 16], now_ms: u64) -> Result<&Task, TaskError> {
        self.expire(now_ms);
        if self.tasks.len() >= self.limits.max_tasks {
            return Err(TaskError::Full);
        }
        let id: String = random.iter().map(|b| format!("{b:02x}")).collect();
        if self.tasks.contains_key(&id) {
            return Err(TaskError::Collision);
        }
        let task = Task {
            id: id.clone(),
            status: TaskStatus::Working,
            created_ms: now_ms,
            updated_ms: now_ms,
            ttl_ms: self.limits.ttl_ms.clamp(1, self.limits.max_ttl_ms.max(1)),
            poll_interval_ms: self.limits.poll_interval_ms.max(1),
            result: None,
            error: None,
            input_requests: Map::new(),
            stale: false,
        };
        Ok(self.tasks.entry(id).or_insert(task))
    }

    /// The task `id` as of `now_ms` (expired tasks are gone; stale ones get their time).
    pub(crate) fn get(&mut self, id: &str, now_ms: u64) -> Result<&Task, TaskError> {
        self.expire(now_ms);
        let task = self.tasks.get_mut(id).ok_or(TaskError::Unknown)?;
        if task.stale {
            task.stale = false;
            task.updated_ms = now_ms.max(task.updated_ms);
        }
        Ok(task)
    }

    /// Drops every task whose TTL has run out at `now_ms` (never earlier: a task lives
    /// `ttlMs` from its creation); returns the ids of the dropped ones that were still active.
    pub(crate) fn expire(&mut self, now_ms: u64) -> Vec<String> {
        let mut active = Vec::new();
        self.tasks.retain(|id, t| {
            let alive = now_ms < t.created_ms.saturating_add(t.ttl_ms);
            if !alive && !t.status.is_terminal() {
                active.push(id.clone());
            }
            alive
        });
        active
    }

    /// The running task `id` asks the client for `request` under `key`: it becomes
    /// `input_required`. False when the task is unknown, finished, or has `max_inputs`.
    pub(crate) fn request_input(&mut self, id: &str, key: String, request: Value) -> bool {
        let max = self.limits.max_inputs;
        let Some(task) = self.tasks.get_mut(id) else {
            return false;
        };
        if task.status.is_terminal()
            || (task.input_requests.len() >= max && !task.input_requests.contains_key(&key))
        {
            return false;
        }
        task.input_requests.insert(key, request);
        task.status = TaskStatus::InputRequired;
        task.stale = true;
        true
    }

    /// `tasks/update`: the answers to pending keys are taken (others ignored); the task is
    /// `working` again once none is pending. Returns the answered `(key, answer)` pairs.
    pub(crate) fn answer(
        &mut self,
        id: &str,
        responses: Map<String, Value>,
        now_ms: u64,
    ) -> Result<Vec<(String, Value)>, TaskError> {
        self.expire(now_ms);
        let task = self.tasks.get_mut(id).ok_or(TaskError::Unknown)?;
        let mut answered = Vec::new();
        if task.status.is_terminal() {
            return Ok(answered);
        }
        for (key, value) in responses {
            if task.input_requests.remove(&key).is_some() {
                answered.push((key, value));
            }
        }
        if !answered.is_empty() {
            task.updated_ms = now_ms.max(task.updated_ms);
            if task.input_requests.is_empty() {
                task.status = TaskStatus::Working;
            }
        }
        Ok(answered)
    }

    /// `tasks/cancel`: an active task becomes `cancelled` (true); a terminal one is left as
    /// it is (false, the cancel is idempotent).
    pub(crate) fn cancel(&mut self, id: &str, now_ms: u64) -> Result<bool, TaskError> {
        self.expire(now_ms);
        let task = self.tasks.get_mut(id).ok_or(TaskError::Unknown)?;
        if task.status.is_terminal() {
            return Ok(false);
        }
        task.status = TaskStatus::Cancelled;
        task.input_requests.clear();
        task.updated_ms = now_ms.max(task.updated_ms);
        task.stale = false;
        Ok(true)
    }

    /// The job of `id` finished with `result` (its `related-task` `_meta` is dropped). Ignored
    /// when the task is unknown or already terminal (cancelled first).
    pub(crate) fn complete(&mut self, id: &str, mut result: Value) {
        if let Some(meta) = result.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.remove("io.modelcontextprotocol/related-task");
        }
        self.finish(id, TaskStatus::Completed, Some(result), None);
    }

    /// The job of `id` failed with the JSON-RPC error object `error`.
    pub(crate) fn fail(&mut self, id: &str, error: Value) {
        self.finish(id, TaskStatus::Failed, None, Some(error));
    }

    fn finish(
        &mut self,
        id: &str,
        status: TaskStatus,
        result: Option<Value>,
        error: Option<Value>,
    ) {
        let Some(task) = self.tasks.get_mut(id) else {
            return;
        };
        if task.status.is_terminal() {
            return;
        }
        task.status = status;
        task.result = result;
        task.error = error;
        task.input_requests.clear();
        task.stale = true;
    }
}
