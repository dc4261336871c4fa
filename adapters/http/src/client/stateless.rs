//! The 2026-07-28 client over HTTP: drives the core's `StatelessMachine` with the pieces of
//! the client loop (driver.rs): the requests it asks for run as exchanges on the pool, their
//! responses go back as `handle_response_*`, its deadlines on one timer, its input handlers on
//! the executor. Thin: no header, retry, limit or era decision here. With OAuth in the
//! options, each POST goes through the shared authorizer (Bearer, 401/403 → flow → one resend).
//! Async conveniences (`request`, `list_all_tools`, `wait_task`, listen events) wait for one
//! call's events while the loop moves every call.

use std::collections::VecDeque;
use std::future::{Future, Pending};
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::app::client::stateless::{
    CallId, ListenEvent, ListenFilter, StatelessClient, StatelessEvent, StatelessMachine,
    TaskHandle, TaskOutcome, Wire, MAX_QUEUED_EVENTS,
};
use mcp_sansio::app::client::ClientError;
use mcp_sansio::outgoing::Action;
use serde_json::Value;
use smol::{LocalExecutor, Timer};

use super::doorbell::Doorbell;
use super::endpoint_url::{endpoint_parts, parse_endpoint};
use super::exchange::{self, Input, Streamed, Target};
use super::header_pairs;
use super::inflight::InFlight;
use super::pool::Pool;
use super::wake::{next_wake, Wake};
use super::HttpClientOptions;

/// Runs calls of one 2026-07-28 client against one Streamable HTTP endpoint.
pub struct StatelessHttp {
    machine: StatelessMachine,
    pool: Rc<Pool>,
    target: Rc<Target>,
    executor: Rc<LocalExecutor<'static>>,
    inflight: InFlight,
    doorbell: Arc<Doorbell>,
    /// Events of calls no one waits for yet (bounded by [`MAX_QUEUED_EVENTS`]).
    stash: VecDeque<StatelessEvent>,
    timer: Timer,
}

/// Runs `app` with `client` driven against the endpoint at `url` (`http://host:port/path`)
/// on a single-threaded executor; `timeout` bounds each attempt. Of `options`, the static
/// `bearer_token` or the OAuth `authorization` applies to every POST (the rest is for the
/// stateful transport).
pub fn block_on_stateless_http<F, Fut, T>(
    url: &str,
    options: &HttpClientOptions,
    client: StatelessClient,
    timeout: Duration,
    app: F,
) -> io::Result<T>
where
    F: FnOnce(StatelessHttp) -> Fut,
    Fut: Future<Output = T>,
{
    let (addr, authority, path) = endpoint_parts(&parse_endpoint(url)?);
    let executor = Rc::new(LocalExecutor::new());
    let mut machine = StatelessMachine::new(client, Wire::Http, Instant::now());
    machine.set_request_timeout(timeout);
    let doorbell = Arc::new(Doorbell::default());
    let ring = doorbell.clone();
    machine.set_waker(Arc::new(move || ring.ring()));
    let wire = StatelessHttp {
        machine,
        pool: Rc::new(Pool::new(addr, 8, executor.clone())),
        target: Rc::new(Target::new(authority, path, options)),
        executor: executor.clone(),
        inflight: InFlight::new(),
        doorbell,
        stash: VecDeque::new(),
        timer: Timer::never(),
    };
    Ok(smol::block_on(executor.run(app(wire))))
}

impl StatelessHttp {
    /// The machine (its client: version, learned tools, cache).
    pub fn machine(&self) -> &StatelessMachine {
        &self.machine
    }

    /// The machine, to start calls or change its settings.
    pub fn machine_mut(&mut self) -> &mut StatelessMachine {
        &mut self.machine
    }

    /// Bounds each following attempt.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.machine.set_request_timeout(timeout);
    }

    /// Runs `method` with `params` to its final result (every attempt, input round and
    /// version retry is the machine's).
    pub async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ClientError> {
        let call = self.machine.start_call(Instant::now(), method, params);
        self.result(call).await
    }

    /// [`StatelessHttp::request`] with result reuse (`ttlMs`).
    pub async fn request_cached(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ClientError> {
        let call = self
            .machine
            .start_cached_call(Instant::now(), method, params);
        self.result(call).await
    }

    /// Lists every tool (following `nextCursor`), learning their header annotations.
    pub async fn list_all_tools(&mut self) -> Result<Vec<Value>, ClientError> {
        let call = self.machine.start_list_tools(Instant::now());
        let mut listing = self.result(call).await?;
        match listing.get_mut("tools").map(Value::take) {
            Some(Value::Array(tools)) => Ok(tools),
            _ => Ok(Vec::new()),
        }
    }

    /// Follows `task` to its end.
    pub async fn wait_task(&mut self, task: TaskHandle) -> Result<TaskOutcome, ClientError> {
        let call = self.machine.start_task_wait(Instant::now(), task);
        // Bounded: the machine ends every task wait (poll and round caps, timeouts).
        loop {
            match self.next_of(call).await {
                StatelessEvent::TaskDone { outcome, .. } => return outcome,
                StatelessEvent::Done { result, .. } => return result.map(TaskOutcome::Completed),
                _ => continue,
            }
        }
    }

    /// Opens a listen stream; read it with [`StatelessHttp::next_listen_event`], close it with
    /// [`StatelessHttp::cancel`].
    pub fn listen(&mut self, filter: &ListenFilter) -> CallId {
        self.machine.start_listen(Instant::now(), filter)
    }

    /// The next event of listen stream `call`; waits as long as the server keeps the stream
    /// open (bound it with a timer). After [`ListenEvent::Closed`] or an error the stream
    /// is over.
    pub async fn next_listen_event(&mut self, call: CallId) -> Result<ListenEvent, ClientError> {
        match self.next_of(call).await {
            StatelessEvent::Listen { event, .. } => Ok(event),
            StatelessEvent::Done { result, .. } => result.map(ListenEvent::Closed),
            other => Err(ClientError::InvalidResult(format!(
                "not a listen event: {other:?}"
            ))),
        }
    }

    /// Stops call `call` (closing the response closes a listen stream on HTTP).
    pub fn cancel(&mut self, call: CallId) {
        self.machine.cancel(Instant::now(), call);
        self.stash.retain(|e| e.call() != call);
        self.pump();
    }

    /// The final result of a plain call.
    async fn result(&mut self, call: CallId) -> Result<Value, ClientError> {
        // Bounded: a plain call ends with one Done.
        loop {
            if let StatelessEvent::Done { result, .. } = self.next_of(call).await {
                return result;
            }
        }
    }

    /// The next event of `call`, moving every call meanwhile.
    async fn next_of(&mut self, call: CallId) -> StatelessEvent {
        // Bounded by the call: the machine's deadlines end every wait for an answer.
        loop {
            self.pump();
            if let Some(at) = self.stash.iter().position(|e| e.call() == call) {
                if let Some(event) = self.stash.remove(at) {
                    return event;
                }
            }
            match self.machine.poll_timeout() {
                Some(at) => self.timer.set_at(at),
                None => self.timer = Timer::never(),
            }
            let no_app: Option<Pin<&mut Pending<()>>> = None;
            let woke = next_wake(
                no_app,
                &mut self.inflight,
                &self.doorbell,
                Some(&mut self.timer),
            )
            .await;
            let now = Instant::now();
            match woke {
                Wake::Input(input) => {
                    self.input(now, input);
                    while let Some(more) = self.inflight.try_input() {
                        self.input(now, more);
                    }
                }
                Wake::Woken => self.machine.handle_wake(now),
                Wake::Timer => self.machine.handle_timeout(now),
                Wake::App(()) => {}
            }
        }
    }

    /// Performs what the machine asks for and takes its events.
    fn pump(&mut self) {
        while let Some(action) = self.machine.poll_action() {
            match action {
                Action::Send(request) => {
                    let id = request.id;
                    let exchange = exchange::run(
                        self.pool.clone(),
                        self.target.clone(),
                        request,
                        self.inflight.inputs(),
                    );
                    self.inflight.start(id.0, exchange);
                }
                Action::Abort(id) => self.inflight.abort(id.0),
            }
        }
        while let Some(job) = self.machine.poll_job() {
            self.executor.spawn(job).detach();
        }
        while let Some(event) = self.machine.poll_event() {
            self.stash_event(event);
        }
    }

    /// Keeps `event` for its call; a listen stream no one reads past the limit is closed.
    fn stash_event(&mut self, event: StatelessEvent) {
        let unread_listen = matches!(
            event,
            StatelessEvent::Listen { ref event, .. } if !matches!(event, ListenEvent::Closed(_))
        );
        if unread_listen && self.stash.len() >= MAX_QUEUED_EVENTS {
            let call = event.call();
            self.machine.cancel(Instant::now(), call);
            let why = format!("{MAX_QUEUED_EVENTS} listen events unread");
            self.stash.push_back(StatelessEvent::Done {
                call,
                result: Err(ClientError::Limit(why)),
            });
            return;
        }
        self.stash.push_back(event);
    }

    /// One input of an exchange, to the machine.
    fn input(&mut self, now: Instant, input: Input) {
        let machine = &mut self.machine;
        match input {
            Input::Whole {
                id,
                status,
                headers,
                body,
            } => {
                machine.handle_response_head(now, id, status, header_pairs(&headers));
                machine.handle_response_body(now, id, body);
                machine.handle_response_end(now, id);
            }
            Input::Streamed(Streamed::Head {
                id,
                status,
                headers,
            }) => machine.handle_response_head(now, id, status, header_pairs(&headers)),
            Input::Streamed(Streamed::Body { id, chunk }) => {
                machine.handle_response_body(now, id, chunk)
            }
            Input::Streamed(Streamed::End { id }) => machine.handle_response_end(now, id),
            Input::Streamed(Streamed::Failed { id, reason }) => {
                machine.handle_response_failed(now, id, &reason)
            }
        }
    }
}
