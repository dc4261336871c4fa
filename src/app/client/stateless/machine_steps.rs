//! How the [`StatelessMachine`] moves a call along: registering and refusing calls, sending
//! attempts, sorting what came back (the next attempt, the input handlers as a job, the next
//! `tools/list` page, the next task poll, a listen event) and ending calls with their event.

use std::time::Instant;

use bytes::Bytes;
use serde_json::{json, Value};

use super::super::ops::{task_update, CacheKey, Op, TaskPhase};
use super::super::{
    inputs, listen_cancel_notification, listen_event_from_message, CallStep, ClientError,
    ListenEvent, Reply, ReplyError, StatelessCall, TaskOutcome, TaskStep, MAX_TOOL_PAGES,
};
use super::{
    Attempt, CallId, Entry, StatelessEvent, StatelessMachine, Wire, MAX_CALLS_IN_FLIGHT,
    MAX_QUEUED_EVENTS,
};
use crate::http::{HttpMethod, HttpText};
use crate::model::stateless::InputRequests;
use crate::outgoing::{Action, ExchangeId, OutgoingRequest};
use crate::runtime::{first_poll, Job};

impl StatelessMachine {
    pub(super) fn new_call_id(&mut self) -> CallId {
        let id = CallId(self.next_call);
        self.next_call += 1;
        id
    }

    /// A request call (see [`StatelessMachine::start_call`]); `cache`: store its result.
    pub(super) fn start_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Value>,
        cache: CacheKey,
    ) -> CallId {
        let call = self.client.call(method, params);
        let tool = (method == "tools/call").then(|| {
            call.params
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        });
        let op = match tool {
            Some(tool) if self.client.must_list_before(&tool) => Op::ListTools {
                call: self.client.call("tools/list", None),
                tools: Vec::new(),
                pages: 0,
                then: Some(Box::new((call, cache))),
            },
            Some(tool) => match self.client.refuses_tool(&tool) {
                Some(error) => {
                    let call = self.new_call_id();
                    let result = Err(error);
                    self.events.push_back(StatelessEvent::Done { call, result });
                    return call;
                }
                None => Op::Call { call, cache },
            },
            _ => Op::Call { call, cache },
        };
        self.start(now, op)
    }

    /// Registers `op` and sends its first attempt (a listen stream sends its own).
    pub(super) fn start(&mut self, now: Instant, op: Op) -> CallId {
        let listen = matches!(op, Op::Listen { .. });
        let id = self.start_op(now, op);
        if !listen && self.calls.contains_key(&id) {
            self.send(now, id);
        }
        id
    }

    /// Registers `op`, or fails it at once when closed or at the limit of calls.
    pub(super) fn start_op(&mut self, now: Instant, op: Op) -> CallId {
        self.last_now = now;
        self.take_answers(now);
        let id = self.new_call_id();
        let refusal = if self.closed {
            Some(ClientError::Transport("the client closed".into()))
        } else if self.calls.len() >= MAX_CALLS_IN_FLIGHT {
            Some(ClientError::Limit(format!(
                "{MAX_CALLS_IN_FLIGHT} calls in flight"
            )))
        } else {
            None
        };
        match refusal {
            Some(error) => self.push_final(id, &op, Err(error)),
            None => {
                let entry = Entry {
                    op,
                    attempt: None,
                    deadline: None,
                };
                self.calls.insert(id, entry);
            }
        }
        id
    }

    /// Sends the next attempt of `call`'s current request.
    pub(super) fn send(&mut self, now: Instant, call: CallId) {
        let exchange = ExchangeId(self.next_exchange);
        self.next_exchange += 1;
        let Some(entry) = self.calls.get_mut(&call) else {
            return;
        };
        let Some(request) = entry.op.current() else {
            return;
        };
        let (rpc_id, outgoing) = self.client.next_request(request, exchange);
        self.arm(now, call, exchange, rpc_id, outgoing);
    }

    /// Sends the listen request of listen call `id`.
    pub(super) fn send_listen(&mut self, now: Instant, id: CallId, mut call: StatelessCall) {
        let exchange = ExchangeId(self.next_exchange);
        self.next_exchange += 1;
        let (rpc_id, outgoing) = self.client.next_request(&mut call, exchange);
        self.arm(now, id, exchange, rpc_id, outgoing);
    }

    pub(super) fn arm(
        &mut self,
        now: Instant,
        call: CallId,
        exchange: ExchangeId,
        rpc_id: i64,
        outgoing: OutgoingRequest,
    ) {
        let Some(entry) = self.calls.get_mut(&call) else {
            return;
        };
        entry.attempt = Some(Attempt {
            exchange,
            rpc_id,
            status: 0,
            content_type: None,
            body: Vec::new(),
        });
        entry.deadline = Some(now + self.request_timeout);
        self.by_exchange.insert(exchange, call);
        self.by_rpc.insert(rpc_id, call);
        self.actions.push_back(Action::Send(outgoing));
    }

    /// Forgets an attempt and stops it on the wire.
    pub(super) fn drop_attempt(&mut self, attempt: Option<Attempt>) {
        let Some(attempt) = attempt else {
            return;
        };
        self.by_rpc.remove(&attempt.rpc_id);
        let live = self.by_exchange.remove(&attempt.exchange).is_some();
        match self.wire {
            Wire::Http if live => self.actions.push_back(Action::Abort(attempt.exchange)),
            Wire::Http => {}
            Wire::Stdio => {
                self.unanswered = true;
                let exchange = ExchangeId(self.next_exchange);
                self.next_exchange += 1;
                self.actions.push_back(Action::Send(OutgoingRequest {
                    id: exchange,
                    method: HttpMethod::Post,
                    url: None,
                    headers: vec![("Content-Type", HttpText::from_static("application/json"))],
                    named_headers: Vec::new(),
                    body: Bytes::from(listen_cancel_notification(attempt.rpc_id)),
                }));
            }
        }
    }

    /// What came back for `call`'s attempt, sorted into its next step.
    pub(super) fn handle_outcome(
        &mut self,
        now: Instant,
        call: CallId,
        outcome: Result<Result<Reply, ReplyError>, ClientError>,
    ) {
        let reply = match outcome {
            Ok(reply) => reply,
            Err(error) => return self.fail(call, error),
        };
        let Some(entry) = self.calls.get_mut(&call) else {
            return;
        };
        entry.deadline = None;
        let updating = matches!(
            entry.op,
            Op::Task {
                phase: TaskPhase::Update(..),
                ..
            }
        );
        let Some(request) = entry.op.current() else {
            return;
        };
        match self.client.handle_reply(request, reply) {
            CallStep::Send => self.send(now, call),
            CallStep::Inputs(_) if updating => self.fail(
                call,
                ClientError::InvalidResult("tasks/update answered with input_required".into()),
            ),
            CallStep::Inputs(requests) => self.answer(call, requests),
            CallStep::Done(result) => self.done(now, call, result),
            CallStep::Failed(error) => self.fail(call, error),
        }
    }

    /// Runs the handlers on `requests` as a job; its answer comes back through the outbox.
    pub(super) fn answer(&mut self, call: CallId, requests: InputRequests) {
        let handlers = self.client.handlers.clone();
        let outbox = self.answers.clone();
        let job: Job = Box::pin(async move {
            let answer = inputs::answer(&handlers, &requests).await;
            outbox.push_required((call, answer));
        });
        if let Some(pending) = first_poll(job) {
            self.jobs.push_back(pending);
        }
    }

    /// Takes the handlers' answers: each call retries with them.
    pub(super) fn take_answers(&mut self, now: Instant) {
        self.last_now = now;
        for (call, answer) in self.answers.drain() {
            let responses = match answer {
                Ok(responses) => responses,
                Err(error) => {
                    self.fail(call, error);
                    continue;
                }
            };
            let Some(entry) = self.calls.get_mut(&call) else {
                continue;
            };
            match &mut entry.op {
                Op::Task { task, phase } => {
                    *phase = TaskPhase::Update(task_update(task.id()), responses);
                }
                op => {
                    if let Some(request) = op.current() {
                        request.provide_inputs(responses);
                    }
                }
            }
            self.send(now, call);
        }
    }

    /// `call`'s current request ended with `result`.
    pub(super) fn done(&mut self, now: Instant, call: CallId, mut result: Value) {
        let Some(entry) = self.calls.get_mut(&call) else {
            return;
        };
        match &mut entry.op {
            Op::Call {
                call: request,
                cache,
            } => {
                if request.method() == "tools/list" {
                    self.client.learn_tools(&mut result);
                }
                if let Some(params) = cache {
                    let method = request.method().to_owned();
                    self.client
                        .cache
                        .store(now, &method, params.as_ref(), &result);
                }
                self.finish(call, Ok(result));
            }
            Op::ListTools { .. } => self.next_page(now, call, result),
            Op::Task { task, phase } => {
                let step = match phase {
                    TaskPhase::Update(..) => task.handle_updated(now, self.client.max_input_rounds),
                    _ => {
                        let step = task.handle_status(now, &result);
                        let status = task.status();
                        self.push_optional(call, StatelessEvent::TaskStatus { call, status });
                        step
                    }
                };
                match step {
                    Ok(step) => self.task_step(now, call, step),
                    Err(error) => self.fail(call, error),
                }
            }
            Op::Listen { .. } => {}
        }
    }

    /// A `tools/list` page came: learn it, then the next page, the waiting call, or the end.
    pub(super) fn next_page(&mut self, now: Instant, id: CallId, mut page: Value) {
        self.client.learn_tools(&mut page);
        let Some(entry) = self.calls.get_mut(&id) else {
            return;
        };
        let Op::ListTools {
            call,
            tools,
            pages,
            then,
        } = &mut entry.op
        else {
            return;
        };
        if let Some(Value::Array(mut listed)) = page.get_mut("tools").map(Value::take) {
            tools.append(&mut listed);
        }
        *pages += 1;
        match page.get("nextCursor") {
            Some(next) if !next.is_null() && *pages >= MAX_TOOL_PAGES => {
                let why =
                    format!("tools/list kept returning nextCursor past {MAX_TOOL_PAGES} pages");
                self.fail(id, ClientError::InvalidResult(why));
            }
            Some(next) if !next.is_null() => {
                *call = self
                    .client
                    .call("tools/list", Some(json!({ "cursor": next })));
                self.send(now, id);
            }
            _ => match then.take().map(|then| *then) {
                Some((request, cache)) => {
                    let tool = request
                        .params
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    if let Some(error) = self.client.refuses_tool(tool) {
                        return self.fail(id, error);
                    }
                    entry.op = Op::Call {
                        call: request,
                        cache,
                    };
                    self.send(now, id);
                }
                None => {
                    let all = std::mem::take(tools);
                    self.finish(id, Ok(json!({ "tools": all })));
                }
            },
        }
    }

    /// The next step of a task wait.
    pub(super) fn task_step(&mut self, now: Instant, call: CallId, step: TaskStep) {
        let Some(entry) = self.calls.get_mut(&call) else {
            return;
        };
        let Op::Task { phase, .. } = &mut entry.op else {
            return;
        };
        match step {
            TaskStep::PollAt(at) => {
                *phase = TaskPhase::Wait;
                entry.deadline = Some(at);
                if at <= now {
                    self.handle_timeout(now);
                }
            }
            TaskStep::Inputs(requests) => {
                *phase = TaskPhase::Answer;
                self.answer(call, requests);
            }
            TaskStep::Done(outcome) => self.finish_task(call, Ok(outcome)),
        }
    }

    /// Reads the listen messages of a stdio line (every open stream takes what is tagged
    /// for it, and the closing response of its own request).
    pub(super) fn listen_message(&mut self, message: &Value) {
        let open: Vec<(CallId, i64)> = self
            .calls
            .iter()
            .filter(|(_, e)| matches!(e.op, Op::Listen { .. }))
            .filter_map(|(id, e)| Some((*id, e.attempt.as_ref()?.rpc_id)))
            .collect();
        for (call, rpc_id) in open {
            if let Some(event) = listen_event_from_message(message, rpc_id) {
                if let Some(entry) = self.calls.get_mut(&call) {
                    entry.deadline = None;
                }
                self.listen_event(call, event);
            }
        }
    }

    /// Hands out what the HTTP listen reader of `call` read.
    pub(super) fn drain_listen(&mut self, call: CallId) {
        // Bounded: the reader holds at most its own limit of events.
        loop {
            let Some(Entry {
                op: Op::Listen {
                    reader: Some(reader),
                },
                ..
            }) = self.calls.get_mut(&call)
            else {
                return;
            };
            let Some(event) = reader.poll_event() else {
                return;
            };
            self.listen_event(call, event);
        }
    }

    /// One event of listen stream `call`: the cache learns it, the application gets it; the
    /// closing response ends the call.
    pub(super) fn listen_event(&mut self, call: CallId, event: ListenEvent) {
        self.client.handle_listen_event(&event);
        if matches!(event, ListenEvent::Closed(_)) {
            if let Some(entry) = self.calls.remove(&call) {
                self.drop_stdio_quietly(entry.attempt);
            }
            self.events
                .push_back(StatelessEvent::Listen { call, event });
            return;
        }
        self.push_optional(call, StatelessEvent::Listen { call, event });
    }

    /// A listen stream that ended by itself: forget its attempt (an HTTP body still open is
    /// aborted; on stdio nothing is sent, the server already closed it).
    pub(super) fn drop_stdio_quietly(&mut self, attempt: Option<Attempt>) {
        let Some(attempt) = attempt else {
            return;
        };
        self.by_rpc.remove(&attempt.rpc_id);
        if self.by_exchange.remove(&attempt.exchange).is_some() && self.wire == Wire::Http {
            self.actions.push_back(Action::Abort(attempt.exchange));
        }
    }

    /// Queues an event that may be refused: past [`MAX_QUEUED_EVENTS`] its call fails.
    pub(super) fn push_optional(&mut self, call: CallId, event: StatelessEvent) {
        if self.events.len() < MAX_QUEUED_EVENTS {
            self.events.push_back(event);
            return;
        }
        let why = format!("{MAX_QUEUED_EVENTS} events queued unread");
        self.fail(call, ClientError::Limit(why));
    }

    /// Ends `call` with `error`, stopping its attempt.
    pub(super) fn fail(&mut self, call: CallId, error: ClientError) {
        let Some(entry) = self.calls.remove(&call) else {
            return;
        };
        self.drop_attempt_quiet_on_stdio(entry.attempt);
        self.push_final(call, &entry.op, Err(error));
    }

    /// A failed attempt: aborted on HTTP; on stdio forgotten (its late answer is passed over).
    pub(super) fn drop_attempt_quiet_on_stdio(&mut self, attempt: Option<Attempt>) {
        match self.wire {
            Wire::Http => self.drop_attempt(attempt),
            Wire::Stdio => self.drop_stdio_quietly(attempt),
        }
    }

    /// Ends `call` (not a task wait) with `result`.
    pub(super) fn finish(&mut self, call: CallId, result: Result<Value, ClientError>) {
        if let Some(entry) = self.calls.remove(&call) {
            self.drop_stdio_quietly(entry.attempt);
        }
        self.events.push_back(StatelessEvent::Done { call, result });
    }

    /// Ends task wait `call` with `outcome`.
    pub(super) fn finish_task(&mut self, call: CallId, outcome: Result<TaskOutcome, ClientError>) {
        let task_id = match self.calls.remove(&call) {
            Some(entry) => {
                self.drop_stdio_quietly(entry.attempt);
                entry.op.task_id()
            }
            None => String::new(),
        };
        self.events.push_back(StatelessEvent::TaskDone {
            call,
            task_id,
            outcome,
        });
    }

    /// The final event of a call that is no longer registered.
    pub(super) fn push_final(&mut self, call: CallId, op: &Op, result: Result<Value, ClientError>) {
        let event = match (op.is_task(), result) {
            (true, Err(error)) => StatelessEvent::TaskDone {
                call,
                task_id: op.task_id(),
                outcome: Err(error),
            },
            (_, result) => StatelessEvent::Done { call, result },
        };
        self.events.push_back(event);
    }
}
