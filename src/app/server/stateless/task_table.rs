//! The task table of the tasks extension (2026-07-28, `io.modelcontextprotocol/tasks`) on the
//! server: [`Tasks`], shared by every machine of a server (an HTTP server builds one machine per
//! exchange), holding each task's record and the live side of an active one (its job's cancel
//! token, the inputs it waits for). The application creates one and hands it to every
//! `ServerBuilder::tasks`. How a call becomes a task is `super::tasks`; how a handler's input
//! parks a task is `super::mrtr`; both use this table, which uses neither.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::jsonrpc::{decode, encode_error, encode_result, Incoming, Message, MissingId};
use crate::jsonrpc::{ErrorObject, RawJson};
use crate::runtime::{lock, oneshot, CancelToken, OneshotReceiver, OneshotSender, WakeHook};
use crate::tasks::{parse_task_params, TaskError, TaskLimits, TaskStore, TASKS_CANCEL, TASKS_GET};

/// Random bytes for task ids, from the application (the core draws no randomness).
pub(crate) type Entropy = Arc<dyn Fn() -> [u8; 16] + Send + Sync>;

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

/// Changed tasks waiting for [`Tasks::poll_change`] at most (oldest dropped).
const MAX_CHANGES: usize = 4096;

#[derive(Default)]
struct Hub {
    store: TaskStore,
    runs: HashMap<String, Run>,
    /// With [`Tasks::share`]: the ids of the tasks changed since the driver last looked,
    /// and how it is told.
    feed: Option<(VecDeque<String>, WakeHook)>,
}

/// A task's state for the instances sharing a store: what `tasks/get` answers.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskRecord {
    /// The task's id.
    pub id: String,
    /// Its `DetailedTask` (the `tasks/get` result) now.
    pub detailed: Value,
    /// How long the task lives from now.
    pub ttl: Duration,
}

/// The live side of an active task: its job's cancel token, the inputs it waits for.
#[derive(Default)]
struct Run {
    cancel: CancelToken,
    waiters: HashMap<String, OneshotSender<Value>>,
}

impl Hub {
    /// Task `id` changed: noted for the driver (with [`Tasks::share`]), which is told.
    fn changed(&mut self, id: &str) {
        if let Some((ids, hook)) = &mut self.feed {
            if ids.len() >= MAX_CHANGES {
                ids.pop_front();
            }
            ids.push_back(id.to_owned());
            hook();
        }
    }

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
                feed: None,
            })),
            entropy,
        }
    }

    /// Shares the tasks with other instances: from now on each change (created, waiting for
    /// input, answered, finished, cancelled) is noted for [`Tasks::poll_change`] and `wake`
    /// is called (it must not call back into the table). Without it nothing is noted.
    pub fn share(&self, wake: WakeHook) {
        lock(&self.hub).feed = Some((VecDeque::new(), wake));
    }

    /// The next changed task's record at `now_ms` (expired tasks are skipped), for the
    /// driver to store where other instances answer `tasks/get` from it.
    pub fn poll_change(&self, now_ms: u64) -> Option<TaskRecord> {
        let mut hub = lock(&self.hub);
        loop {
            let id = hub.feed.as_mut()?.0.pop_front()?;
            let Ok(task) = hub.store.get(&id, now_ms) else {
                continue;
            };
            let left = task
                .created_ms
                .saturating_add(task.ttl_ms)
                .saturating_sub(now_ms);
            return Some(TaskRecord {
                detailed: task.detailed_json(),
                ttl: Duration::from_millis(left.max(1)),
                id,
            });
        }
    }

    /// Whether task `id` lives in this table at `now_ms` (created here, not expired).
    pub fn holds(&self, id: &str, now_ms: u64) -> bool {
        lock(&self.hub).store.get(id, now_ms).is_ok()
    }

    /// Serves a `tasks/update` or `tasks/cancel` request another instance forwarded (the
    /// JSON-RPC request's bytes) at `now_ms`: inputs reach the waiting job, a cancellation
    /// stops it. Returns the JSON-RPC response (result or error, with the request's id) for
    /// the forwarding instance to send; `None` when `body` is not such a request.
    pub fn handle_forwarded(&self, body: &bytes::Bytes, now_ms: u64) -> Option<bytes::Bytes> {
        let Ok(Incoming::Single(Message::Request(request))) = decode(body) else {
            return None;
        };
        if request.method == TASKS_GET || !crate::tasks::is_task_method(&request.method) {
            return None;
        }
        let served = self.serve(&request.method, request.params.as_ref(), now_ms);
        let mut buf = Vec::new();
        match served.and_then(|v| {
            RawJson::from_serialize(&v).map_err(|e| ErrorObject::internal(e.to_string()))
        }) {
            Ok(raw) => encode_result(&mut buf, &request.id, &raw),
            Err(e) => encode_error(&mut buf, Some(&request.id), &e, MissingId::Null),
        }
        Some(bytes::Bytes::from(buf))
    }

    /// Creates a task at `now_ms`: its id, `CreateTaskResult` and the job's cancel token.
    pub(super) fn create(&self, now_ms: u64) -> Result<(String, Value, CancelToken), TaskError> {
        let random = (self.entropy)();
        let mut hub = lock(&self.hub);
        hub.expire(now_ms);
        let task = hub.store.create(random, now_ms)?;
        let (id, created) = (task.id.clone(), task.create_result_json());
        let run = Run::default();
        let cancel = run.cancel.clone();
        hub.runs.insert(id.clone(), run);
        hub.changed(&id);
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
        hub.changed(id);
        Some(rx)
    }

    /// The job of `id` ended.
    pub(super) fn finish(&self, id: &str, outcome: Result<Value, ErrorObject>) {
        let mut hub = lock(&self.hub);
        hub.runs.remove(id);
        match outcome {
            Ok(result) => hub.store.complete(id, result),
            Err(e) => hub
                .store
                .fail(id, serde_json::to_value(&e).unwrap_or(Value::Null)),
        }
        hub.changed(id);
    }

    /// Answers one task method at `now_ms`.
    pub(super) fn serve(
        &self,
        method: &str,
        params: Option<&RawJson>,
        now_ms: u64,
    ) -> Result<Value, ErrorObject> {
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
                    hub.changed(&p.task_id);
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
                hub.changed(&p.task_id);
                Ok(json!({"resultType": "complete"}))
            }
        }
    }
}
