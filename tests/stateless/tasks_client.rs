//! The client side of the tasks extension (2026-07-28, SEP-2663) against our own server, in
//! memory (the stdio path, `handle_input`) and through the Streamable HTTP endpoint (each
//! exchange its own machine, `Mcp-Name` checked against `taskId`): create → poll → completed
//! at the server's `pollIntervalMs`, tool error → completed + `isError`, handler error →
//! failed, input_required → `tasks/update` with the registered handler → completed, cancel →
//! cancelled (the job dropped), and plain results without the extension.

use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::client::stateless::*;
use mcp_sansio::app::client::Client;
use mcp_sansio::app::server::*;
use mcp_sansio::http::*;
use mcp_sansio::model::{ElicitAction, ElicitResult, Implementation};
use mcp_sansio::runtime::Job;
use mcp_sansio::tasks::{TaskLimits, TaskStatus, TaskSupport};
use serde_json::{json, Value};

use crate::task_tools::{tool, DropFlag, Gate};

const WALL_MS: u64 = 1_785_196_800_000;
const POLL_MS: u64 = 40;

fn server(now: Instant, tasks: Option<Tasks>, gate: &Gate, dropped: &Arc<AtomicBool>) -> Server {
    let flag = dropped.clone();
    let gate2 = gate.clone();
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
        .tool(
            Tool::new("forever", json!({"type": "object"}))
                .task_support(TaskSupport::Optional)
                .handler(move |_, _| {
                    let guard = DropFlag(flag.clone());
                    let wait = gate2.wait();
                    async move {
                        let _guard = guard;
                        wait.await;
                        std::future::pending::<()>().await;
                        Ok(CallToolResult::text("never"))
                    }
                }),
        );
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

    fn exchange(&mut self, request: &StatelessRequest) -> Result<Reply, ReplyError> {
        self.run_jobs();
        self.methods.push(request.method.clone());
        let now = self.now;
        match &mut self.backend {
            Backend::Memory(server) => {
                server.handle_input(now, Bytes::from(request.body.clone()));
                server.handle_wake(now);
                let mut buf = Vec::new();
                let mut reply = Err(ReplyError::NoResponse);
                while let Some(t) = server.poll_transmit(&mut buf) {
                    let message: Value = serde_json::from_slice(&buf[buf.len() - t.len..]).unwrap();
                    if let Some(r) = reply_from_message(&message, request.id).transpose() {
                        reply = r;
                    }
                }
                self.run_jobs();
                reply
            }
            Backend::Http(endpoint) => {
                let mut head = HttpRequestHead::new(HttpMethod::Post, "/mcp")
                    .header("Host", "localhost:3000")
                    .header("Accept", "application/json, text/event-stream")
                    .header("Content-Type", "application/json");
                for (name, value) in &request.headers {
                    head = head.header(name, value);
                }
                let body = Bytes::from(request.body.clone());
                let resp = endpoint.handle_request(now, &head, body, [7; 16]);
                let Body::Full(bytes) = &resp.body else {
                    panic!("expected a whole body, got {}", resp.status);
                };
                let reply = reply_from_http_body(Some("application/json"), bytes, request.id);
                self.run_jobs();
                reply
            }
        }
    }
}

struct Transport(Rc<RefCell<World>>);

impl StatelessTransport for Transport {
    async fn exchange(
        &mut self,
        request: &StatelessRequest,
    ) -> Result<Result<Reply, ReplyError>, StatelessClientError> {
        Ok(self.0.borrow_mut().exchange(request))
    }
}

/// Virtual time: a sleep jumps to its deadline (and may open the gate).
struct Clock(Rc<RefCell<World>>);

impl TaskClock for Clock {
    fn now(&mut self) -> Instant {
        self.0.borrow().now
    }
    fn sleep_until(&mut self, deadline: Instant) -> impl Future<Output = ()> {
        let mut world = self.0.borrow_mut();
        world.now = world.now.max(deadline);
        world.sleeps.push(deadline);
        if world.sleeps.len() == world.open_at_sleep {
            world.gate.0.store(true, Ordering::SeqCst);
        }
        std::future::ready(())
    }
}

fn run<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1000 {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
    panic!("the future never finished");
}

fn client(tasks: bool, answered: &Arc<AtomicUsize>) -> StatelessClient {
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
    let client = StatelessClient::new(&builder);
    if tasks {
        client.with_tasks()
    } else {
        client
    }
}

/// Calls `tool` with tasks declared and follows the task to its end.
fn call_and_wait(world: &Rc<RefCell<World>>, tool: &str) -> (TaskHandle, TaskOutcome) {
    let answered = Arc::new(AtomicUsize::new(0));
    let mut c = client(true, &answered);
    let mut t = Transport(world.clone());
    let mut clock = Clock(world.clone());
    let ToolCallOutcome::Task(mut task) = run(c.call_tool(&mut t, tool, None)).unwrap() else {
        panic!("{tool} did not become a task");
    };
    assert_eq!(task.status(), TaskStatus::Working);
    assert_eq!(task.poll_interval(), Duration::from_millis(POLL_MS));
    let outcome = run(c.wait_task(&mut t, &mut clock, &mut task)).unwrap();
    (task, outcome)
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
        let (task, outcome) = call_and_wait(&world, "work");
        let TaskOutcome::Completed(result) = outcome else {
            panic!("{outcome:?}");
        };
        assert_eq!(result["content"][0]["text"], "done");
        assert_eq!(task.status(), TaskStatus::Completed);
        let w = world.borrow();
        let step = Duration::from_millis(POLL_MS);
        assert_eq!(
            w.sleeps,
            vec![start + step, start + 2 * step],
            "http={http}"
        );
        assert_eq!(task.polls(), 2, "one working answer, then the end");
        let gets = w.methods.iter().filter(|m| *m == "tasks/get").count();
        assert_eq!(gets, 2);
    });
}

#[test]
fn a_tool_error_is_a_completed_task_with_is_error() {
    both(|http| {
        let world = World::new(http, true, 1);
        let (_, outcome) = call_and_wait(&world, "fails");
        let TaskOutcome::Completed(result) = outcome else {
            panic!("{outcome:?}");
        };
        assert_eq!(result["isError"], true);
        assert_eq!(result["content"][0]["text"], "tool failed");
    });
}

#[test]
fn a_handler_error_is_a_failed_task_with_the_error() {
    both(|http| {
        let world = World::new(http, true, 1);
        let (task, outcome) = call_and_wait(&world, "crash");
        let TaskOutcome::Failed(error) = outcome else {
            panic!("{outcome:?}");
        };
        assert_eq!(error.code, -32603);
        assert_eq!(error.message, "crashed");
        assert_eq!(task.status(), TaskStatus::Failed);
    });
}

#[test]
fn input_required_is_answered_by_tasks_update_with_the_registered_handler() {
    both(|http| {
        let world = World::new(http, true, 1);
        let (_, outcome) = call_and_wait(&world, "inputs");
        let TaskOutcome::Completed(result) = outcome else {
            panic!("{outcome:?}");
        };
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
        let mut t = Transport(world.clone());
        let ToolCallOutcome::Task(mut task) = run(c.call_tool(&mut t, "forever", None)).unwrap()
        else {
            panic!("no task");
        };
        assert!(!world.borrow().dropped.load(Ordering::SeqCst));
        run(c.cancel_task(&mut t, task.id())).unwrap();
        world.borrow_mut().run_jobs();
        assert!(
            world.borrow().dropped.load(Ordering::SeqCst),
            "the job is dropped"
        );
        let mut clock = Clock(world.clone());
        let outcome = run(c.wait_task(&mut t, &mut clock, &mut task)).unwrap();
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
        assert!(c.tasks_enabled());
        let mut t = Transport(world.clone());
        let ToolCallOutcome::Complete(result) = run(c.call_tool(&mut t, "work", None)).unwrap()
        else {
            panic!("a server without tasks made a task");
        };
        assert_eq!(result["content"][0]["text"], "done");

        // The server has tasks, the client does not declare them: synchronous too, and a
        // tool that requires tasks is refused with -32021.
        let world = World::new(http, true, 0);
        world.borrow().gate.0.store(true, Ordering::SeqCst);
        let mut c = client(false, &answered);
        assert!(!c.tasks_enabled());
        let mut t = Transport(world.clone());
        let outcome = run(c.call_tool(&mut t, "work", None)).unwrap();
        assert!(
            matches!(outcome, ToolCallOutcome::Complete(_)),
            "{outcome:?}"
        );
        let Err(StatelessClientError::Rpc(e)) = run(c.call_tool(&mut t, "must", None)) else {
            panic!("a required-task tool ran without the extension");
        };
        assert_eq!(e.code, -32021);
    });
}
