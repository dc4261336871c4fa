//! What one call of the [`super::StatelessMachine`] is doing: a request to its final result
//! (optionally kept in the result cache), the paged `tools/list` (optionally before a
//! `tools/call` that needs the tool's headers), a listen stream, or a task followed to its end.
//! The attempt in flight and its deadline live beside it, in the machine.

use serde_json::{json, Value};

use super::{ListenReader, StatelessCall, TaskHandle};
use crate::model::stateless::InputResponses;
use crate::tasks::{TASKS_GET, TASKS_UPDATE};

/// The result-cache key of a call whose result may be stored: its params.
pub(super) type CacheKey = Option<Option<Value>>;

/// One call of the machine.
pub(super) enum Op {
    /// One request to its final result.
    Call {
        call: StatelessCall,
        cache: CacheKey,
    },
    /// Every page of `tools/list`, learning the tools' header annotations; then, when `then`
    /// holds one, the `tools/call` that waited for the listing.
    ListTools {
        call: StatelessCall,
        tools: Vec<Value>,
        pages: usize,
        then: Option<Box<(StatelessCall, CacheKey)>>,
    },
    /// A `subscriptions/listen` stream (the reader exists once the HTTP response head came).
    Listen { reader: Option<ListenReader> },
    /// A task followed with `tasks/get` and `tasks/update`.
    Task { task: TaskHandle, phase: TaskPhase },
}

/// Where a task wait is.
pub(super) enum TaskPhase {
    /// Waiting for the next poll (the entry's deadline).
    Wait,
    /// `tasks/get` in flight.
    Get(StatelessCall),
    /// The handlers are answering the task's input requests.
    Answer,
    /// `tasks/update` in flight with these answers (set on every attempt).
    Update(StatelessCall, InputResponses),
}

impl Op {
    /// The request whose attempt is (or is about to be) in flight, if the op has one.
    pub(super) fn current(&mut self) -> Option<&mut StatelessCall> {
        match self {
            Op::Call { call, .. }
            | Op::ListTools { call, .. }
            | Op::Task {
                phase: TaskPhase::Get(call),
                ..
            } => Some(call),
            // `tasks/update` carries its answers as its own params on every attempt.
            Op::Task {
                phase: TaskPhase::Update(call, responses),
                ..
            } => {
                call.retry_inputs = Some(responses.clone());
                Some(call)
            }
            Op::Listen { .. } | Op::Task { .. } => None,
        }
    }

    /// Whether this op is a task wait (it ends with `TaskDone`).
    pub(super) fn is_task(&self) -> bool {
        matches!(self, Op::Task { .. })
    }

    /// The task's id, for its events.
    pub(super) fn task_id(&self) -> String {
        match self {
            Op::Task { task, .. } => task.id().to_owned(),
            _ => String::new(),
        }
    }
}

/// The `tasks/get` of task `id`.
pub(super) fn task_get(id: &str) -> StatelessCall {
    StatelessCall::new(TASKS_GET, Some(json!({ "taskId": id })))
}

/// The `tasks/update` of task `id` (its answers are added per attempt).
pub(super) fn task_update(id: &str) -> StatelessCall {
    StatelessCall::new(TASKS_UPDATE, Some(json!({ "taskId": id })))
}
