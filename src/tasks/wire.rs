//! Wire shapes of the tasks extension: the flat `CreateTaskResult` (`resultType: "task"`),
//! the `DetailedTask` of `tasks/get`, the params of the three task methods, the gate on the
//! client's declared extension and its -32021 error.

use serde_json::{json, Map, Value};

use super::store::Task;
use crate::jsonrpc::{ErrorObject, RawJson};
use crate::model::stateless::missing_capability_error;
use crate::model::ClientCapabilities;
use crate::model::TaskStatus;

/// The extension's identifier, the key under `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// `tasks/get`.
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/update`.
pub const TASKS_UPDATE: &str = "tasks/update";
/// `tasks/cancel`.
pub const TASKS_CANCEL: &str = "tasks/cancel";

/// Whether `method` is one of the extension's three methods (`tasks/result` and
/// `tasks/list` are not: they were removed with v1 tasks).
pub fn is_task_method(method: &str) -> bool {
    matches!(method, TASKS_GET | TASKS_UPDATE | TASKS_CANCEL)
}

/// Whether the declared client capabilities carry the tasks extension.
pub fn client_declares_tasks(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
}

/// -32021 naming the tasks extension in `data.requiredCapabilities.extensions`.
pub fn missing_tasks_error() -> ErrorObject {
    let mut extensions = Map::new();
    extensions.insert(TASKS_EXTENSION.into(), json!({}));
    let required = ClientCapabilities {
        extensions: Some(extensions),
        ..Default::default()
    };
    missing_capability_error(required, TASKS_EXTENSION)
}

/// The params of `tasks/get`, `tasks/update`, `tasks/cancel`.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskParams {
    /// `taskId`.
    pub task_id: String,
    /// `inputResponses` (`tasks/update` only; empty otherwise).
    pub input_responses: Map<String, Value>,
}

/// Parses task-method params: `taskId` must be a string, `inputResponses` (when `method` is
/// `tasks/update`) an object; anything else is -32602.
pub fn parse_task_params(
    method: &str,
    params: Option<&RawJson>,
) -> Result<TaskParams, ErrorObject> {
    let object: Map<String, Value> = params
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| ErrorObject::invalid_params("params must be an object"))?;
    let task_id = object
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorObject::invalid_params("taskId must be a string"))?
        .to_owned();
    let input_responses = match (method, object.get("inputResponses")) {
        (TASKS_UPDATE, Some(Value::Object(r))) => r.clone(),
        (TASKS_UPDATE, _) => {
            return Err(ErrorObject::invalid_params(
                "inputResponses must be an object",
            ))
        }
        _ => Map::new(),
    };
    Ok(TaskParams {
        task_id,
        input_responses,
    })
}

impl Task {
    fn envelope(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("taskId".into(), json!(self.id));
        m.insert("status".into(), json!(self.status.as_str()));
        m.insert(
            "createdAt".into(),
            json!(super::iso8601_utc(self.created_ms)),
        );
        m.insert(
            "lastUpdatedAt".into(),
            json!(super::iso8601_utc(self.updated_ms)),
        );
        m.insert("ttlMs".into(), json!(self.ttl_ms));
        m.insert("pollIntervalMs".into(), json!(self.poll_interval_ms));
        m
    }

    /// The flat `CreateTaskResult` (`resultType: "task"` and the task's fields at the top).
    pub(crate) fn create_result_json(&self) -> Value {
        let mut m = self.envelope();
        m.insert("resultType".into(), json!("task"));
        Value::Object(m)
    }

    /// The `DetailedTask` of `tasks/get` (`resultType: "complete"`): `result` when completed,
    /// `error` when failed (never both), `inputRequests` when input_required.
    pub(crate) fn detailed_json(&self) -> Value {
        let mut m = self.envelope();
        m.insert("resultType".into(), json!("complete"));
        match self.status {
            TaskStatus::Completed => {
                m.insert("result".into(), self.result.clone().unwrap_or(json!({})));
            }
            TaskStatus::Failed => {
                let error = self.error.clone();
                let error = error.unwrap_or(json!({"code": -32603, "message": "task failed"}));
                m.insert("error".into(), error);
            }
            TaskStatus::InputRequired => {
                m.insert(
                    "inputRequests".into(),
                    Value::Object(self.input_requests.clone()),
                );
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        Value::Object(m)
    }
}
