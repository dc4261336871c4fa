//! The client side of the tasks extension (2026-07-28, `io.modelcontextprotocol/tasks`,
//! SEP-2663): declaring it, reading a `tools/call` answered with a `CreateTaskResult` as a
//! task handle, and following the task to its end with `tasks/get` (at the server's
//! `pollIntervalMs`), answering its input requests with `tasks/update`, or dropping it with
//! `tasks/cancel`.
//!
//! Sans-IO like the rest of the client: [`TaskHandle`] turns each `tasks/get` answer and the
//! passed-in `Instant` into the next [`TaskStep`] (poll again at a deadline, answer inputs, or
//! the end); [`super::StatelessMachine::start_task_wait`] follows those steps, its next poll a
//! deadline of `poll_timeout`, so the core itself never waits or reads a clock.

use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::{ClientError, StatelessClient};
use crate::jsonrpc::ErrorObject;
use crate::model::stateless::InputRequests;
use crate::model::TaskStatus;
use crate::tasks::TASKS_EXTENSION;

/// The poll interval used when the server suggests none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The longest wait between two polls, whatever the server suggests (a huge
/// `pollIntervalMs` must not park the client for days).
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(60);

/// `tasks/get` polls one wait makes at most before giving up (a task that stays `working`
/// forever must not keep the client forever).
pub const MAX_TASK_POLLS: u32 = 100_000;

/// How a task ended.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskOutcome {
    /// `completed`: the inlined result (a tool error is a completed task with `isError`).
    Completed(Value),
    /// `failed`: the inlined JSON-RPC error.
    Failed(ErrorObject),
    /// `cancelled`.
    Cancelled,
}

/// What to do next with a task.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum TaskStep {
    /// Send `tasks/get` once this instant has come.
    PollAt(Instant),
    /// Answer these inputs with `tasks/update`, then call [`TaskHandle::handle_updated`].
    Inputs(InputRequests),
    /// The task ended.
    Done(TaskOutcome),
}

/// One task the server created, as far as the client has seen it.
#[derive(Clone, Debug)]
pub struct TaskHandle {
    id: String,
    status: TaskStatus,
    poll_interval: Duration,
    polls: u32,
    input_rounds: u32,
}

impl TaskHandle {
    /// Reads a flat `CreateTaskResult` (`resultType: "task"`, `taskId`, `status`,
    /// `pollIntervalMs`); `None` when `result` is not one.
    pub fn from_create_result(result: &Value) -> Option<TaskHandle> {
        if result.get("resultType").and_then(Value::as_str) != Some("task") {
            return None;
        }
        let id = result.get("taskId")?.as_str()?.to_owned();
        let status = result
            .get("status")
            .and_then(Value::as_str)
            .and_then(parse_status)
            .unwrap_or(TaskStatus::Working);
        Some(TaskHandle {
            id,
            status,
            poll_interval: poll_interval(result).unwrap_or(DEFAULT_POLL_INTERVAL),
            polls: 0,
            input_rounds: 0,
        })
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The last status seen.
    pub fn status(&self) -> TaskStatus {
        self.status
    }

    /// The wait between polls (the server's last `pollIntervalMs`, capped).
    pub fn poll_interval(&self) -> Duration {
        self.poll_interval
    }

    /// `tasks/get` answers handled so far.
    pub fn polls(&self) -> u32 {
        self.polls
    }

    /// The first step after creation at `now`: poll one interval later (at once when the
    /// creation already reported an end, to fetch the inlined outcome).
    #[must_use]
    pub(crate) fn first_step(&self, now: Instant) -> TaskStep {
        if self.status.is_terminal() {
            TaskStep::PollAt(now)
        } else {
            TaskStep::PollAt(now + self.poll_interval)
        }
    }

    /// Sorts a `tasks/get` answer (`DetailedTask`) received at `now` into the next step.
    pub(crate) fn handle_status(
        &mut self,
        now: Instant,
        detailed: &Value,
    ) -> Result<TaskStep, ClientError> {
        let bad = |why: &str| ClientError::InvalidResult(format!("tasks/get: {why}"));
        if detailed.get("taskId").and_then(Value::as_str) != Some(self.id.as_str()) {
            return Err(bad("the answer names another task"));
        }
        let status = detailed
            .get("status")
            .and_then(Value::as_str)
            .and_then(parse_status)
            .ok_or_else(|| bad("missing or unknown status"))?;
        self.status = status;
        self.polls = self.polls.saturating_add(1);
        if let Some(interval) = poll_interval(detailed) {
            self.poll_interval = interval;
        }
        match status {
            TaskStatus::Completed => {
                let result = detailed.get("result").ok_or_else(|| bad("no result"))?;
                Ok(TaskStep::Done(TaskOutcome::Completed(result.clone())))
            }
            TaskStatus::Failed => {
                let error = detailed.get("error").ok_or_else(|| bad("no error"))?;
                let error =
                    serde_json::from_value(error.clone()).map_err(|e| bad(&e.to_string()))?;
                Ok(TaskStep::Done(TaskOutcome::Failed(error)))
            }
            TaskStatus::Cancelled => Ok(TaskStep::Done(TaskOutcome::Cancelled)),
            TaskStatus::InputRequired => {
                let requests: InputRequests = match detailed.get("inputRequests") {
                    None | Some(Value::Null) => InputRequests::new(),
                    Some(v) => serde_json::from_value(v.clone())
                        .map_err(|e| bad(&format!("inputRequests: {e}")))?,
                };
                if requests.is_empty() {
                    // Nothing to answer yet (the server has not filled them in): wait.
                    return self.poll_again(now);
                }
                Ok(TaskStep::Inputs(requests))
            }
            TaskStatus::Working => self.poll_again(now),
        }
    }

    /// After `tasks/update` delivered the answers at `now`: the next poll, one interval
    /// later; fails past `max_rounds` input rounds.
    pub(crate) fn handle_updated(
        &mut self,
        now: Instant,
        max_rounds: u32,
    ) -> Result<TaskStep, ClientError> {
        self.input_rounds = self.input_rounds.saturating_add(1);
        if self.input_rounds > max_rounds {
            return Err(ClientError::TooManyRounds(max_rounds));
        }
        self.status = TaskStatus::Working;
        self.poll_again(now)
    }

    fn poll_again(&self, now: Instant) -> Result<TaskStep, ClientError> {
        if self.polls >= MAX_TASK_POLLS {
            return Err(ClientError::InvalidResult(format!(
                "task {} still {} after {} polls",
                self.id,
                self.status.as_str(),
                self.polls
            )));
        }
        Ok(TaskStep::PollAt(now + self.poll_interval))
    }
}

fn parse_status(status: &str) -> Option<TaskStatus> {
    Some(match status {
        "working" => TaskStatus::Working,
        "input_required" => TaskStatus::InputRequired,
        "completed" => TaskStatus::Completed,
        "failed" => TaskStatus::Failed,
        "cancelled" => TaskStatus::Cancelled,
        _ => return None,
    })
}

/// `pollIntervalMs` as a duration, capped at [`MAX_POLL_INTERVAL`].
fn poll_interval(task: &Value) -> Option<Duration> {
    let ms = task.get("pollIntervalMs")?.as_u64()?;
    Some(Duration::from_millis(ms).min(MAX_POLL_INTERVAL))
}

impl StatelessClient {
    /// Declares the tasks extension in every request's client capabilities: task-supporting
    /// tools may then answer with a task ([`TaskHandle::from_create_result`]).
    pub fn enable_tasks(&mut self) {
        self.capabilities
            .extensions
            .get_or_insert_with(Map::new)
            .insert(TASKS_EXTENSION.into(), json!({}));
    }

    /// [`StatelessClient::enable_tasks`], builder style.
    pub fn with_tasks(mut self) -> Self {
        self.enable_tasks();
        self
    }

    /// Whether requests declare the tasks extension.
    pub fn tasks_enabled(&self) -> bool {
        crate::tasks::client_declares_tasks(&self.capabilities)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created(interval: Value) -> TaskHandle {
        let result = json!({"resultType": "task", "taskId": "t1", "status": "working",
            "pollIntervalMs": interval});
        TaskHandle::from_create_result(&result).unwrap()
    }

    #[test]
    fn only_a_task_result_with_a_string_id_is_a_handle() {
        assert!(TaskHandle::from_create_result(&json!({"content": []})).is_none());
        let complete = json!({"resultType": "complete", "taskId": "t"});
        assert!(TaskHandle::from_create_result(&complete).is_none());
        let bad_id = json!({"resultType": "task", "taskId": 5});
        assert!(TaskHandle::from_create_result(&bad_id).is_none());
    }

    #[test]
    fn polls_follow_the_latest_interval_capped() {
        let now = Instant::now();
        let mut task = created(json!(250));
        assert_eq!(
            task.first_step(now),
            TaskStep::PollAt(now + Duration::from_millis(250))
        );
        let working = json!({"taskId": "t1", "status": "working", "pollIntervalMs": 10});
        let step = task.handle_status(now, &working).unwrap();
        assert_eq!(step, TaskStep::PollAt(now + Duration::from_millis(10)));
        let huge = json!({"taskId": "t1", "status": "working", "pollIntervalMs": u64::MAX});
        let step = task.handle_status(now, &huge).unwrap();
        assert_eq!(step, TaskStep::PollAt(now + MAX_POLL_INTERVAL));
        let none = created(Value::Null);
        assert_eq!(none.poll_interval(), DEFAULT_POLL_INTERVAL);
    }

    #[test]
    fn answers_for_another_task_or_without_outcome_are_malformed() {
        let now = Instant::now();
        let mut task = created(json!(1));
        let other = json!({"taskId": "t2", "status": "completed", "result": {}});
        assert!(matches!(
            task.handle_status(now, &other),
            Err(ClientError::InvalidResult(_))
        ));
        let bare = json!({"taskId": "t1", "status": "completed"});
        assert!(task.handle_status(now, &bare).is_err());
        let unknown = json!({"taskId": "t1", "status": "paused"});
        assert!(task.handle_status(now, &unknown).is_err());
    }

    #[test]
    fn input_rounds_and_polls_are_bounded() {
        let now = Instant::now();
        let mut task = created(json!(1));
        for _ in 0..3 {
            assert!(task.handle_updated(now, 3).is_ok());
        }
        assert!(matches!(
            task.handle_updated(now, 3),
            Err(ClientError::TooManyRounds(3))
        ));
        task.polls = MAX_TASK_POLLS - 1;
        let working = json!({"taskId": "t1", "status": "working"});
        assert!(task.handle_status(now, &working).is_err());
    }
}
