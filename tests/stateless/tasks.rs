//! The tasks extension (2026-07-28, SEP-2663) on the app server, in memory through
//! `handle_input` (the stdio path): advertisement, gating (-32021), server-directed creation
//! after the first poll, `tasks/get` shapes for every status, in-task inputs answered by
//! `tasks/update` (partially too), cancellation dropping the job, TTL expiry by the injected
//! wall clock, and the removed v1 methods.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::app::server::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::tasks::{iso8601_utc, TaskLimits, TaskSupport, TASKS_EXTENSION};
use mcp_sansio::testing::ServerRig;
use serde_json::{json, Value};

use crate::task_tools::{forever_tool, tool, Gate};

const WALL_MS: u64 = 1_785_196_800_000;

struct Rig {
    rig: ServerRig,
    gate: Gate,
    dropped: Arc<AtomicBool>,
}

impl Rig {
    fn new(limits: TaskLimits) -> Rig {
        let gate = Gate::default();
        let dropped = Arc::new(AtomicBool::new(false));
        let mut counter = 0u8;
        let entropy = Arc::new(std::sync::Mutex::new(move || {
            counter += 1;
            [counter; 16]
        }));
        let tasks = Tasks::new(limits, Arc::new(move || (entropy.lock().unwrap())()));
        let now = Instant::now();
        let mut server = Server::builder(Implementation::new("tasks-test", "1"))
            .tool(tool("work", TaskSupport::Optional, &gate, "ok"))
            .tool(tool("must", TaskSupport::Required, &gate, "ok"))
            .tool(tool("fails", TaskSupport::Optional, &gate, "error"))
            .tool(tool("crash", TaskSupport::Optional, &gate, "crash"))
            .tool(tool("inputs", TaskSupport::Optional, &gate, "inputs"))
            .tool(tool("plain", TaskSupport::Forbidden, &gate, "ok"))
            .tool(forever_tool(&gate, &dropped))
            .tool(
                Tool::new("instant", json!({"type": "object"}))
                    .task_support(TaskSupport::Optional)
                    .sync_handler(|_, _| Ok(CallToolResult::text("instant"))),
            )
            .tasks(tasks)
            .build(now);
        server.handle_wall_clock(now, WALL_MS);
        Rig {
            rig: ServerRig::from_server(server, now),
            gate,
            dropped,
        }
    }

    fn settle(&mut self) -> Vec<Value> {
        self.rig.settle()
    }

    fn call(&mut self, method: &str, mut params: Value, tasks: bool) -> Value {
        let caps = if tasks {
            json!({"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}})
        } else {
            json!({"elicitation": {}})
        };
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
        });
        let frame = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        self.rig.call(&frame)
    }

    fn tool(&mut self, name: &str, tasks: bool) -> Value {
        self.call("tools/call", json!({"name": name}), tasks)
    }

    fn get(&mut self, id: &Value) -> Value {
        self.call("tasks/get", json!({"taskId": id}), true)["result"].clone()
    }

    fn advance(&mut self, ms: u64) {
        self.rig.advance(Duration::from_millis(ms));
    }
}

#[test]
fn discover_advertises_the_extension_not_a_v1_slot() {
    let mut rig = Rig::new(TaskLimits::default());
    let caps = rig.call("server/discover", json!({}), false)["result"]["capabilities"].clone();
    assert_eq!(caps["extensions"][TASKS_EXTENSION], json!({}));
    assert!(caps.get("tasks").is_none());
}

#[test]
fn a_waiting_handler_becomes_a_task_that_completes() {
    let mut rig = Rig::new(TaskLimits::default());
    let created = rig.tool("work", true)["result"].clone();
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    assert_eq!(created["createdAt"], iso8601_utc(WALL_MS));
    assert_eq!(created["ttlMs"], 300_000);
    for absent in [
        "task",
        "result",
        "error",
        "inputRequests",
        "requestState",
        "ttl",
    ] {
        assert!(created.get(absent).is_none(), "{absent} in {created}");
    }
    let id = created["taskId"].clone();
    assert_eq!(id, "01".repeat(16));
    let working = rig.get(&id);
    assert_eq!(working["status"], "working");
    assert_eq!(working["resultType"], "complete");
    assert!(working.get("result").is_none());
    rig.gate.open();
    rig.settle();
    rig.advance(1500);
    let done = rig.get(&id);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "done");
    assert_eq!(done["lastUpdatedAt"], iso8601_utc(WALL_MS + 1500));
    assert!(done.get("error").is_none() && done.get("requestState").is_none());
}

#[test]
fn immediate_results_and_forbidden_tools_stay_synchronous() {
    let mut rig = Rig::new(TaskLimits::default());
    let r = rig.tool("instant", true)["result"].clone();
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["content"][0]["text"], "instant");
    rig.gate.open();
    let r = rig.tool("plain", true)["result"].clone();
    assert_eq!(r["resultType"], "complete");
    assert!(r.get("taskId").is_none());
}

#[test]
fn gating_without_the_extension() {
    let mut rig = Rig::new(TaskLimits::default());
    let e = rig.tool("must", false)["error"].clone();
    assert_eq!(e["code"], -32021);
    assert_eq!(
        e["data"]["requiredCapabilities"]["extensions"][TASKS_EXTENSION],
        json!({})
    );
    for (method, params) in [
        ("tasks/get", json!({"taskId": "x"})),
        ("tasks/update", json!({"taskId": "x", "inputResponses": {}})),
        ("tasks/cancel", json!({"taskId": "x"})),
    ] {
        assert_eq!(rig.call(method, params, false)["error"]["code"], -32021);
    }
    // An optional tool runs synchronously for such a client.
    rig.gate.open();
    let r = rig.tool("work", false)["result"].clone();
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["content"][0]["text"], "done");
}

#[test]
fn unknown_ids_and_removed_methods() {
    let mut rig = Rig::new(TaskLimits::default());
    for method in ["tasks/get", "tasks/cancel"] {
        let e = rig.call(method, json!({"taskId": "nope"}), true)["error"].clone();
        assert_eq!(e["code"], -32602, "{method}");
    }
    for method in ["tasks/result", "tasks/list"] {
        let e = rig.call(method, json!({"taskId": "nope"}), true)["error"].clone();
        assert_eq!(e["code"], -32601, "{method}");
    }
    let e = rig.call("tasks/get", json!({"taskId": 5}), true)["error"].clone();
    assert_eq!(e["code"], -32602);
}

#[test]
fn tool_errors_complete_and_handler_errors_fail() {
    let mut rig = Rig::new(TaskLimits::default());
    let fails = rig.tool("fails", true)["result"]["taskId"].clone();
    let crash = rig.tool("crash", true)["result"]["taskId"].clone();
    rig.gate.open();
    rig.settle();
    let f = rig.get(&fails);
    assert_eq!(f["status"], "completed");
    assert_eq!(f["result"]["isError"], true);
    let c = rig.get(&crash);
    assert_eq!(c["status"], "failed");
    assert_eq!(c["error"]["code"], -32603);
    assert!(c.get("result").is_none());
}

#[test]
fn cancel_drops_the_job_and_is_idempotent() {
    let mut rig = Rig::new(TaskLimits::default());
    let id = rig.tool("forever", true)["result"]["taskId"].clone();
    assert!(!rig.dropped.load(Ordering::SeqCst));
    let ack = rig.call("tasks/cancel", json!({"taskId": id}), true)["result"].clone();
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("taskId").is_none() && ack.get("status").is_none());
    rig.settle();
    assert!(rig.dropped.load(Ordering::SeqCst), "the job was dropped");
    assert_eq!(rig.get(&id)["status"], "cancelled");
    let again = rig.call("tasks/cancel", json!({"taskId": id}), true);
    assert_eq!(again["result"]["resultType"], "complete");
}

#[test]
fn inputs_inside_a_task_park_it_until_tasks_update() {
    let mut rig = Rig::new(TaskLimits::default());
    let id = rig.tool("inputs", true)["result"]["taskId"].clone();
    rig.gate.open();
    rig.settle();
    let parked = rig.get(&id);
    assert_eq!(parked["status"], "input_required");
    assert_eq!(parked["inputRequests"]["a"]["method"], "elicitation/create");
    // An unknown key is ignored; the answer to `a` resumes the job, which then asks `b`.
    let params = json!({"taskId": id, "inputResponses": {"zz": {}, "a": {"x": 1}}});
    let ack = rig.call("tasks/update", params, true)["result"].clone();
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("status").is_none());
    rig.settle();
    let next = rig.get(&id);
    assert_eq!(next["status"], "input_required");
    let keys: Vec<&String> = next["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, vec!["b"]);
    let params = json!({"taskId": id, "inputResponses": {"b": {"x": 2}}});
    rig.call("tasks/update", params, true);
    rig.settle();
    let done = rig.get(&id);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "1 2");
}

#[test]
fn tasks_live_their_ttl_and_no_longer() {
    let mut rig = Rig::new(TaskLimits {
        ttl_ms: 1000,
        ..Default::default()
    });
    let id = rig.tool("forever", true)["result"]["taskId"].clone();
    rig.advance(999);
    assert_eq!(rig.get(&id)["status"], "working");
    rig.advance(1);
    let e = rig.call("tasks/get", json!({"taskId": id}), true)["error"].clone();
    assert_eq!(e["code"], -32602);
    rig.settle();
    assert!(
        rig.dropped.load(Ordering::SeqCst),
        "an expired task's job stops"
    );
}

#[test]
fn the_table_is_bounded() {
    let mut rig = Rig::new(TaskLimits {
        max_tasks: 1,
        ..Default::default()
    });
    assert_eq!(rig.tool("forever", true)["result"]["resultType"], "task");
    let refused = rig.tool("forever", true);
    assert_eq!(refused["error"]["code"], -32603);
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("as many tasks as it may"), "{message}");
}

fn arbitrary_json() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("taskId".to_owned()),
                    Just("inputResponses".to_owned()),
                    ".{0,6}"
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    /// Whatever the params, a task method or task-tool call gets exactly one answer (a
    /// result or an error) and nothing panics.
    #[test]
    fn task_methods_answer_any_params(
        method in proptest::sample::select(vec!["tasks/get", "tasks/update", "tasks/cancel", "tools/call"]),
        params in arbitrary_json(),
        declared in proptest::bool::ANY,
    ) {
        let mut rig = Rig::new(TaskLimits::default());
        rig.tool("inputs", true);
        let mut params = if params.is_object() { params } else { json!({"taskId": params}) };
        if method == "tools/call" {
            params["name"] = json!("must");
        }
        let answer = rig.call(method, params, declared);
        proptest::prop_assert!(answer.get("result").is_some() != answer.get("error").is_some());
    }
}
