//! Multi-round-trip requests (2026-07-28) on the handler side: what a handler's
//! `elicit`/`sample`/`list_roots` do when the request is served statelessly.
//!
//! The handler cannot wait for the client: the server answers with an input-required result
//! and the client retries with the answers. So a handler simply runs again on every retry.
//! Each input it asks for has a key (given, or `elicitation-0`, `sampling-1`, … in call
//! order, which is the same on every run); an answered key resolves at once, an unanswered
//! one is recorded and never resolves. After each poll of the handler, [`Watch`] looks: when
//! inputs were recorded (or one needed a capability the request did not declare) it ends
//! the job, and the server turns the record into the input-required result (or -32021).
//! Recording is complete at that point because the check runs after the poll returns, so
//! inputs asked concurrently (a join) all land in the same round.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde_json::{Map, Value};

use super::task_table::Tasks;
use crate::jsonrpc::ErrorObject;
use crate::model::stateless::{InputKind, InputRequest, InputRequests};
use crate::model::{ClientCapabilities, ClientCapabilityKey};
use crate::runtime::{lock, OneshotReceiver};

/// Inputs recorded by one run of a handler, at most; past it the server answers with the
/// ones it has (a handler asking this many in one round is broken anyway).
const MAX_INPUTS_PER_ROUND: usize = 64;

/// One stateless exchange's inputs: the answers the request brought and what the handler's
/// run asked for that was not answered yet.
#[derive(Debug)]
pub(crate) struct InputState {
    capabilities: ClientCapabilities,
    answers: Map<String, Value>,
    next_auto: AtomicUsize,
    round: Mutex<Round>,
    /// Set once the call became a task: inputs then park the task (see `super::tasks`).
    task: Mutex<Option<(Tasks, String)>>,
}

/// What one run asked for.
#[derive(Debug, Default)]
pub(crate) struct Round {
    /// Unanswered inputs by key.
    pub(crate) requests: InputRequests,
    /// Capabilities an input needed that the request did not declare.
    pub(crate) missing: Vec<ClientCapabilityKey>,
}

impl Round {
    fn needs_answer(&self) -> bool {
        !self.requests.is_empty() || !self.missing.is_empty()
    }
}

impl InputState {
    pub(crate) fn new(capabilities: ClientCapabilities, answers: Map<String, Value>) -> Self {
        InputState {
            capabilities,
            answers,
            next_auto: AtomicUsize::new(0),
            round: Mutex::new(Round::default()),
            task: Mutex::new(None),
        }
    }

    /// The client capabilities the request declared.
    pub(crate) fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// Every answer known so far (earlier rounds from the state, and this retry's).
    pub(crate) fn answers(&self) -> &Map<String, Value> {
        &self.answers
    }

    /// A key for an input asked without one: the method's short name and the call index.
    pub(crate) fn auto_key(&self, kind: InputKind) -> String {
        let n = self.next_auto.fetch_add(1, Ordering::Relaxed);
        let name = match kind {
            InputKind::Elicitation => "elicitation",
            InputKind::Sampling => "sampling",
            InputKind::Roots => "roots",
        };
        format!("{name}-{n}")
    }

    /// The answer to `key` if the request carries a usable one; otherwise records the input
    /// (or the missing capability) for this round and returns `None`.
    pub(crate) fn ask(&self, key: String, request: InputRequest) -> Option<Value> {
        let kind = request.kind();
        let mut round = lock(&self.round);
        if let Some(kind) = kind {
            let needed = kind.required_capability();
            if !needed.is_declared(&self.capabilities) {
                if !round.missing.contains(&needed) {
                    round.missing.push(needed);
                }
                return None;
            }
        }
        if let Some(answer) = self.answers.get(&key).filter(|a| answers_kind(a, kind)) {
            return Some(answer.clone());
        }
        if round.requests.len() < MAX_INPUTS_PER_ROUND {
            round.requests.insert(key, request);
        }
        None
    }

    /// From now on inputs park task `id` of `tasks` instead of ending the run.
    pub(crate) fn enter_task(&self, tasks: Tasks, id: String) {
        *lock(&self.task) = Some((tasks, id));
    }

    /// In a task, parks it on `key` and returns where the `tasks/update` answer arrives;
    /// `None` when the call is not a task.
    pub(crate) fn park_in_task(
        &self,
        key: &str,
        request: &InputRequest,
    ) -> Option<Option<OneshotReceiver<Value>>> {
        let task = lock(&self.task).clone()?;
        let request = serde_json::to_value(request).unwrap_or(Value::Null);
        Some(task.0.park(&task.1, key.to_owned(), request))
    }

    /// Takes what this run recorded.
    pub(crate) fn take_round(&self) -> Round {
        std::mem::take(&mut *lock(&self.round))
    }

    fn needs_answer(&self) -> bool {
        lock(&self.round).needs_answer()
    }
}

/// Whether `answer` has the shape of a result of `kind` (an object with an elicitation
/// `action`, a sampling `content`, or a `roots` array); anything else is asked again.
fn answers_kind(answer: &Value, kind: Option<InputKind>) -> bool {
    let Some(object) = answer.as_object() else {
        return false;
    };
    match kind {
        Some(InputKind::Elicitation) => object.get("action").is_some_and(Value::is_string),
        Some(InputKind::Sampling) => object.contains_key("content"),
        Some(InputKind::Roots) => object.get("roots").is_some_and(Value::is_array),
        None => true,
    }
}

/// A handler future that ends early when its run needs input (see the module docs). Without
/// input state (a stateful session) it is the handler future unchanged.
pub(crate) struct Watch<F> {
    inner: F,
    input: Option<Arc<InputState>>,
}

impl<F> Watch<F> {
    pub(crate) fn new(inner: F, input: Option<Arc<InputState>>) -> Self {
        Watch { inner, input }
    }
}

impl<T, F: Future<Output = Result<T, ErrorObject>> + Unpin> Future for Watch<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let polled = Pin::new(&mut self.inner).poll(cx);
        match (&polled, &self.input) {
            (Poll::Pending, Some(input)) if input.needs_answer() => {
                // The server reads the recorded round when this reply arrives; the error
                // only stands in for it.
                Poll::Ready(Err(ErrorObject::internal("input required")))
            }
            _ => polled,
        }
    }
}
