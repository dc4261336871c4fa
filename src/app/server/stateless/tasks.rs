//! The tasks extension on the server (2026-07-28, `io.modelcontextprotocol/tasks`): how a
//! `tools/call` of a task-supporting tool becomes a task, and the `tasks/get` /
//! `tasks/update` / `tasks/cancel` answers.
//!
//! When a call becomes a task (server-directed): the handler's first poll runs like any
//! stateless call, so an immediate result is answered synchronously and an input asked before
//! the handler first waits on anything else is a multi-round-trip input (`input_required`).
//! Once the handler waits on something else, the server creates the task, answers the flat
//! `CreateTaskResult`, and the handler keeps running as a job whose outcome lands in the
//! table: a result (tool errors included) completes the task, a handler error fails it. From
//! then on its inputs park the task (`input_required`) until `tasks/update` answers them;
//! `tasks/cancel` drops the job.
//!
//! The table itself ([`Tasks`]) is `super::task_table`, shared by every machine of a server.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use serde_json::{Map, Value};

use super::mrtr::Watch;
use super::task_table::Tasks;
use crate::app::server::{Server, Tool};
use crate::jsonrpc::{ErrorObject, RawJson, RequestId};
use crate::model::ClientCapabilities;
use crate::stateless::validate_meta;
use crate::tasks::{client_declares_tasks, missing_tasks_error, TaskSupport};

/// How a `tools/call` runs.
pub(in crate::app::server) enum TaskRoute {
    /// As before (no table, a stateful session, a tool without task support, or an
    /// optional one for a client without the extension).
    Sync,
    /// As a task when the handler does not finish at once.
    Task(Tasks),
    /// Refused: the tool requires tasks and the client did not declare the extension.
    Refuse(ErrorObject),
}

impl Server {
    /// How the call of `tool` by request `id` runs.
    pub(in crate::app::server) fn task_route(&self, tool: &Tool, id: &RequestId) -> TaskRoute {
        let (Some(tasks), Some(input)) = (&self.stateless.tasks, self.input_state(id)) else {
            return TaskRoute::Sync;
        };
        match (
            tool.task_support,
            client_declares_tasks(input.capabilities()),
        ) {
            (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => TaskRoute::Sync,
            (_, true) => TaskRoute::Task(tasks.clone()),
            (TaskSupport::Required, false) => TaskRoute::Refuse(missing_tasks_error()),
        }
    }

    /// Polls the handler once; finished, it is answered as usual, else it becomes a task.
    pub(in crate::app::server) fn launch_task<T: Send + 'static>(
        &mut self,
        id: RequestId,
        tasks: Tasks,
        fut: impl Future<Output = Result<T, ErrorObject>> + Send + Unpin + 'static,
        encode: impl FnOnce(T) -> Value + Send + 'static,
    ) {
        let input = self.input_state(&id);
        let mut fut = Watch::new(fut, input.clone());
        if let Poll::Ready(out) = Pin::new(&mut fut).poll(&mut Context::from_waker(Waker::noop())) {
            return self.run(id, std::future::ready(out), encode);
        }
        // The task has a cancellation of its own; the request's token is not registered.
        self.starting = None;
        let now_ms = self.stateless.unix_ms(self.last_now);
        let (task_id, created, cancel) = match tasks.create(now_ms) {
            Ok(created) => created,
            Err(e) => {
                let e = ErrorObject::internal(format!("no task could be created: {e}"));
                return self.reply(id, Err(e));
            }
        };
        if let Some(input) = &input {
            input.enter_task(tasks.clone(), task_id.clone());
        }
        self.reply(id, Ok(created));
        let mut cancelled = cancel.cancelled();
        let job = async move {
            let outcome = std::future::poll_fn(|cx| {
                if Pin::new(&mut cancelled).poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                Pin::new(&mut fut).poll(cx).map(Some)
            })
            .await;
            if let Some(outcome) = outcome {
                tasks.finish(&task_id, outcome.map(encode));
            }
        };
        self.spawn(Box::pin(job));
    }

    /// A `tasks/*` request: `Some` answer when this server has a task table, `None` to let
    /// the ordinary validation refuse it (-32601).
    pub(super) fn serve_task_method(
        &mut self,
        now: Instant,
        id: RequestId,
        method: &str,
        params: Option<&RawJson>,
    ) -> Option<()> {
        let tasks = self.stateless.tasks.clone()?;
        let meta = match validate_meta(&self.stateless.profile, params) {
            Ok((_, meta)) => meta,
            Err(e) => {
                self.stateless
                    .push_error(id, &e.to_error_object(), Some(e.http_status()));
                return Some(());
            }
        };
        self.stateless.locked = true;
        let declared: ClientCapabilities = meta.client_capabilities.unwrap_or_default();
        if !client_declares_tasks(&declared) {
            self.stateless
                .push_error(id, &missing_tasks_error(), Some(400));
            return Some(());
        }
        match tasks.serve(method, params, self.stateless.unix_ms(now)) {
            Ok(Value::Object(mut body)) => {
                self.add_server_info(&mut body);
                self.push_result(id, &Value::Object(body));
            }
            Ok(_) => self.push_result(id, &Map::new()),
            Err(e) => self.stateless.push_error(id, &e, None),
        }
        Some(())
    }
}
