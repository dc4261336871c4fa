//! The 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) without IO: a
//! bounded task store whose ids come from random bytes the caller passes in and whose clock
//! is the Unix-millisecond time the caller passes in, plus the wire shapes (`CreateTaskResult`,
//! `DetailedTask`) and the params of `tasks/get`, `tasks/update` and `tasks/cancel`.
//!
//! The server layer (`app::server`) runs the jobs and calls into the store; see docs/stateless.md.

mod store;
mod time;
mod wire;

pub use crate::model::TaskSupport;
pub use store::TaskLimits;
pub(crate) use store::{TaskError, TaskStore};
pub use time::iso8601_utc;
pub use wire::{
    client_declares_tasks, is_task_method, missing_tasks_error, parse_task_params, TASKS_CANCEL,
    TASKS_EXTENSION, TASKS_GET, TASKS_UPDATE,
};

#[cfg(test)]
mod tests;
