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
//! at each the call fails with [`ClientError::TimedOut`] or
//! [`ClientError::Limit`].

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::Value;

use super::ops::{task_get, Op, TaskPhase};
use super::{
    reply_from_http_body, reply_from_message, ClientError, ListenEvent, ListenFilter, ListenReader,
    ReplyError, StatelessClient, TaskHandle, TaskOutcome,
};
use crate::model::stateless::InputResponses;
use crate::model::TaskStatus;
use crate::outgoing::{Action, ExchangeId};
use crate::runtime::{Job, Outbox, WakeHook};

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
        result: Result<Value, ClientError>,
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
        outcome: Result<TaskOutcome, ClientError>,
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
type Answer = (CallId, Result<InputResponses, ClientError>);

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
            self.fail(id, ClientError::Transport("the client closed".into()));
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
                return self.fail(call, ClientError::Http { status });
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

    /// When `call` is a listen call with its stream open: `feed` its reader, hand out the events
    /// it read, and say so (the response is the listen stream's, not a reply's).
    fn feed_listen(&mut self, call: CallId, feed: impl FnOnce(&mut ListenReader)) -> bool {
        let Some(Entry {
            op: Op::Listen {
                reader: Some(reader),
            },
            ..
        }) = self.calls.get_mut(&call)
        else {
            return false;
        };
        feed(reader);
        self.drain_listen(call);
        true
    }

    /// The next chunk of exchange `id`'s response body.
    pub fn handle_response_body(&mut self, now: Instant, id: ExchangeId, chunk: Bytes) {
        self.take_answers(now);
        let Some(&call) = self.by_exchange.get(&id) else {
            return;
        };
        if self.feed_listen(call, |reader| reader.handle_body(&chunk)) {
            return;
        }
        let Some(entry) = self.calls.get_mut(&call) else {
            return;
        };
        let Some(attempt) = &mut entry.attempt else {
            return;
        };
        if attempt.body.len().saturating_add(chunk.len()) > MAX_REPLY_BODY {
            let why = format!("a reply body over {MAX_REPLY_BODY} bytes");
            return self.fail(call, ClientError::Limit(why));
        }
        attempt.body.extend_from_slice(&chunk);
    }

    /// Exchange `id`'s response body is complete: the reply is read.
    pub fn handle_response_end(&mut self, now: Instant, id: ExchangeId) {
        self.take_answers(now);
        let Some(call) = self.by_exchange.remove(&id) else {
            return;
        };
        if self.feed_listen(call, ListenReader::handle_end) {
            return;
        }
        let Some(entry) = self.calls.get_mut(&call) else {
            return;
        };
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
            Err(_) if !(200..300).contains(&attempt.status) => Err(ClientError::Http {
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
            self.fail(call, ClientError::Transport(reason.to_owned()));
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
                self.fail(call, ClientError::Limit(why));
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
                self.fail(call, ClientError::TimedOut);
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
}

#[path = "machine_steps.rs"]
mod steps;

#[cfg(test)]
#[path = "machine_tests.rs"]
mod tests;
