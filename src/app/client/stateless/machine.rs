//! [`StatelessMachine`]: the 2026-07-28 client as a poll machine, in the families of every
//! client machine of the crate (`crate::outgoing`). Inputs: `start_*` (each returns a
//! [`CallId`]), the HTTP response of each exchange (`handle_response_{head,body,end,failed}`)
//! or the lines of a stdio pipe (`handle_line`), `handle_timeout`, `handle_wake`, `cancel`,
//! `close`; every input takes `now`. Outputs: `poll_action` (POST this request, abort that
//! exchange), `poll_event` ([`StatelessEvent`]), `poll_timeout`, and `poll_job` (input
//! handlers still pending after their first poll).
//!
//! Every call ends with exactly one `Done` (or `TaskDone` for a task wait), except a listen
//! stream that closes normally (its last event is `Listen` with [`ListenEvent::Closed`]) and
//! a call the application cancelled (no event). Limits: [`DEFAULT_REQUEST_TIMEOUT`] per
//! attempt, [`MAX_REPLY_BODY`] per reply, [`MAX_CALLS_IN_FLIGHT`], [`MAX_QUEUED_EVENTS`];
//! at each the call fails with [`StatelessClientError::Timeout`] or
//! [`StatelessClientError::Limit`].

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{json, Value};

use super::ops::{task_get, task_update, CacheKey, Op, TaskPhase};
use super::{
    inputs, listen_cancel_notification, reply_from_http_body, reply_from_message, CallStep,
    ListenEvent, ListenFilter, ListenReader, Reply, ReplyError, StatelessClient,
    StatelessClientError, TaskHandle, TaskOutcome, TaskStep, MAX_TOOL_PAGES,
};
use crate::app::runtime::{first_poll, Job, Outbox, WakeHook};
use crate::http::{HttpMethod, HttpText};
use crate::model::stateless::{InputRequests, InputResponses};
use crate::outgoing::{Action, ExchangeId, OutgoingRequest};
use crate::tasks::TaskStatus;

/// How long one attempt waits for its answer (a listen stream: for its response head).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest reply body (or stdio line) read for one attempt.
pub const MAX_REPLY_BODY: usize = 16 * 1024 * 1024;

/// Calls in flight at most; a call started past it fails at once.
pub const MAX_CALLS_IN_FLIGHT: usize = 1024;

/// Listen and task-status events kept unread at most; the call whose event does not fit
/// fails (a call's final event always fits: one per call).
pub const MAX_QUEUED_EVENTS: usize = 4096;

/// Names one call of the machine in its events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub u64);

/// Which wire the machine's requests travel on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// One POST per attempt; responses come through `handle_response_*`.
    Http,
    /// One line per message (the body of each `Send`); lines come through `handle_line`.
    /// Nothing is aborted: a cancelled request gets `notifications/cancelled`.
    Stdio,
}

/// What the machine reports to the application.
#[derive(Debug)]
pub enum StatelessEvent {
    /// A call (`start_call`, `start_cached_call`, `start_list_tools`) ended, or a listen
    /// stream failed.
    Done {
        /// The call.
        call: CallId,
        /// Its final result (`start_list_tools`: `{"tools": [...]}`, every page's tools).
        result: Result<Value, StatelessClientError>,
    },
    /// An event of a listen stream (cached results it made stale are already dropped).
    Listen {
        /// The listen call.
        call: CallId,
        /// The event; after [`ListenEvent::Closed`] the call is over.
        event: ListenEvent,
    },
    /// A `tasks/get` answer of a task wait.
    TaskStatus {
        /// The task wait.
        call: CallId,
        /// The status read.
        status: TaskStatus,
    },
    /// A task wait ended.
    TaskDone {
        /// The task wait.
        call: CallId,
        /// The task's id.
        task_id: String,
        /// How the task ended, or why following it failed.
        outcome: Result<TaskOutcome, StatelessClientError>,
    },
}

impl StatelessEvent {
    /// The call the event belongs to.
    pub fn call(&self) -> CallId {
        match self {
            StatelessEvent::Done { call, .. }
            | StatelessEvent::Listen { call, .. }
            | StatelessEvent::TaskStatus { call, .. }
            | StatelessEvent::TaskDone { call, .. } => *call,
        }
    }
}

/// One attempt in flight: its exchange, JSON-RPC id and the reply read so far.
struct Attempt {
    exchange: ExchangeId,
    rpc_id: i64,
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
}

/// One call: what it does, its attempt in flight, and its deadline (the attempt's timeout,
/// or a task's next poll).
struct Entry {
    op: Op,
    attempt: Option<Attempt>,
    deadline: Option<Instant>,
}

/// Answers of the input handlers, by call.
type Answer = (CallId, Result<InputResponses, StatelessClientError>);

/// The 2026-07-28 client as a poll machine (see the module docs).
pub struct StatelessMachine {
    client: StatelessClient,
    wire: Wire,
    calls: BTreeMap<CallId, Entry>,
    by_exchange: HashMap<ExchangeId, CallId>,
    by_rpc: HashMap<i64, CallId>,
    next_call: u64,
    next_exchange: u64,
    actions: VecDeque<Action>,
    events: VecDeque<StatelessEvent>,
    jobs: VecDeque<Job>,
    answers: Outbox<Answer>,
    request_timeout: Duration,
    last_now: Instant,
    unanswered: bool,
    closed: bool,
}

impl StatelessMachine {
    /// A machine running calls for `client` over `wire`, starting at `now`.
    pub fn new(client: StatelessClient, wire: Wire, now: Instant) -> Self {
        StatelessMachine {
            client,
            wire,
            calls: BTreeMap::new(),
            by_exchange: HashMap::new(),
            by_rpc: HashMap::new(),
            next_call: 1,
            next_exchange: 1,
            actions: VecDeque::new(),
            events: VecDeque::new(),
            jobs: VecDeque::new(),
            answers: Outbox::new(MAX_CALLS_IN_FLIGHT),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            last_now: now,
            unanswered: false,
            closed: false,
        }
    }

    /// The client: identity, version, learned tools, result cache.
    pub fn client(&self) -> &StatelessClient {
        &self.client
    }

    /// The client, to change (tasks extension, round cap, cache).
    pub fn client_mut(&mut self) -> &mut StatelessClient {
        &mut self.client
    }

    /// Bounds each attempt started from now on (default [`DEFAULT_REQUEST_TIMEOUT`]).
    pub fn set_request_timeout(&mut self, timeout: Duration) {
        self.request_timeout = timeout;
    }

    /// Sets the hook called when an input handler job finished: the driver should then call
    /// [`StatelessMachine::handle_wake`].
    pub fn set_waker(&mut self, hook: WakeHook) {
        self.answers.set_wake_hook(hook);
    }

    /// Whether an attempt went unanswered (timed out or cancelled): on stdio, its late answer
    /// may still come on the pipe.
    pub fn had_unanswered(&self) -> bool {
        self.unanswered
    }

    /// Calls in flight.
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len()
    }

    /// Starts `method` with `params` (an object or nothing). A `tools/call` of a tool not
    /// listed yet lists the tools first (its `Mcp-Param-*` headers come from the listing) and
    /// fails if the listing dropped it; a `tools/list` result loses the tools with invalid
    /// header annotations.
    pub fn start_call(&mut self, now: Instant, method: &str, params: Option<Value>) -> CallId {
        self.start_request(now, method, params, None)
    }

    /// [`StatelessMachine::start_call`] with result reuse: a result cached for the same method
    /// and params and still within its `ttlMs` at `now` ends the call at once, without a
    /// request; a fresh result with `ttlMs` > 0 is kept.
    pub fn start_cached_call(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Value>,
    ) -> CallId {
        self.last_now = now;
        if let Some(hit) = self.client.cache.get(now, method, params.as_ref()) {
            let call = self.new_call_id();
            let result = Ok(hit);
            self.events.push_back(StatelessEvent::Done { call, result });
            return call;
        }
        let key = Some(params.clone());
        self.start_request(now, method, params, key)
    }

    /// Lists every tool (following `nextCursor`), learning their header annotations; ends
    /// with `{"tools": [...]}`.
    pub fn start_list_tools(&mut self, now: Instant) -> CallId {
        let op = Op::ListTools {
            call: self.client.call("tools/list", None),
            tools: Vec::new(),
            pages: 0,
            then: None,
        };
        self.start(now, op)
    }

    /// Opens a listen stream for `filter`; its events come as [`StatelessEvent::Listen`].
    /// Cancel the call to close the stream.
    pub fn start_listen(&mut self, now: Instant, filter: &ListenFilter) -> CallId {
        let id = self.start(now, Op::Listen { reader: None });
        if self.calls.contains_key(&id) {
            let call = self
                .client
                .call("subscriptions/listen", Some(filter.to_params()));
            self.send_listen(now, id, call);
        }
        id
    }

    /// Follows `task` to its end: `tasks/get` at the server's interval (the next poll is a
    /// deadline of [`StatelessMachine::poll_timeout`]), input requests answered by the
    /// handlers through `tasks/update`; every status read is a `TaskStatus` event, the end a
    /// `TaskDone`.
    pub fn start_task_wait(&mut self, now: Instant, task: TaskHandle) -> CallId {
        let first = task.first_step(now);
        let op = Op::Task {
            task,
            phase: TaskPhase::Wait,
        };
        let id = self.start_op(now, op);
        if self.calls.contains_key(&id) {
            self.task_step(now, id, first);
        }
        id
    }

    /// Stops call `call`: an HTTP exchange in flight is aborted, a stdio request gets
    /// `notifications/cancelled` (which closes a listen stream). No event follows.
    pub fn cancel(&mut self, now: Instant, call: CallId) {
        self.last_now = now;
        if let Some(entry) = self.calls.remove(&call) {
            self.drop_attempt(entry.attempt);
        }
    }

    /// Ends every call (each fails with a transport error); later starts fail at once.
    pub fn close(&mut self, now: Instant) {
        self.last_now = now;
        self.closed = true;
        let ids: Vec<CallId> = self.calls.keys().copied().collect();
        for id in ids {
            self.fail(
                id,
                StatelessClientError::Transport("the client closed".into()),
            );
        }
    }

    /// Whether the machine closed and has nothing left to hand out.
    pub fn is_closed(&self) -> bool {
        self.closed && self.actions.is_empty()
    }

    /// The response head of exchange `id`.
    pub fn handle_response_head<'a>(
        &mut self,
        now: Instant,
        id: ExchangeId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) {
        self.take_answers(now);
        let Some(&call) = self.by_exchange.get(&id) else {
            return;
        };
        let content_type = headers
            .into_iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.to_owned());
        let Some(entry) = self.calls.get_mut(&call) else {
            return;
        };
        if let Op::Listen { reader } = &mut entry.op {
            // A JSON body is an answer at any status (an error); a stream only on success.
            let lower = content_type.as_deref().unwrap_or("").to_ascii_lowercase();
            let sse = lower.contains("text/event-stream") && (200..300).contains(&status);
            if !(sse || lower.contains("json")) {
                return self.fail(call, StatelessClientError::Http { status });
            }
            let rpc_id = entry.attempt.as_ref().map_or(0, |a| a.rpc_id);
            *reader = Some(ListenReader::new(rpc_id, content_type.as_deref()));
            entry.deadline = None;
            return;
        }
        if let Some(attempt) = &mut entry.attempt {
            attempt.status = status;
            attempt.content_type = content_type;
        }
    }

    /// The next chunk of exchange `id`'s response body.
    pub fn handle_response_body(&mut self, now: Instant, id: ExchangeId, chunk: Bytes) {
        self.take_answers(now);
        let Some(&call) = self.by_exchange.get(&id) else {
            return;
        };
        let Some(entry) = self.calls.get_mut(&call) else {
            return;
        };
        if let Op::Listen {
            reader: Some(reader),
        } = &mut entry.op
        {
            reader.handle_body(&chunk);
            return self.drain_listen(call);
        }
        let Some(attempt) = &mut entry.attempt else {
            return;
        };
        if attempt.body.len().saturating_add(chunk.len()) > MAX_REPLY_BODY {
            let why = format!("a reply body over {MAX_REPLY_BODY} bytes");
            return self.fail(call, StatelessClientError::Limit(why));
        }
        attempt.body.extend_from_slice(&chunk);
    }

    /// Exchange `id`'s response body is complete: the reply is read.
    pub fn handle_response_end(&mut self, now: Instant, id: ExchangeId) {
        self.take_answers(now);
        let Some(call) = self.by_exchange.remove(&id) else {
            return;
        };
        let Some(entry) = self.calls.get_mut(&call) else {
            return;
        };
        if let Op::Listen {
            reader: Some(reader),
        } = &mut entry.op
        {
            reader.handle_end();
            return self.drain_listen(call);
        }
        let Some(attempt) = entry.attempt.take() else {
            return;
        };
        self.by_rpc.remove(&attempt.rpc_id);
        let reply = reply_from_http_body(
            attempt.content_type.as_deref(),
            &attempt.body,
            attempt.rpc_id,
        );
        let outcome = match reply {
            // A status without a JSON-RPC answer (404/405 pages, 5xx) is the transport's word.
            Err(_) if !(200..300).contains(&attempt.status) => Err(StatelessClientError::Http {
                status: attempt.status,
            }),
            other => Ok(other),
        };
        self.handle_outcome(now, call, outcome);
    }

    /// Exchange `id` failed (no connection, or it broke before the body ended).
    pub fn handle_response_failed(&mut self, now: Instant, id: ExchangeId, reason: &str) {
        self.take_answers(now);
        // Removed first: the failed exchange needs no abort.
        if let Some(call) = self.by_exchange.remove(&id) {
            self.fail(call, StatelessClientError::Transport(reason.to_owned()));
        }
    }

    /// One line (without its newline) read from a stdio server: the reply to an attempt, an
    /// event of a listen stream, or something else (passed over). A line over
    /// [`MAX_REPLY_BODY`] fails every call waiting for an answer (the pipe can no longer be
    /// read in step).
    pub fn handle_line(&mut self, now: Instant, line: &[u8]) {
        self.take_answers(now);
        if line.len() > MAX_REPLY_BODY {
            let waiting: Vec<CallId> = self.by_rpc.values().copied().collect();
            for call in waiting {
                let why = format!("a line over {MAX_REPLY_BODY} bytes");
                self.fail(call, StatelessClientError::Limit(why));
            }
            return;
        }
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        if message.get("method").is_some() {
            return self.listen_message(&message);
        }
        let Some(&call) = message
            .get("id")
            .and_then(Value::as_i64)
            .and_then(|id| self.by_rpc.get(&id))
        else {
            return;
        };
        if matches!(
            self.calls.get(&call).map(|e| &e.op),
            Some(Op::Listen { .. })
        ) {
            return self.listen_message(&message);
        }
        let Some(attempt) = self.calls.get_mut(&call).and_then(|e| e.attempt.take()) else {
            return;
        };
        self.by_rpc.remove(&attempt.rpc_id);
        self.by_exchange.remove(&attempt.exchange);
        let reply = reply_from_message(&message, attempt.rpc_id)
            .and_then(|r| r.ok_or(ReplyError::NoResponse));
        self.handle_outcome(now, call, Ok(reply));
    }

    /// Fires what is due at `now`: attempts past their timeout fail, task polls are sent.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.take_answers(now);
        let due: Vec<CallId> = self
            .calls
            .iter()
            .filter(|(_, e)| e.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| *id)
            .collect();
        for call in due {
            let Some(entry) = self.calls.get_mut(&call) else {
                continue;
            };
            entry.deadline = None;
            if entry.attempt.is_some() {
                self.unanswered = true;
                let timeout = self.request_timeout;
                self.fail(call, StatelessClientError::Timeout(timeout));
            } else if let Op::Task { task, phase } = &mut entry.op {
                *phase = TaskPhase::Get(task_get(task.id()));
                self.send(now, call);
            }
        }
    }

    /// Takes the answers of input handler jobs that finished since (call it when the waker
    /// fired).
    pub fn handle_wake(&mut self, now: Instant) {
        self.take_answers(now);
    }

    /// The next request to perform or exchange to abort.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.take_answers(self.last_now);
        self.actions.pop_front()
    }

    /// The next event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<StatelessEvent> {
        self.take_answers(self.last_now);
        self.events.pop_front()
    }

    /// An input handler still pending after its first poll: run it on any executor; its
    /// answer comes back through the waker and [`StatelessMachine::handle_wake`].
    #[must_use]
    pub fn poll_job(&mut self) -> Option<Job> {
        self.jobs.pop_front()
    }

    /// When [`StatelessMachine::handle_timeout`] must be called next.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.calls.values().filter_map(|e| e.deadline).min()
    }

    fn new_call_id(&mut self) -> CallId {
        let id = CallId(self.next_call);
        self.next_call += 1;
        id
    }

    /// A request call (see [`StatelessMachine::start_call`]); `cache`: store its result.
    fn start_request(
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
    fn start(&mut self, now: Instant, op: Op) -> CallId {
        let listen = matches!(op, Op::Listen { .. });
        let id = self.start_op(now, op);
        if !listen && self.calls.contains_key(&id) {
            self.send(now, id);
        }
        id
    }

    /// Registers `op`, or fails it at once when closed or at the limit of calls.
    fn start_op(&mut self, now: Instant, op: Op) -> CallId {
        self.last_now = now;
        self.take_answers(now);
        let id = self.new_call_id();
        let refusal = if self.closed {
            Some(StatelessClientError::Transport("the client closed".into()))
        } else if self.calls.len() >= MAX_CALLS_IN_FLIGHT {
            Some(StatelessClientError::Limit(format!(
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
    fn send(&mut self, now: Instant, call: CallId) {
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
    fn send_listen(&mut self, now: Instant, id: CallId, mut call: super::StatelessCall) {
        let exchange = ExchangeId(self.next_exchange);
        self.next_exchange += 1;
        let (rpc_id, outgoing) = self.client.next_request(&mut call, exchange);
        self.arm(now, id, exchange, rpc_id, outgoing);
    }

    fn arm(
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
    fn drop_attempt(&mut self, attempt: Option<Attempt>) {
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
    fn handle_outcome(
        &mut self,
        now: Instant,
        call: CallId,
        outcome: Result<Result<Reply, ReplyError>, StatelessClientError>,
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
                StatelessClientError::Malformed("tasks/update answered with input_required".into()),
            ),
            CallStep::Inputs(requests) => self.answer(call, requests),
            CallStep::Done(result) => self.done(now, call, result),
            CallStep::Failed(error) => self.fail(call, error),
        }
    }

    /// Runs the handlers on `requests` as a job; its answer comes back through the outbox.
    fn answer(&mut self, call: CallId, requests: InputRequests) {
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
    fn take_answers(&mut self, now: Instant) {
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
    fn done(&mut self, now: Instant, call: CallId, mut result: Value) {
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
    fn next_page(&mut self, now: Instant, id: CallId, mut page: Value) {
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
                self.fail(id, StatelessClientError::Malformed(why));
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
    fn task_step(&mut self, now: Instant, call: CallId, step: TaskStep) {
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
    fn listen_message(&mut self, message: &Value) {
        let open: Vec<(CallId, i64)> = self
            .calls
            .iter()
            .filter(|(_, e)| matches!(e.op, Op::Listen { .. }))
            .filter_map(|(id, e)| Some((*id, e.attempt.as_ref()?.rpc_id)))
            .collect();
        for (call, rpc_id) in open {
            if let Some(event) = super::listen_event_from_message(message, rpc_id) {
                if let Some(entry) = self.calls.get_mut(&call) {
                    entry.deadline = None;
                }
                self.listen_event(call, event);
            }
        }
    }

    /// Hands out what the HTTP listen reader of `call` read.
    fn drain_listen(&mut self, call: CallId) {
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
    fn listen_event(&mut self, call: CallId, event: ListenEvent) {
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
    fn drop_stdio_quietly(&mut self, attempt: Option<Attempt>) {
        let Some(attempt) = attempt else {
            return;
        };
        self.by_rpc.remove(&attempt.rpc_id);
        if self.by_exchange.remove(&attempt.exchange).is_some() && self.wire == Wire::Http {
            self.actions.push_back(Action::Abort(attempt.exchange));
        }
    }

    /// Queues an event that may be refused: past [`MAX_QUEUED_EVENTS`] its call fails.
    fn push_optional(&mut self, call: CallId, event: StatelessEvent) {
        if self.events.len() < MAX_QUEUED_EVENTS {
            self.events.push_back(event);
            return;
        }
        let why = format!("{MAX_QUEUED_EVENTS} events queued unread");
        self.fail(call, StatelessClientError::Limit(why));
    }

    /// Ends `call` with `error`, stopping its attempt.
    fn fail(&mut self, call: CallId, error: StatelessClientError) {
        let Some(entry) = self.calls.remove(&call) else {
            return;
        };
        self.drop_attempt_quiet_on_stdio(entry.attempt);
        self.push_final(call, &entry.op, Err(error));
    }

    /// A failed attempt: aborted on HTTP; on stdio forgotten (its late answer is passed over).
    fn drop_attempt_quiet_on_stdio(&mut self, attempt: Option<Attempt>) {
        match self.wire {
            Wire::Http => self.drop_attempt(attempt),
            Wire::Stdio => self.drop_stdio_quietly(attempt),
        }
    }

    /// Ends `call` (not a task wait) with `result`.
    fn finish(&mut self, call: CallId, result: Result<Value, StatelessClientError>) {
        if let Some(entry) = self.calls.remove(&call) {
            self.drop_stdio_quietly(entry.attempt);
        }
        self.events.push_back(StatelessEvent::Done { call, result });
    }

    /// Ends task wait `call` with `outcome`.
    fn finish_task(&mut self, call: CallId, outcome: Result<TaskOutcome, StatelessClientError>) {
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
    fn push_final(&mut self, call: CallId, op: &Op, result: Result<Value, StatelessClientError>) {
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

#[cfg(test)]
#[path = "machine_tests.rs"]
mod tests;
