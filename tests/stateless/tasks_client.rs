//! The client side of the tasks extension (2026-07-28, SEP-2663) against our own server, in
//! memory (the stdio path, `handle_input`) and through the Streamable HTTP endpoint (each
//! exchange its own machine, `Mcp-Name` checked against `taskId`): create → poll → completed
//! at the server's `pollIntervalMs`, tool error → completed + `isError`, handler error →
//! failed, input_required → `tasks/update` with the registered handler → completed, cancel →
//! cancelled (the job dropped), and plain results without the extension.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::client::stateless::*;
use mcp_sansio::app::client::{Client, ClientError};
use mcp_sansio::app::server::*;
use mcp_sansio::http::*;
use mcp_sansio::model::TaskStatus;
use mcp_sansio::model::{ElicitAction, ElicitResult, Implementation};
use mcp_sansio::outgoing::{Action, OutgoingRequest};
use mcp_sansio::runtime::Job;
use mcp_sansio::tasks::{TaskLimits, TaskSupport};
use serde_json::{json, Value};

use crate::task_tools::{forever_tool, tool, Gate};

const WALL_MS: u64 = 1_785_196_800_000;
const POLL_MS: u64 = 40;

fn server(now: Instant, tasks: Option<Tasks>, gate: &Gate, dropped: &Arc<AtomicBool>) -> Server {
    let mut builder = Server::builder(Implementation::new("tasks-client-test", "1"))
        .tool(tool("work", TaskSupport::Optional, gate, "ok"))
        .tool(tool("fails", TaskSupport::Optional, gate, "error"))
        .tool(tool("crash", TaskSupport::Optional, gate, "crash"))
        .tool(tool("inputs", TaskSupport::Optional, gate, "inputs"))
        .tool(
            Tool::new("must", json!({"type": "object"}))
                .task_support(TaskSupport::Required)
                .sync_handler(|_, _| Ok(CallToolResult::text("must"))),
        )
        .tool(forever_tool(gate, dropped));
    if let Some(tasks) = tasks {
        builder = builder.tasks(tasks);
    }
    let mut server = builder.build(now);
    server.handle_wall_clock(now, WALL_MS);
    server
}

fn table() -> Tasks {
    let limits = TaskLimits {
        poll_interval_ms: POLL_MS,
        ..TaskLimits::default()
    };
    let counter = Arc::new(AtomicUsize::new(0));
    Tasks::new(
        limits,
        Arc::new(move || [counter.fetch_add(1, Ordering::SeqCst) as u8 + 1; 16]),
    )
}

/// Where requests go: one in-memory server, or an HTTP endpoint building one per exchange.
enum Backend {
    Memory(Box<Server>),
    Http(Box<Endpoint<Server>>),
}

struct World {
    now: Instant,
    backend: Backend,
    jobs: Vec<Job>,
    gate: Gate,
    /// The gate opens at this sleep (1-based); 0 = never.
    open_at_sleep: usize,
    sleeps: Vec<Instant>,
    dropped: Arc<AtomicBool>,
    methods: Vec<String>,
}

impl World {
    fn new(http: bool, with_table: bool, open_at_sleep: usize) -> Rc<RefCell<World>> {
        let gate = Gate::default();
        let dropped = Arc::new(AtomicBool::new(false));
        let now = Instant::now();
        let tasks = with_table.then(table);
        let backend = if http {
            let (gate, dropped) = (gate.clone(), dropped.clone());
            let factory = move |now| server(now, tasks.clone(), &gate, &dropped);
            Backend::Http(Box::new(Endpoint::new(EndpointConfig::default(), factory)))
        } else {
            Backend::Memory(Box::new(server(now, tasks, &gate, &dropped)))
        };
        Rc::new(RefCell::new(World {
            now,
            backend,
            jobs: Vec::new(),
            gate,
            open_at_sleep,
            sleeps: Vec::new(),
            dropped,
            methods: Vec::new(),
        }))
    }

    fn run_jobs(&mut self) {
        loop {
            let job = match &mut self.backend {
                Backend::Memory(s) => s.poll_job(),
                Backend::Http(e) => e.poll_job(),
            };
            let Some(job) = job else { break };
            self.jobs.push(job);
        }
        let mut cx = Context::from_waker(Waker::noop());
        self.jobs
            .retain_mut(|j| j.as_mut().poll(&mut cx).is_pending());
    }

    /// The response body to `request` (the JSON-RPC response with its id).
    fn exchange(&mut self, request: &OutgoingRequest) -> Bytes {
        self.run_jobs();
        let sent: Value = serde_json::from_slice(&request.body).unwrap();
        self.methods
            .push(sent["method"].as_str().unwrap_or("").to_owned());
        let now = self.now;
        match &mut self.backend {
            Backend::Memory(server) => {
                server.handle_input(now, request.body.clone());
                server.handle_wake(now);
                let mut buf = Vec::new();
                let mut reply = Bytes::new();
                while let Some(t) = server.poll_transmit(&mut buf) {
                    let frame = &buf[buf.len() - t.len..];
                    let message: Value = serde_json::from_slice(frame).unwrap();
                    if message.get("method").is_none() && message["id"] == sent["id"] {
                        reply = Bytes::copy_from_slice(frame);
                    }
                }
                self.run_jobs();
                reply
            }
            Backend::Http(endpoint) => {
                let mut head =
                    HttpRequestHead::new(HttpMethod::Post, "/mcp").header("Host", "localhost:3000");
                for (name, value) in &request.headers {
                    head = head.header(*name, value.as_str());
                }
                for (name, value) in &request.named_headers {
                    head = head.header(name.as_str(), value.as_str());
                }
                let resp = endpoint.handle_request(now, &head, request.body.clone(), [7; 16]);
                let Body::Full(bytes) = &resp.body else {
                    panic!("expected a whole body, got {}", resp.status);
                };
                let reply = bytes.clone();
                self.run_jobs();
                reply
            }
        }
    }

    /// Virtual time: a sleep jumps to its deadline (and may open the gate).
    fn sleep_until(&mut self, deadline: Instant) {
        self.now = self.now.max(deadline);
        self.sleeps.push(deadline);
        if self.sleeps.len() == self.open_at_sleep {
            self.gate.0.store(true, Ordering::SeqCst);
        }
    }
}

/// Drives `m` against the world until call `id` ends (its Done or TaskDone; the task
/// statuses read on the way are collected); with nothing to do, time jumps to the machine's
/// next deadline.
fn settle(
    world: &Rc<RefCell<World>>,
    m: &mut StatelessMachine,
    id: CallId,
    statuses: &mut Vec<TaskStatus>,
) -> StatelessEvent {
    for _ in 0..1000 {
        let now = world.borrow().now;
        while let Some(action) = m.poll_action() {
            let Action::Send(request) = action else {
                continue;
            };
            let body = world.borrow_mut().exchange(&request);
            m.handle_response_head(now, request.id, 200, [("content-type", "application/json")]);
            m.handle_response_body(now, request.id, body);
            m.handle_response_end(now, request.id);
        }
        while let Some(event) = m.poll_event() {
            match event {
                StatelessEvent::TaskStatus { status, .. } => statuses.push(status),
                other if other.call() == id => return other,
                _ => {}
            }
        }
        if let Some(at) = m.poll_timeout() {
            world.borrow_mut().sleep_until(at);
            let now = world.borrow().now;
            m.handle_timeout(now);
        }
    }
    panic!("the call never ended");
}

/// `method` with `params` to its final result.
fn request(
    world: &Rc<RefCell<World>>,
    m: &mut StatelessMachine,
    method: &str,
    params: Value,
) -> Result<Value, ClientError> {
    let now = world.borrow().now;
    let id = m.start_call(now, method, Some(params));
    match settle(world, m, id, &mut Vec::new()) {
        StatelessEvent::Done { result, .. } => result,
        other => panic!("{other:?}"),
    }
}

/// Calls tool `tool`: its result (a `CreateTaskResult` when the server made it a task).
fn call_tool(
    world: &Rc<RefCell<World>>,
    m: &mut StatelessMachine,
    tool: &str,
) -> Result<Value, ClientError> {
    request(world, m, "tools/call", json!({ "name": tool }))
}

/// Follows `task` to its end: the statuses read and the outcome.
fn wait_task(
    world: &Rc<RefCell<World>>,
    m: &mut StatelessMachine,
    task: TaskHandle,
) -> (Vec<TaskStatus>, TaskOutcome) {
    let now = world.borrow().now;
    let id = m.start_task_wait(now, task);
    let mut statuses = Vec::new();
    match settle(world, m, id, &mut statuses) {
        StatelessEvent::TaskDone { outcome, .. } => (statuses, outcome.unwrap()),
        other => panic!("{other:?}"),
    }
}

fn client(tasks: bool, answered: &Arc<AtomicUsize>) -> StatelessMachine {
    let answered = answered.clone();
    let builder = Client::builder(Implementation::new("c", "1")).elicitation_sync(move |p, _| {
        let n = answered.fetch_add(1, Ordering::SeqCst);
        assert!(p.message == "a" || p.message == "b", "{:?}", p.message);
        Ok(ElicitResult {
            action: ElicitAction::Accept,
            content: Some(json!({"x": n + 10}).as_object().unwrap().clone()),
            meta: None,
            extra: Default::default(),
        })
    });
    let mut client = StatelessClient::new(&builder);
    if tasks {
        client.enable_tasks();
    }
    StatelessMachine::new(client, Wire::Http, Instant::now())
}

/// Calls `tool` with tasks declared and follows the task to its end: the statuses read and
/// the outcome.
fn call_and_wait(world: &Rc<RefCell<World>>, tool: &str) -> (Vec<TaskStatus>, TaskOutcome) {
    let answered = Arc::new(AtomicUsize::new(0));
    let mut c = client(true, &answered);
    let Some(task) = TaskHandle::from_create_result(&call_tool(world, &mut c, tool).unwrap())
    else {
        panic!("{tool} did not become a task");
    };
    assert_eq!(task.status(), TaskStatus::Working);
    assert_eq!(task.poll_interval(), Duration::from_millis(POLL_MS));
    wait_task(world, &mut c, task)
}

/// The result of a task that completed; any other outcome fails the test.
fn completed(outcome: TaskOutcome) -> Value {
    let TaskOutcome::Completed(result) = outcome else {
        panic!("{outcome:?}");
    };
    result
}

/// Calls `tool` in a fresh world with one working answer and waits for it to complete: the
/// world and the task's result.
fn completed_call(http: bool, tool: &str) -> (Rc<RefCell<World>>, Value) {
    let world = World::new(http, true, 1);
    let (_, outcome) = call_and_wait(&world, tool);
    (world, completed(outcome))
}

fn both(test: impl Fn(bool)) {
    test(false);
    test(true);
}

#[test]
fn create_poll_completed_at_the_server_interval() {
    both(|http| {
        let world = World::new(http, true, 2);
        let start = world.borrow().now;
        let (statuses, outcome) = call_and_wait(&world, "work");
        let result = completed(outcome);
        assert_eq!(result["content"][0]["text"], "done");
        assert_eq!(statuses.last(), Some(&TaskStatus::Completed));
        let w = world.borrow();
        let step = Duration::from_millis(POLL_MS);
        assert_eq!(
            w.sleeps,
            vec![start + step, start + 2 * step],
            "http={http}"
        );
        assert_eq!(statuses.len(), 2, "one working answer, then the end");
        let gets = w.methods.iter().filter(|m| *m == "tasks/get").count();
        assert_eq!(gets, 2);
    });
}

#[test]
fn a_tool_error_is_a_completed_task_with_is_error() {
    both(|http| {
        let (_, result) = completed_call(http, "fails");
        assert_eq!(result["isError"], true);
        assert_eq!(result["content"][0]["text"], "tool failed");
    });
}

#[test]
fn a_handler_error_is_a_failed_task_with_the_error() {
    both(|http| {
        let world = World::new(http, true, 1);
        let (statuses, outcome) = call_and_wait(&world, "crash");
        let TaskOutcome::Failed(error) = outcome else {
            panic!("{outcome:?}");
        };
        assert_eq!(error.code, -32603);
        assert_eq!(error.message, "crashed");
        assert_eq!(statuses.last(), Some(&TaskStatus::Failed));
    });
}

#[test]
fn input_required_is_answered_by_tasks_update_with_the_registered_handler() {
    both(|http| {
        let (world, result) = completed_call(http, "inputs");
        // The handler answered `a` with 10, then `b` with 11, each through tasks/update.
        assert_eq!(result["content"][0]["text"], "10 11");
        let updates = world
            .borrow()
            .methods
            .iter()
            .filter(|m| *m == "tasks/update")
            .count();
        assert_eq!(updates, 2, "http={http}");
    });
}

#[test]
fn cancel_makes_the_task_cancelled_and_drops_its_job() {
    both(|http| {
        let world = World::new(http, true, 0);
        let answered = Arc::new(AtomicUsize::new(0));
        let mut c = client(true, &answered);
        let created = call_tool(&world, &mut c, "forever").unwrap();
        let Some(task) = TaskHandle::from_create_result(&created) else {
            panic!("no task");
        };
        assert!(!world.borrow().dropped.load(Ordering::SeqCst));
        request(&world, &mut c, "tasks/cancel", json!({"taskId": task.id()})).unwrap();
        world.borrow_mut().run_jobs();
        assert!(
            world.borrow().dropped.load(Ordering::SeqCst),
            "the job is dropped"
        );
        let (_, outcome) = wait_task(&world, &mut c, task);
        assert_eq!(outcome, TaskOutcome::Cancelled);
    });
}

#[test]
fn without_the_extension_calls_answer_plain_results() {
    both(|http| {
        // The client declares tasks, the server keeps no task table: a synchronous result.
        let world = World::new(http, false, 0);
        world.borrow().gate.0.store(true, Ordering::SeqCst);
        let answered = Arc::new(AtomicUsize::new(0));
        let mut c = client(true, &answered);
        assert!(c.client().tasks_enabled());
        let result = call_tool(&world, &mut c, "work").unwrap();
        assert!(
            TaskHandle::from_create_result(&result).is_none(),
            "a server without tasks made a task"
        );
        assert_eq!(result["content"][0]["text"], "done");

        // The server has tasks, the client does not declare them: synchronous too, and a
        // tool that requires tasks is refused with -32021.
        let world = World::new(http, true, 0);
        world.borrow().gate.0.store(true, Ordering::SeqCst);
        let mut c = client(false, &answered);
        assert!(!c.client().tasks_enabled());
        let outcome = call_tool(&world, &mut c, "work").unwrap();
        assert!(
            TaskHandle::from_create_result(&outcome).is_none(),
            "{outcome:?}"
        );
        let Err(ClientError::Rpc(e)) = call_tool(&world, &mut c, "must") else {
            panic!("a required-task tool ran without the extension");
        };
        assert_eq!(e.code, -32021);
    });
}
