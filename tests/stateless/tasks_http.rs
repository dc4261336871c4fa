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
}

impl Rig {
    fn new() -> Rig {
        let gate = Arc::new(AtomicBool::new(false));
        let tasks = Tasks::new(TaskLimits::default(), Arc::new(|| [9; 16]));
        let open = gate.clone();
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
            server.handle_wall_clock(now, 1_785_196_800_000);
            server
        };
        Rig {
            http: HttpRig::new(EndpointConfig::default(), factory, Instant::now()),
            gate,
        }
    }

    fn run_jobs(&mut self) {
        self.http.run_jobs();
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
