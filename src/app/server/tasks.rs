//! The tasks extension on the server (2026-07-28, `io.modelcontextprotocol/tasks`): the
//! shared task table every machine of a server uses ([`Tasks`]), how a `tools/call` of a
//! task-supporting tool becomes a task, and the `tasks/get` / `tasks/update` / `tasks/cancel`
//! answers.
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
//! The table is shared (an HTTP server builds one machine per exchange), so the application
//! creates one [`Tasks`] and hands it to every `ServerBuilder::tasks`.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use serde_json::{json, Map, Value};

use super::mrtr::Watch;
use super::{HandlerResult, Server, Tool};
use crate::jsonrpc::{ErrorObject, RawJson, RequestId};
use crate::model::ClientCapabilities;
use crate::runtime::{lock, oneshot, CancelToken, OneshotReceiver, OneshotSender};
use crate::stateless::validate_meta;
use crate::tasks::{
    client_declares_tasks, missing_tasks_error, parse_task_params, TaskError, TaskLimits,
    TaskStore, TaskSupport, TASKS_CANCEL, TASKS_GET,
};

/// Random bytes for task ids, from the application (the core draws no randomness).
pub type Entropy = Arc<dyn Fn() -> [u8; 16] + Send + Sync>;

/// The task table of a server, shared by every machine serving it (cheap to clone).
#[derive(Clone)]
pub struct Tasks {
    hub: Arc<Mutex<Hub>>,
    entropy: Entropy,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("len", &lock(&self.hub).store.len())
            .finish()
    }
}

#[derive(Default)]
struct Hub {
    store: TaskStore,
    runs: HashMap<String, Run>,
}

/// The live side of an active task: its job's cancel token, the inputs it waits for.
#[derive(Default)]
struct Run {
    cancel: CancelToken,
    waiters: HashMap<String, OneshotSender<Value>>,
}

impl Hub {
    /// Expires tasks at `now_ms`, stopping the jobs of the active ones.
    fn expire(&mut self, now_ms: u64) {
        for id in self.store.expire(now_ms) {
            if let Some(run) = self.runs.remove(&id) {
                run.cancel.cancel();
            }
        }
    }
}

impl Tasks {
    /// An empty table with `limits`; task ids are the hex of `entropy()`.
    pub fn new(limits: TaskLimits, entropy: Entropy) -> Self {
        Tasks {
            hub: Arc::new(Mutex::new(Hub {
                store: TaskStore::new(limits),
                runs: HashMap::new(),
            })),
            entropy,
        }
    }

    /// Runs `f` on the store (inspection, tests).
    pub fn with_store<R>(&self, f: impl FnOnce(&mut TaskStore) -> R) -> R {
        f(&mut lock(&self.hub).store)
    }

    /// Creates a task at `now_ms`: its id, `CreateTaskResult` and the job's cancel token.
    fn create(&self, now_ms: u64) -> Result<(String, Value, CancelToken), TaskError> {
        let random = (self.entropy)();
        let mut hub = lock(&self.hub);
        hub.expire(now_ms);
        let task = hub.store.create(random, now_ms)?;
        let (id, created) = (task.id.clone(), task.create_result_json());
        let run = Run::default();
        let cancel = run.cancel.clone();
        hub.runs.insert(id.clone(), run);
        Ok((id, created, cancel))
    }

    /// Task `id` waits for `request` under `key`; `None` when it cannot (finished, too many).
    pub(super) fn park(
        &self,
        id: &str,
        key: String,
        request: Value,
    ) -> Option<OneshotReceiver<Value>> {
        let mut hub = lock(&self.hub);
        if !hub.store.request_input(id, key.clone(), request) {
            return None;
        }
        let (tx, rx) = oneshot();
        hub.runs.get_mut(id)?.waiters.insert(key, tx);
        Some(rx)
    }

    /// The job of `id` ended.
    fn finish(&self, id: &str, outcome: HandlerResult<Value>) {
        let mut hub = lock(&self.hub);
        hub.runs.remove(id);
        match outcome {
            Ok(result) => hub.store.complete(id, result),
            Err(e) => hub
                .store
                .fail(id, serde_json::to_value(&e).unwrap_or(Value::Null)),
        }
    }

    /// Answers one task method at `now_ms`.
    fn serve(&self, method: &str, params: Option<&RawJson>, now_ms: u64) -> HandlerResult<Value> {
        let p = parse_task_params(method, params)?;
        let mut hub = lock(&self.hub);
        hub.expire(now_ms);
        let unknown = |_| ErrorObject::invalid_params(format!("unknown taskId: {}", p.task_id));
        match method {
            TASKS_GET => Ok(hub
                .store
                .get(&p.task_id, now_ms)
                .map_err(unknown)?
                .detailed_json()),
            TASKS_CANCEL => {
                if hub.store.cancel(&p.task_id, now_ms).map_err(unknown)? {
                    if let Some(run) = hub.runs.remove(&p.task_id) {
                        run.cancel.cancel();
                    }
                }
                Ok(json!({"resultType": "complete"}))
            }
            _ => {
                let answered = hub.store.answer(&p.task_id, p.input_responses, now_ms);
                if let Some(run) = hub.runs.get_mut(&p.task_id) {
                    for (key, answer) in answered.map_err(unknown)? {
                        if let Some(tx) = run.waiters.remove(&key) {
                            tx.send(answer);
                        }
                    }
                }
                Ok(json!({"resultType": "complete"}))
            }
        }
    }
}

/// How a `tools/call` runs.
pub(super) enum TaskRoute {
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
    pub(super) fn task_route(&self, tool: &Tool, id: &RequestId) -> TaskRoute {
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
    pub(super) fn launch_task<T: Send + 'static>(
        &mut self,
        id: RequestId,
        tasks: Tasks,
        fut: impl Future<Output = HandlerResult<T>> + Send + Unpin + 'static,
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
                let e = ErrorObject::internal(format!("no task could be created: {e:?}"));
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
