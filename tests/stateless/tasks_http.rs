//! The tasks extension on the Streamable HTTP endpoint, in memory: each exchange is its own
//! machine, so the task a `tools/call` exchange created is read, updated and cancelled by
//! later exchanges through the shared table; its job outlives the exchange that created it
//! (the endpoint keeps it for `poll_job`); `Mcp-Name` must equal `taskId` (-32020).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;

use mcp_sansio::app::server::{CallToolResult, Server, Tasks, Tool};
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::tasks::{TaskLimits, TaskSupport, TASKS_EXTENSION};
use mcp_sansio::testing::HttpRig;
use serde_json::{json, Value};

/// The shared HTTP rig, plus the gate the `work` tool waits on.
struct Rig {
    http: HttpRig,
    gate: Arc<AtomicBool>,
    tasks: Tasks,
}

/// The wall clock the servers are told (Unix ms).
const WALL_MS: u64 = 1_785_196_800_000;

impl Rig {
    fn new() -> Rig {
        Rig::with(EndpointConfig::default())
    }

    fn with(config: EndpointConfig) -> Rig {
        let gate = Arc::new(AtomicBool::new(false));
        let tasks = Tasks::new(TaskLimits::default(), Arc::new(|| [9; 16]));
        let open = gate.clone();
        let table = tasks.clone();
        let factory = move |now| {
            let open = open.clone();
            let mut server = Server::builder(Implementation::new("tasks-http", "1"))
                .tool(
                    Tool::new("work", json!({"type": "object"}))
                        .task_support(TaskSupport::Optional)
                        .handler(move |_, _| {
                            let open = open.clone();
                            async move {
                                std::future::poll_fn(|_| {
                                    if open.load(Ordering::SeqCst) {
                                        Poll::Ready(())
                                    } else {
                                        Poll::Pending
                                    }
                                })
                                .await;
                                Ok(CallToolResult::text("worked"))
                            }
                        }),
                )
                .tasks(tasks.clone())
                .build(now);
            server.handle_wall_clock(now, WALL_MS);
            server
        };
        Rig {
            http: HttpRig::new(config, factory, Instant::now()),
            gate,
            tasks: table,
        }
    }

    fn run_jobs(&mut self) {
        self.http.run_jobs();
    }

    /// Hands `message`, forwarded from another instance, to the task table: its answer.
    fn forwarded(&self, message: &Value) -> Option<Value> {
        let bytes = bytes::Bytes::from(message.to_string());
        let answer = self.tasks.handle_forwarded(&bytes, WALL_MS)?;
        Some(serde_json::from_slice(&answer).unwrap())
    }

    /// POSTs `method` with the tasks extension declared; `name` is the `Mcp-Name` header.
    fn post(&mut self, method: &str, mut params: Value, name: &str) -> (u16, Value) {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let head = HttpRig::stateless_head(&body, Some(name));
        let resp = self.http.request(&head, body.to_string());
        self.run_jobs();
        let Body::Full(bytes) = &resp.body else {
            panic!("expected a JSON body, got {:?}", resp.status);
        };
        (resp.status, serde_json::from_slice(bytes).unwrap())
    }
}

#[test]
fn a_task_outlives_its_exchange_and_is_served_by_later_ones() {
    let mut rig = Rig::new();
    let (status, created) = rig.post("tools/call", json!({"name": "work"}), "work");
    assert_eq!(status, 200);
    assert_eq!(created["result"]["resultType"], "task");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(rig.http.endpoint.session_count(), 0, "the exchange is gone");
    assert_eq!(rig.http.jobs.len(), 1, "its job is still running");
    let (_, working) = rig.post("tasks/get", json!({"taskId": id}), &id);
    assert_eq!(working["result"]["status"], "working");
    rig.gate.store(true, Ordering::SeqCst);
    rig.run_jobs();
    assert!(rig.http.jobs.is_empty());
    let (_, done) = rig.post("tasks/get", json!({"taskId": id}), &id);
    assert_eq!(done["result"]["status"], "completed");
    assert_eq!(done["result"]["result"]["content"][0]["text"], "worked");
    let (_, ack) = rig.post("tasks/cancel", json!({"taskId": id}), &id);
    assert_eq!(ack["result"]["resultType"], "complete");
}

#[test]
fn mcp_name_must_be_the_task_id() {
    let mut rig = Rig::new();
    let (_, created) = rig.post("tools/call", json!({"name": "work"}), "work");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let (status, refused) = rig.post("tasks/get", json!({"taskId": id}), "another-task");
    assert_eq!(status, 400);
    assert_eq!(refused["error"]["code"], -32020);
}

#[test]
fn shared_tasks_hand_out_their_records_and_serve_requests_forwarded_to_them() {
    let config = EndpointConfig {
        instance_id: Some("a".into()),
        ..EndpointConfig::default()
    };
    let mut rig = Rig::with(config);
    let told = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = told.clone();
    rig.tasks.share(Arc::new(move || {
        count.fetch_add(1, Ordering::SeqCst);
    }));
    let (_, created) = rig.post("tools/call", json!({"name": "work"}), "work");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(
        told.load(Ordering::SeqCst),
        1,
        "the driver is told of the new task"
    );
    let record = rig
        .tasks
        .poll_change(WALL_MS)
        .expect("the new task's record");
    assert_eq!(
        (record.id.as_str(), &record.detailed["status"]),
        (id.as_str(), &json!("working"))
    );
    assert!(record.ttl > std::time::Duration::ZERO);
    assert_eq!(rig.tasks.poll_change(WALL_MS), None);
    assert!(rig.tasks.holds(&id, WALL_MS) && !rig.tasks.holds("ffff", WALL_MS));

    // The endpoint names a task request; another instance answers it from the record.
    let get = json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": {"taskId": id,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let head = HttpRig::stateless_head(&get, None);
    let bytes = bytes::Bytes::from(get.to_string());
    let request = rig
        .http
        .endpoint
        .task_request(&head, &bytes)
        .expect("a task request");
    assert_eq!(
        (request.task_id.as_str(), request.is_get),
        (id.as_str(), true)
    );
    let answer = request.answer(&record.detailed);
    let answer: Value = serde_json::from_str(answer.body_text()).unwrap();
    assert_eq!(
        (answer["id"].clone(), answer["result"]["status"].clone()),
        (json!(4), json!("working"))
    );
    let gone: Value = serde_json::from_str(request.gone().body_text()).unwrap();
    assert_eq!(gone["error"]["code"], -32603);

    // A cancellation forwarded from another instance stops the job here, and its answer
    // goes back to that instance; a get is not served that way, nor is anything that is not
    // a task request; a task this table does not hold gets its error.
    let cancel =
        json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/cancel", "params": {"taskId": id}});
    let answer = rig.forwarded(&cancel).expect("the cancellation's answer");
    assert_eq!(
        (answer["id"].clone(), answer["result"]["resultType"].clone()),
        (json!(5), json!("complete"))
    );
    let relayed: Value = serde_json::from_str(
        request
            .relayed(bytes::Bytes::from(answer.to_string()))
            .body_text(),
    )
    .unwrap();
    assert_eq!(relayed, answer);
    let unanswered: Value = serde_json::from_str(request.unanswered().body_text()).unwrap();
    assert_eq!(
        (
            unanswered["id"].clone(),
            unanswered["error"]["code"].clone()
        ),
        (json!(4), json!(-32603))
    );
    let record = rig
        .tasks
        .poll_change(WALL_MS)
        .expect("the cancelled task's record");
    assert_eq!(record.detailed["status"], "cancelled");
    assert_eq!(rig.tasks.handle_forwarded(&bytes, WALL_MS), None);
    assert_eq!(
        rig.tasks.handle_forwarded(&bytes::Bytes::new(), WALL_MS),
        None
    );
    let stranger = json!({"jsonrpc": "2.0", "id": 6, "method": "tasks/cancel",
        "params": {"taskId": "ffff"}});
    let refused = rig.forwarded(&stranger).expect("the refusal");
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (json!(6), json!(-32602))
    );
    assert_eq!(told.load(Ordering::SeqCst), 2);

    // Without an instance id the endpoint names none.
    let alone = Rig::new();
    assert_eq!(alone.http.endpoint.task_request(&head, &bytes), None);
}
