//! Tasks (2025-11-25, and the status of 2026-07-28 tasks): the task object and status, the `task` request param, the
//! `CreateTaskResult`, and params and results of `tasks/get`, `tasks/result`, `tasks/list`,
//! `tasks/cancel` and `notifications/tasks/status`.

use serde::{Deserialize, Serialize};

use super::Meta;

/// The state of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for input from the requester (e.g. an elicitation).
    InputRequired,
    /// Finished with a result.
    Completed,
    /// Finished with an error.
    Failed,
    /// Cancelled.
    Cancelled,
}

impl TaskStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the task can no longer change state.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

mcp_object! {
    /// A task.
    pub struct Task {
        /// The task's id.
        pub task_id: String,
        /// Its state.
        pub status: TaskStatus,
        /// A human-readable status.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub status_message: Option<String>,
        /// ISO 8601 creation time.
        pub created_at: String,
        /// ISO 8601 time of the last change.
        pub last_updated_at: String,
        /// How long the result is kept, in milliseconds; `null` means unlimited (always written).
        #[serde(default)]
        pub ttl: Option<u64>,
        /// Suggested polling interval in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub poll_interval: Option<u64>,
    }
}

mcp_object! {
    /// The `task` param of a task-augmented request (`tools/call`, `sampling/createMessage`,
    /// `elicitation/create`).
    #[derive(Default)]
    pub struct TaskMetadata {
        /// Requested lifetime of the result in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub ttl: Option<u64>,
    }
}

mcp_object! {
    /// Result of a task-augmented request: the task that was created.
    pub struct CreateTaskResult {
        /// The new task.
        pub task: Task,
    }
    meta: "Result metadata."
}

/// Result of `tasks/get` and `tasks/cancel`, and params of `notifications/tasks/status`: a
/// task plus `_meta`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The task's members, inline.
    #[serde(flatten)]
    pub task: Task,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

page_result! {
    /// Result of `tasks/list`.
    ListTasksResult {
        /// One page of tasks.
        tasks: Task
    }
}
