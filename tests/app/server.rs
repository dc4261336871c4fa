//! The application-layer server driven by a real client `Session` over an in-memory wire with
//! a virtual clock. Every result the server sends is validated against the official
//! 2025-11-25 schema definition of its method, and every frame it writes as a JSONRPCMessage
//! (`common::assert_valid`).

use crate::common;

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::server::*;
use mcp_sansio::jsonrpc::{code, ErrorObject, RawJson, RequestId};
use mcp_sansio::model::{
    ClientCapabilities, ElicitationCapability, Implementation, ProtocolVersion, SamplingCapability,
};
use mcp_sansio::model::{LoggingLevel, ToolAnnotations};
use mcp_sansio::runtime::{oneshot, Job, OneshotReceiver};
use mcp_sansio::session::{ClientSetup, Event, Outcome, RequestOptions, Session, State};
use mcp_sansio::Config;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// The rig: a client session, a server, the wire between them, and pending jobs.

struct Rig {
    now: Instant,
    version: ProtocolVersion,
    /// Validate every server frame against the schema (off only when measuring).
    validate: bool,
    client: Session,
    server: Server,
    /// Every message the server sent, in order.
    wire: Vec<Value>,
    client_events: Vec<Event>,
    jobs: Vec<Job>,
    wakes: Arc<AtomicUsize>,
    schema: SchemaCheck,
}

impl Rig {
    fn new(builder: ServerBuilder, caps: ClientCapabilities) -> Rig {
        Rig::with_version(builder, caps, ProtocolVersion::V2025_11_25)
    }

    fn with_version(
        builder: ServerBuilder,
        caps: ClientCapabilities,
        version: ProtocolVersion,
    ) -> Rig {
        let now = Instant::now();
        let setup = ClientSetup {
            info: Implementation::new("test-client", "1"),
            capabilities: caps,
            protocol_version: version,
        };
        let client = Session::client(Config::default(), setup, now);
        let mut server = builder.build(now);
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = wakes.clone();
        server.set_waker(Arc::new(move || {
            w.fetch_add(1, Ordering::SeqCst);
        }));
        let mut rig = Rig {
            now,
            version,
            validate: true,
            client,
            server,
            wire: Vec::new(),
            client_events: Vec::new(),
            jobs: Vec::new(),
            wakes,
            schema: SchemaCheck::load(),
        };
        rig.client.initialize(now).unwrap();
        rig.pump();
        assert_eq!(rig.client.state(), State::Ready);
        assert_eq!(rig.server.session().state(), State::Ready);
        rig.wire.clear();
        rig.client_events.clear();
        rig
    }

    /// Moves messages both ways until nothing moves; collects jobs and client events.
    fn pump(&mut self) {
        for _ in 0..10_000 {
            let mut moved = false;
            let mut buf = Vec::new();
            while self.client.poll_transmit(&mut buf).is_some() {
                let frame = Bytes::from(std::mem::take(&mut buf));
                self.server.handle_input(self.now, frame);
                moved = true;
            }
            while self.server.poll_transmit(&mut buf).is_some() {
                let frame = std::mem::take(&mut buf);
                if self.validate {
                    common::assert_valid(self.version, &frame);
                }
                self.wire.push(serde_json::from_slice(&frame).unwrap());
                self.client.handle_input(self.now, Bytes::from(frame));
                moved = true;
            }
            while let Some(job) = self.server.poll_job() {
                self.jobs.push(job);
                moved = true;
            }
            while let Some(e) = self.client.poll_event() {
                self.client_events.push(e);
                moved = true;
            }
            while self.server.poll_event().is_some() {}
            if !moved {
                return;
            }
        }
        panic!("the rig did not settle");
    }

    /// Polls every pending job once (a no-op waker: the test decides when to re-poll).
    fn run_jobs(&mut self) {
        let mut cx = Context::from_waker(Waker::noop());
        self.jobs
            .retain_mut(|j| j.as_mut().poll(&mut cx).is_pending());
    }

    fn send(&mut self, method: &str, params: Value, progress: bool) -> RequestId {
        let opts = RequestOptions {
            progress,
            ..Default::default()
        };
        let params = RawJson::try_from(&params).unwrap();
        let id = self
            .client
            .send_request(self.now, method, Some(params), opts)
            .unwrap();
        self.pump();
        id
    }

    fn outcome(&self, id: &RequestId) -> Option<&Outcome> {
        self.client_events.iter().find_map(|e| match e {
            Event::Completed { id: i, outcome } if i == id => Some(outcome),
            _ => None,
        })
    }

    /// Sends a request, settles, and returns its result, validated against `def`.
    fn call(&mut self, method: &str, params: Value, def: &str) -> Value {
        let id = self.send(method, params, false);
        let result = self.result(&id);
        self.schema.check(def, &result);
        result
    }

    fn result(&self, id: &RequestId) -> Value {
        match self.outcome(id) {
            Some(Outcome::Result(raw)) => raw.to_value().unwrap(),
            other => panic!("expected a result for {id:?}, got {other:?}"),
        }
    }

    fn error(&mut self, method: &str, params: Value) -> ErrorObject {
        let id = self.send(method, params, false);
        match self.outcome(&id) {
            Some(Outcome::Error(e)) => e.clone(),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    /// Notifications the server sent with this method.
    fn notifications(&self, method: &str) -> Vec<&Value> {
        self.wire
            .iter()
            .filter(|m| m.get("id").is_none() && m["method"] == method)
            .collect()
    }
}

/// The official schema of one revision, to validate results against their definition.
struct SchemaCheck {
    root: Value,
}

impl SchemaCheck {
    fn load() -> SchemaCheck {
        let path =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/schema/2025-11-25/schema.json");
        let text = std::fs::read_to_string(path).unwrap();
        SchemaCheck {
            root: serde_json::from_str(&text).unwrap(),
        }
    }

    fn check(&self, def: &str, instance: &Value) {
        assert!(self.root["$defs"].get(def).is_some(), "no definition {def}");
        let schema = json!({
            "$schema": self.root["$schema"],
            "$defs": self.root["$defs"],
            "allOf": [{"$ref": format!("#/$defs/{def}")}],
        });
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{def}: {errors:?}\n{instance}");
    }
}

// ---------------------------------------------------------------------------------------------
// Fixtures.

fn info() -> Implementation {
    Implementation::new("app-test-server", "0.1")
}

fn object_schema(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

fn echo_tool() -> Tool {
    Tool::new(
        "echo",
        object_schema(json!({"message": {"type": "string"}}), &["message"]),
    )
    .title("Echo")
    .description("Echoes its input")
    .annotations(ToolAnnotations {
        read_only_hint: Some(true),
        ..Default::default()
    })
    .sync_handler(|call, _ctx| {
        let msg = call.arguments["message"].as_str().unwrap_or_default();
        Ok(CallToolResult::text(format!("Echo: {msg}")))
    })
}

fn tool_named(name: &str) -> Tool {
    let n = name.to_owned();
    Tool::new(name, json!({"type": "object"}))
        .sync_handler(move |_, _| Ok(CallToolResult::text(n.clone())))
}

fn text_resource(uri: &str) -> Resource {
    let u = uri.to_owned();
    Resource::new(uri, "static")
        .mime_type("text/plain")
        .sync_handler(move |_, _| Ok(vec![ResourceContents::text(u.clone(), "hello")]))
}

fn template() -> ResourceTemplate {
    ResourceTemplate::new("test://template/{id}/data", "templated")
        .unwrap()
        .mime_type("application/json")
        .sync_handler(|read, _| {
            let id = read.variable("id").unwrap_or_default().to_owned();
            let body = json!({ "id": id }).to_string();
            Ok(vec![ResourceContents::text(read.uri, body)])
        })
}

fn prompt() -> Prompt {
    Prompt::new("greet")
        .description("Greets")
        .argument("name", true)
        .argument("style", false)
        .sync_handler(|req, _| {
            let name = &req.arguments["name"];
            Ok(GetPromptResult::user_text(format!("Hello {name}")))
        })
}

fn full_server() -> ServerBuilder {
    Server::builder(info())
        .instructions("test server")
        .tool(echo_tool())
        .resource(text_resource("test://static-text"))
        .resource_template(template())
        .prompt(prompt())
        .completion(completion_handler(|req, _ctx| async move {
            let prefix = req.params["argument"]["value"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let values = ["alpha", "beta", "alpine"]
                .iter()
                .filter(|v| v.starts_with(&prefix))
                .map(|v| v.to_string())
                .collect();
            Ok(Completion {
                values,
                ..Default::default()
            })
        }))
}

fn no_caps() -> ClientCapabilities {
    ClientCapabilities::default()
}

/// A gate a handler awaits until the test opens it.
type Gate = Arc<Mutex<Option<OneshotReceiver<()>>>>;

fn gate() -> (mcp_sansio::runtime::OneshotSender<()>, Gate) {
    let (tx, rx) = oneshot();
    (tx, Arc::new(Mutex::new(Some(rx))))
}

// ---------------------------------------------------------------------------------------------
// Tests.

#[test]
fn capabilities_follow_registrations() {
    let rig = Rig::new(full_server(), no_caps());
    let caps = rig.client.peer_server_capabilities().unwrap();
    assert_eq!(caps.tools.as_ref().unwrap().list_changed, Some(true));
    assert_eq!(caps.prompts.as_ref().unwrap().list_changed, Some(true));
    let res = caps.resources.as_ref().unwrap();
    assert_eq!((res.subscribe, res.list_changed), (Some(true), Some(true)));
    assert!(caps.completions.is_some() && caps.logging.is_some());
    assert_eq!(rig.client.server_instructions(), Some("test server"));

    let bare = Rig::new(Server::builder(info()).tool(echo_tool()), no_caps());
    let caps = bare.client.peer_server_capabilities().unwrap();
    assert!(caps.resources.is_none() && caps.prompts.is_none() && caps.completions.is_none());
}

#[test]
fn tools_list_and_call() {
    let mut rig = Rig::new(full_server(), no_caps());
    let list = rig.call("tools/list", json!({}), "ListToolsResult");
    let tool = &list["tools"][0];
    assert_eq!(tool["name"], "echo");
    assert_eq!(tool["title"], "Echo");
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
    assert_eq!(tool["inputSchema"]["required"], json!(["message"]));
    assert!(list.get("nextCursor").is_none());

    let r = rig.call(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hi"}}),
        "CallToolResult",
    );
    assert_eq!(r["content"][0]["text"], "Echo: hi");
    assert!(r.get("isError").is_none());
}

#[test]
fn invalid_tool_input_is_an_error_result() {
    let mut rig = Rig::new(full_server(), no_caps());
    let r = rig.call(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": 5}}),
        "CallToolResult",
    );
    assert_eq!(r["isError"], true);
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("/message"), "{text}");
    let r = rig.call(
        "tools/call",
        json!({"name": "echo", "arguments": {}}),
        "CallToolResult",
    );
    assert_eq!(r["isError"], true);
}

#[test]
fn unknown_tool_and_unknown_method_are_protocol_errors() {
    let mut rig = Rig::new(full_server(), no_caps());
    let e = rig.error("tools/call", json!({"name": "nope"}));
    assert_eq!(e.code, code::INVALID_PARAMS);
    assert!(e.message.contains("nope"));
}

#[test]
fn output_schema_mismatch_is_an_error_result() {
    let tool = |name: &str, structured: Option<Value>| {
        Tool::new(name, json!({"type": "object"}))
            .output_schema(object_schema(json!({"n": {"type": "integer"}}), &["n"]))
            .sync_handler(move |_, _| {
                Ok(match &structured {
                    Some(v) => CallToolResult::structured(v.clone()),
                    None => CallToolResult::text("no structure"),
                })
            })
    };
    let builder = Server::builder(info())
        .tool(tool("good", Some(json!({"n": 3}))))
        .tool(tool("bad", Some(json!({"n": "three"}))))
        .tool(tool("missing", None));
    let mut rig = Rig::new(builder, no_caps());
    let good = rig.call("tools/call", json!({"name": "good"}), "CallToolResult");
    assert_eq!(good["structuredContent"], json!({"n": 3}));
    assert!(good.get("isError").is_none());
    for name in ["bad", "missing"] {
        let r = rig.call("tools/call", json!({"name": name}), "CallToolResult");
        assert_eq!(r["isError"], true, "{name}");
        assert!(r.get("structuredContent").is_none());
    }
}

#[test]
fn pagination_returns_every_item_exactly_once() {
    let mut builder = Server::builder(info()).config(Config {
        page_size: 3,
        ..Config::default()
    });
    for i in 0..10 {
        builder = builder.tool(tool_named(&format!("tool-{i:02}")));
    }
    let mut rig = Rig::new(builder, no_caps());
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let page = rig.call("tools/list", params, "ListToolsResult");
        pages += 1;
        let tools = page["tools"].as_array().unwrap();
        assert!(tools.len() <= 3);
        seen.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        match page.get("nextCursor") {
            Some(c) => cursor = Some(c.as_str().unwrap().to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 4);
    let expected: Vec<String> = (0..10).map(|i| format!("tool-{i:02}")).collect();
    assert_eq!(seen, expected);
}

#[test]
fn a_cursor_survives_changes_between_pages() {
    let mut builder = Server::builder(info()).config(Config {
        page_size: 2,
        ..Config::default()
    });
    for name in ["a", "b", "c", "d", "e"] {
        builder = builder.tool(tool_named(name));
    }
    let mut rig = Rig::new(builder, no_caps());
    let first = rig.call("tools/list", json!({}), "ListToolsResult");
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let handle = rig.server.handle();
    handle.remove_tool("a"); // already listed
    handle.remove_tool("c"); // not listed yet
    handle.add_tool(tool_named("aa")).unwrap(); // sorts before the cursor: not listed on later pages
    rig.pump();
    let mut names = Vec::new();
    let mut next = Some(cursor);
    while let Some(c) = next {
        let page = rig.call("tools/list", json!({ "cursor": c }), "ListToolsResult");
        names.extend(
            page["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].clone()),
        );
        next = page["nextCursor"].as_str().map(str::to_owned);
    }
    assert_eq!(names, [json!("d"), json!("e")]);
}

#[test]
fn invalid_cursor_is_invalid_params() {
    let mut rig = Rig::new(full_server(), no_caps());
    for cursor in [json!("garbage"), json!(7)] {
        let e = rig.error("tools/list", json!({ "cursor": cursor }));
        assert_eq!(e.code, code::INVALID_PARAMS);
    }
}

#[test]
fn a_cursor_cut_inside_a_character_is_invalid_params_and_the_server_keeps_serving() {
    let mut rig = Rig::new(full_server(), no_caps());
    for cursor in ["c1.aéa", "c1.é", "c1.\u{1F600}0"] {
        let e = rig.error("tools/list", json!({ "cursor": cursor }));
        assert_eq!(e.code, code::INVALID_PARAMS, "{cursor:?}");
    }
    let page = rig.call("tools/list", json!({}), "ListToolsResult");
    assert!(page["tools"].is_array());
}

#[test]
fn resources_read_fixed_template_and_not_found() {
    let mut rig = Rig::new(full_server(), no_caps());
    let list = rig.call("resources/list", json!({}), "ListResourcesResult");
    assert_eq!(list["resources"][0]["uri"], "test://static-text");
    let templates = rig.call(
        "resources/templates/list",
        json!({}),
        "ListResourceTemplatesResult",
    );
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "test://template/{id}/data"
    );

    let r = rig.call(
        "resources/read",
        json!({"uri": "test://static-text"}),
        "ReadResourceResult",
    );
    assert_eq!(r["contents"][0]["text"], "hello");
    let r = rig.call(
        "resources/read",
        json!({"uri": "test://template/42/data"}),
        "ReadResourceResult",
    );
    assert_eq!(r["contents"][0]["uri"], "test://template/42/data");
    assert_eq!(r["contents"][0]["text"], r#"{"id":"42"}"#);

    let e = rig.error("resources/read", json!({"uri": "test://nowhere"}));
    assert_eq!(e.code, code::RESOURCE_NOT_FOUND);
    assert_eq!(e.data.unwrap().to_value().unwrap()["uri"], "test://nowhere");
}

#[test]
fn resource_updates_reach_subscribers_only() {
    let mut rig = Rig::new(full_server(), no_caps());
    rig.server.notify_resource_updated("test://static-text");
    rig.pump();
    assert!(rig
        .notifications("notifications/resources/updated")
        .is_empty());

    rig.call(
        "resources/subscribe",
        json!({"uri": "test://static-text"}),
        "EmptyResult",
    );
    rig.server.notify_resource_updated("test://static-text");
    rig.server.handle().notify_resource_updated("test://other");
    rig.pump();
    let updates = rig.notifications("notifications/resources/updated");
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0]["params"]["uri"], "test://static-text");
    rig.schema.check("ResourceUpdatedNotification", updates[0]);

    rig.call(
        "resources/unsubscribe",
        json!({"uri": "test://static-text"}),
        "EmptyResult",
    );
    rig.server.notify_resource_updated("test://static-text");
    rig.pump();
    assert_eq!(
        rig.notifications("notifications/resources/updated").len(),
        1
    );
}

/// What one session's subscriptions hold is bounded: a URI past 4 KiB is refused with -32602,
/// and past 1,024 URIs a new one is refused (naming the limit) while a repeat still succeeds.
#[test]
fn subscriptions_are_bounded_in_length_and_number() {
    let mut rig = Rig::new(full_server(), no_caps());
    let long = format!("test://{}", "a".repeat(4096));
    let e = rig.error("resources/subscribe", json!({ "uri": long }));
    assert_eq!(e.code, code::INVALID_PARAMS);
    assert!(e.message.contains("4096 bytes"), "{}", e.message);
    for i in 0..1024 {
        rig.call(
            "resources/subscribe",
            json!({ "uri": format!("test://r/{i}") }),
            "EmptyResult",
        );
    }
    let e = rig.error("resources/subscribe", json!({"uri": "test://r/new"}));
    assert!(e.message.contains("at most 1024"), "{}", e.message);
    rig.call(
        "resources/subscribe",
        json!({"uri": "test://r/7"}),
        "EmptyResult",
    );
    rig.call(
        "resources/unsubscribe",
        json!({"uri": "test://r/7"}),
        "EmptyResult",
    );
    rig.call(
        "resources/subscribe",
        json!({"uri": "test://r/new"}),
        "EmptyResult",
    );
}

#[test]
fn prompts_get_checks_arguments() {
    let mut rig = Rig::new(full_server(), no_caps());
    let list = rig.call("prompts/list", json!({}), "ListPromptsResult");
    assert_eq!(list["prompts"][0]["arguments"][0]["required"], true);
    let r = rig.call(
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
        "GetPromptResult",
    );
    assert_eq!(r["messages"][0]["content"]["text"], "Hello Ada");
    let e = rig.error("prompts/get", json!({"name": "greet", "arguments": {}}));
    assert_eq!(e.code, code::INVALID_PARAMS);
    assert!(e.message.contains("name"));
    let e = rig.error("prompts/get", json!({"name": "nope"}));
    assert_eq!(e.code, code::INVALID_PARAMS);
}

#[test]
fn completion_uses_the_provider() {
    let mut rig = Rig::new(full_server(), no_caps());
    let r = rig.call(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"},
               "argument": {"name": "style", "value": "al"}}),
        "CompleteResult",
    );
    assert_eq!(r["completion"]["values"], json!(["alpha", "alpine"]));
}

#[test]
fn list_changed_after_runtime_changes() {
    let mut rig = Rig::new(full_server(), no_caps());
    let handle = rig.server.handle();
    handle.add_tool(tool_named("late")).unwrap();
    rig.pump();
    assert_eq!(
        rig.notifications("notifications/tools/list_changed").len(),
        1
    );
    let list = rig.call("tools/list", json!({}), "ListToolsResult");
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "late"]);

    handle.remove_tool("late");
    handle.remove_tool("never-registered");
    handle.add_prompt(Prompt::new("p2"));
    handle.remove_resource("test://static-text");
    rig.pump();
    assert_eq!(
        rig.notifications("notifications/tools/list_changed").len(),
        2
    );
    assert_eq!(
        rig.notifications("notifications/prompts/list_changed")
            .len(),
        1
    );
    assert_eq!(
        rig.notifications("notifications/resources/list_changed")
            .len(),
        1
    );
    let e = rig.error("resources/read", json!({"uri": "test://static-text"}));
    assert_eq!(e.code, code::RESOURCE_NOT_FOUND);
}

fn logging_tool() -> Tool {
    Tool::new("logs", json!({"type": "object"})).sync_handler(|_, ctx| {
        ctx.log(LoggingLevel::Debug, Some("t"), json!("debug line"));
        ctx.log(LoggingLevel::Warning, Some("t"), json!("warning line"));
        ctx.log(LoggingLevel::Error, None, json!({"e": 1}));
        Ok(CallToolResult::text("logged"))
    })
}

#[test]
fn log_level_filters_messages() {
    let mut rig = Rig::new(Server::builder(info()).tool(logging_tool()), no_caps());
    rig.call("tools/call", json!({"name": "logs"}), "CallToolResult");
    assert_eq!(rig.notifications("notifications/message").len(), 3);

    rig.call(
        "logging/setLevel",
        json!({"level": "warning"}),
        "EmptyResult",
    );
    rig.wire.clear();
    rig.call("tools/call", json!({"name": "logs"}), "CallToolResult");
    let logs = rig.notifications("notifications/message");
    let levels: Vec<&str> = logs
        .iter()
        .map(|l| l["params"]["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["warning", "error"]);
    for l in logs {
        rig.schema.check("LoggingMessageNotification", l);
    }
    let e = rig.error("logging/setLevel", json!({"level": "loud"}));
    assert_eq!(e.code, code::INVALID_PARAMS);
}

#[test]
fn progress_precedes_the_result() {
    let tool = Tool::new("work", json!({"type": "object"})).handler(|_, ctx| async move {
        ctx.progress(1.0, Some(2.0), Some("half".into()));
        ctx.progress(2.0, Some(2.0), None);
        Ok(CallToolResult::text("done"))
    });
    let mut rig = Rig::new(Server::builder(info()).tool(tool), no_caps());
    let id = rig.send("tools/call", json!({"name": "work"}), true);
    let kinds: Vec<&str> = rig
        .wire
        .iter()
        .map(|m| {
            if m.get("result").is_some() {
                "result"
            } else {
                m["method"].as_str().unwrap()
            }
        })
        .collect();
    assert_eq!(
        kinds,
        ["notifications/progress", "notifications/progress", "result"]
    );
    rig.schema.check("ProgressNotification", &rig.wire[0]);
    let progress: Vec<f64> = rig
        .client_events
        .iter()
        .filter_map(|e| match e {
            Event::Progress {
                id: i, progress, ..
            } if *i == id => Some(*progress),
            _ => None,
        })
        .collect();
    assert_eq!(progress, [1.0, 2.0]);
    assert!(rig.outcome(&id).is_some());
}

fn gated_tool(name: &str, gate: Gate, seen_cancel: Arc<AtomicUsize>) -> Tool {
    Tool::new(name, json!({"type": "object"})).handler(move |_, ctx| {
        let rx = gate.lock().unwrap().take();
        let seen_cancel = seen_cancel.clone();
        async move {
            if let Some(rx) = rx {
                // Either the gate opens or the client cancels.
                let cancelled = ctx.cancelled();
                futures_select(rx, cancelled).await;
            }
            if ctx.is_cancelled() {
                seen_cancel.fetch_add(1, Ordering::SeqCst);
            }
            Ok(CallToolResult::text("slow done"))
        }
    })
}

/// Resolves when either future resolves (a two-way select without a runtime crate).
async fn futures_select<A: Future + Unpin, B: Future + Unpin>(mut a: A, mut b: B) {
    std::future::poll_fn(move |cx| {
        if Pin::new(&mut a).poll(cx).is_ready() || Pin::new(&mut b).poll(cx).is_ready() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await
}

#[test]
fn a_pending_handler_does_not_block_another_request() {
    let (open, g) = gate();
    let seen = Arc::new(AtomicUsize::new(0));
    let builder = Server::builder(info())
        .tool(gated_tool("slow", g, seen.clone()))
        .tool(echo_tool());
    let mut rig = Rig::new(builder, no_caps());
    let slow = rig.send("tools/call", json!({"name": "slow"}), false);
    assert_eq!(rig.jobs.len(), 1, "the slow handler is a pending job");
    let fast = rig.send(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "x"}}),
        false,
    );
    assert!(rig.outcome(&fast).is_some());
    assert!(rig.outcome(&slow).is_none());

    let wakes_before = rig.wakes.load(Ordering::SeqCst);
    open.send(());
    rig.run_jobs();
    assert!(rig.jobs.is_empty());
    assert!(
        rig.wakes.load(Ordering::SeqCst) > wakes_before,
        "wake hook called"
    );
    rig.pump();
    assert_eq!(rig.result(&slow)["content"][0]["text"], "slow done");
    let order: Vec<&Value> = rig.wire.iter().filter_map(|m| m.get("id")).collect();
    let expected = [
        serde_json::to_value(&fast).unwrap(),
        serde_json::to_value(&slow).unwrap(),
    ];
    assert_eq!(
        order,
        expected.iter().collect::<Vec<_>>(),
        "the fast call answered first"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 0);
}

#[test]
fn cancellation_reaches_the_handler_and_suppresses_the_response() {
    let (_open, g) = gate();
    let seen = Arc::new(AtomicUsize::new(0));
    let mut rig = Rig::new(
        Server::builder(info()).tool(gated_tool("slow", g, seen.clone())),
        no_caps(),
    );
    let id = rig.send("tools/call", json!({"name": "slow"}), false);
    assert_eq!(rig.jobs.len(), 1);
    rig.client
        .cancel(rig.now, &id, Some("user".into()))
        .unwrap();
    rig.pump();
    rig.run_jobs();
    assert!(
        rig.jobs.is_empty(),
        "cancelled() resolved, the job finished"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    rig.pump();
    assert!(
        rig.wire.iter().all(|m| m.get("id").is_none()),
        "no response after cancellation: {:?}",
        rig.wire
    );
    assert_eq!(rig.server.session().stats().responses_suppressed, 1);
}

/// A handler that answered at once but kept a clone of its context: cancelling a later
/// request must not reach that context (a cancel token is only reused when no clone of it
/// outlived its handler).
#[test]
fn a_context_kept_by_a_finished_handler_is_not_cancelled_with_a_later_request() {
    let (_open, g) = gate();
    let seen = Arc::new(AtomicUsize::new(0));
    let kept: Arc<Mutex<Vec<RequestContext>>> = Arc::default();
    let keeper = kept.clone();
    let builder = Server::builder(info())
        .tool(gated_tool("slow", g, seen.clone()))
        .tool(echo_tool())
        .tool(
            Tool::new("keep", json!({"type": "object"})).sync_handler(move |_, ctx| {
                keeper.lock().unwrap().push(ctx.clone());
                Ok(CallToolResult::text("kept"))
            }),
        );
    let mut rig = Rig::new(builder, no_caps());
    for tool in ["echo", "keep", "echo", "keep"] {
        let args = json!({"name": tool, "arguments": {"message": "x"}});
        let id = rig.send("tools/call", args, false);
        assert!(rig.outcome(&id).is_some(), "{tool} answered at once");
    }
    let slow = rig.send("tools/call", json!({"name": "slow"}), false);
    assert_eq!(rig.jobs.len(), 1);
    rig.client.cancel(rig.now, &slow, None).unwrap();
    rig.pump();
    rig.run_jobs();
    assert_eq!(
        seen.load(Ordering::SeqCst),
        1,
        "the slow handler saw its cancel"
    );
    let kept = kept.lock().unwrap();
    assert_eq!(kept.len(), 2);
    assert!(
        kept.iter().all(|ctx| !ctx.is_cancelled()),
        "a kept context is not cancelled with another request"
    );
}

fn sampling_tool() -> Tool {
    Tool::new("ask", json!({"type": "object"})).handler(|_, ctx| async move {
        let params = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
            "maxTokens": 10
        });
        match ctx.sample(params).await {
            Ok(result) => Ok(CallToolResult::text(
                result["content"]["text"].as_str().unwrap_or("?").to_owned(),
            )),
            Err(e) => Ok(CallToolResult::error(e.to_string())),
        }
    })
}

#[test]
fn sampling_round_trip_through_a_handler() {
    let caps = ClientCapabilities {
        sampling: Some(SamplingCapability::default()),
        ..Default::default()
    };
    let mut rig = Rig::new(Server::builder(info()).tool(sampling_tool()), caps);
    let call = rig.send("tools/call", json!({"name": "ask"}), false);
    let (sid, params) = rig
        .client_events
        .iter()
        .find_map(|e| match e {
            Event::Request { id, method, params } if method == "sampling/createMessage" => {
                Some((id.clone(), params.clone().unwrap().to_value().unwrap()))
            }
            _ => None,
        })
        .expect("the client got the sampling request");
    assert_eq!(params["maxTokens"], 10);
    let request = rig
        .wire
        .iter()
        .find(|m| m["method"] == "sampling/createMessage")
        .unwrap()
        .clone();
    rig.schema.check("CreateMessageRequest", &request);

    let answer = json!({"role": "assistant", "content": {"type": "text", "text": "4"},
                        "model": "m", "stopReason": "endTurn"});
    rig.client
        .respond(&sid, RawJson::try_from(&answer).unwrap())
        .unwrap();
    rig.pump();
    rig.run_jobs();
    rig.pump();
    let r = rig.result(&call);
    rig.schema.check("CallToolResult", &r);
    assert_eq!(r["content"][0]["text"], "4");
}

#[test]
fn elicitation_without_the_capability_is_refused_to_the_handler() {
    let tool = Tool::new("form", json!({"type": "object"})).handler(|_, ctx| async move {
        let params = json!({"mode": "form", "message": "name?",
                            "requestedSchema": {"type": "object", "properties": {}}});
        Ok(match ctx.elicit(params).await {
            Ok(_) => CallToolResult::text("answered"),
            Err(e) => CallToolResult::error(e.to_string()),
        })
    });
    let mut rig = Rig::new(Server::builder(info()).tool(tool.clone()), no_caps());
    let id = rig.send("tools/call", json!({"name": "form"}), false);
    rig.run_jobs();
    rig.pump();
    let r = rig.result(&id);
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("elicitation"));
    assert!(rig.wire.iter().all(|m| m["method"] != "elicitation/create"));

    // With the capability the request goes out.
    let caps = ClientCapabilities {
        elicitation: Some(ElicitationCapability::default()),
        ..Default::default()
    };
    let mut rig = Rig::new(Server::builder(info()).tool(tool), caps);
    rig.send("tools/call", json!({"name": "form"}), false);
    assert!(rig.wire.iter().any(|m| m["method"] == "elicitation/create"));
}

#[test]
fn peer_request_timeout_reaches_the_handler() {
    let caps = ClientCapabilities {
        sampling: Some(SamplingCapability::default()),
        ..Default::default()
    };
    let mut rig = Rig::new(Server::builder(info()).tool(sampling_tool()), caps);
    let call = rig.send("tools/call", json!({"name": "ask"}), false);
    let deadline = rig
        .server
        .poll_timeout()
        .expect("the sampling request has a deadline");
    rig.now = deadline + Duration::from_millis(1);
    rig.server.handle_timeout(rig.now);
    rig.run_jobs();
    rig.pump();
    let r = rig.result(&call);
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("in time"));
}

#[test]
fn unknown_methods_and_bad_params_from_a_raw_client() {
    let mut rig = Rig::new(full_server(), no_caps());
    // Hand-encoded frames: a method the session lets through but no registry answers.
    let frames = [
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":[1]}}"#,
        r#"{"jsonrpc":"2.0","id":"b","method":"resources/read","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":"c","method":"vendor/unknown","params":{}}"#,
    ];
    for f in frames {
        rig.server
            .handle_input(rig.now, Bytes::from_static(f.as_bytes()));
    }
    let mut buf = Vec::new();
    let mut errors = HashMap::new();
    while rig.server.poll_transmit(&mut buf).is_some() {
        let v: Value = serde_json::from_slice(&buf).unwrap();
        buf.clear();
        errors.insert(
            v["id"].as_str().unwrap().to_owned(),
            v["error"]["code"].clone(),
        );
    }
    assert_eq!(errors["a"], json!(code::INVALID_PARAMS));
    assert_eq!(errors["b"], json!(code::INVALID_PARAMS));
    assert_eq!(errors["c"], json!(code::METHOD_NOT_FOUND));
}

#[test]
fn a_dropped_job_answers_with_an_internal_error() {
    let (_open, g) = gate();
    let seen = Arc::new(AtomicUsize::new(0));
    let mut rig = Rig::new(
        Server::builder(info()).tool(gated_tool("slow", g, seen)),
        no_caps(),
    );
    let id = rig.send("tools/call", json!({"name": "slow"}), false);
    assert_eq!(rig.jobs.len(), 1);
    rig.jobs.clear(); // the driver's executor shut down
    rig.pump();
    match rig.outcome(&id) {
        Some(Outcome::Error(e)) => assert_eq!(e.code, code::INTERNAL_ERROR),
        other => panic!("expected an internal error, got {other:?}"),
    }
}

#[test]
fn closing_the_server_cancels_running_handlers() {
    let (_open, g) = gate();
    let seen = Arc::new(AtomicUsize::new(0));
    let mut rig = Rig::new(
        Server::builder(info()).tool(gated_tool("slow", g, seen.clone())),
        no_caps(),
    );
    rig.send("tools/call", json!({"name": "slow"}), false);
    rig.server.close(rig.now);
    rig.run_jobs();
    assert!(rig.jobs.is_empty());
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    assert_eq!(rig.server.session().state(), State::Closed);
}

#[test]
fn roots_round_trip_through_a_handler() {
    let tool = Tool::new("roots", json!({"type": "object"})).handler(|_, ctx| async move {
        Ok(match ctx.list_roots().await {
            Ok(r) => CallToolResult::text(r["roots"][0]["uri"].as_str().unwrap_or("?").to_owned()),
            Err(e) => CallToolResult::error(e.to_string()),
        })
    });
    let caps = ClientCapabilities {
        roots: Some(Default::default()),
        ..Default::default()
    };
    let mut rig = Rig::new(Server::builder(info()).tool(tool), caps);
    let call = rig.send("tools/call", json!({"name": "roots"}), false);
    let rid = rig
        .client_events
        .iter()
        .find_map(|e| match e {
            Event::Request { id, method, .. } if method == "roots/list" => Some(id.clone()),
            _ => None,
        })
        .expect("the client got roots/list");
    let answer = json!({"roots": [{"uri": "file:///tmp", "name": "tmp"}]});
    rig.client
        .respond(&rid, RawJson::try_from(&answer).unwrap())
        .unwrap();
    rig.pump();
    rig.run_jobs();
    rig.pump();
    assert_eq!(rig.result(&call)["content"][0]["text"], "file:///tmp");
}

#[test]
fn every_stateful_version_gets_valid_frames() {
    for version in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ] {
        let mut rig = Rig::with_version(full_server(), no_caps(), version);
        assert_eq!(rig.client.protocol_version(), Some(version));
        for (method, params) in [
            ("tools/list", json!({})),
            (
                "tools/call",
                json!({"name": "echo", "arguments": {"message": "v"}}),
            ),
            ("tools/call", json!({"name": "echo", "arguments": {}})),
            ("resources/list", json!({})),
            ("resources/templates/list", json!({})),
            ("resources/read", json!({"uri": "test://template/1/data"})),
            ("resources/read", json!({"uri": "test://missing"})),
            ("prompts/list", json!({})),
            (
                "prompts/get",
                json!({"name": "greet", "arguments": {"name": "x"}}),
            ),
            ("logging/setLevel", json!({"level": "info"})),
        ] {
            let id = rig.send(method, params, false);
            assert!(rig.outcome(&id).is_some(), "{version} {method}");
        }
        // Every frame was validated against this version's schema by the rig.
        assert!(rig.wire.len() >= 10, "{version}");
    }
}

/// Throughput of sync tool calls through client session → server → client session, in memory.
/// Run with `cargo test --test app_server -- --ignored --nocapture measure`.
#[test]
#[ignore]
fn measure_sync_tool_call_throughput() {
    let mut rig = Rig::new(full_server(), no_caps());
    let params =
        RawJson::try_from(&json!({"name": "echo", "arguments": {"message": "hi"}})).unwrap();
    let n = 20_000;
    let start = Instant::now();
    for i in 0..n {
        rig.client
            .send_request(
                rig.now,
                "tools/call",
                Some(params.clone()),
                RequestOptions::default(),
            )
            .unwrap();
        if i % 64 == 63 {
            rig.pump();
            rig.client_events.clear();
            rig.wire.clear();
        }
    }
    rig.pump();
    let elapsed = start.elapsed();
    println!(
        "{n} tools/call round trips in {elapsed:?}: {:.0}/s (sync handler, JSON decode/encode both sides)",
        n as f64 / elapsed.as_secs_f64()
    );
}

#[test]
fn a_finished_handler_cancels_its_pending_sampling_request() {
    let tool = Tool::new("ask", json!({"type": "object"})).handler(|_, ctx| async move {
        let params = json!({"messages": [], "maxTokens": 1});
        let sample = Box::pin(ctx.sample(params));
        futures_select(sample, ctx.cancelled()).await;
        Ok(CallToolResult::text("stopped"))
    });
    let caps = ClientCapabilities {
        sampling: Some(SamplingCapability::default()),
        ..Default::default()
    };
    let mut rig = Rig::new(Server::builder(info()).tool(tool), caps);
    let call = rig.send("tools/call", json!({"name": "ask"}), false);
    let sid = rig
        .client_events
        .iter()
        .find_map(|e| match e {
            Event::Request { id, method, .. } if method == "sampling/createMessage" => {
                Some(id.clone())
            }
            _ => None,
        })
        .expect("sampling request sent");
    rig.client.cancel(rig.now, &call, None).unwrap();
    rig.pump();
    rig.run_jobs();
    rig.pump();
    let cancelled = rig
        .client_events
        .iter()
        .any(|e| matches!(e, Event::Cancelled { id, .. } if *id == sid));
    assert!(cancelled, "the client was told to stop sampling");
    assert_eq!(rig.server.session().pending_outbound(), 0);
}

#[test]
fn a_handler_error_is_a_json_rpc_error() {
    let prompt = Prompt::new("fails")
        .handler(|_, _| async { Err(ErrorObject::new(-32000, "backend down")) });
    let mut rig = Rig::new(Server::builder(info()).prompt(prompt), no_caps());
    let e = rig.error("prompts/get", json!({"name": "fails"}));
    assert_eq!((e.code, e.message.as_str()), (-32000, "backend down"));
}

#[test]
fn handle_wake_starts_server_requests_at_the_given_time() {
    let caps = ClientCapabilities {
        sampling: Some(SamplingCapability::default()),
        ..Default::default()
    };
    let (open, gate) = gate();
    let late_sampler = Tool::new("late", json!({"type": "object"})).handler(move |_, ctx| {
        let rx = gate.lock().unwrap().take();
        async move {
            if let Some(rx) = rx {
                let _ = rx.await;
            }
            let params = json!({"messages": [], "maxTokens": 1});
            let _ = ctx.sample(params).await;
            Ok(CallToolResult::text("done"))
        }
    });
    let mut rig = Rig::new(Server::builder(info()).tool(late_sampler), caps);
    let t0 = rig.now;
    rig.send("tools/call", json!({"name": "late"}), false);
    assert_eq!(rig.jobs.len(), 1, "the handler waits for its gate");
    assert_eq!(rig.server.poll_timeout(), None, "nothing sent yet");
    open.send(());
    rig.run_jobs();
    // The job pushed its sampling request from outside; the driver wakes the server later.
    let woken_at = t0 + Duration::from_secs(100);
    rig.server.handle_wake(woken_at);
    let timeout = Config::default().request_timeout;
    assert_eq!(rig.server.poll_timeout(), Some(woken_at + timeout));
    let mut buf = Vec::new();
    assert!(rig.server.poll_transmit(&mut buf).is_some());
    let sent: Value = serde_json::from_slice(&buf).unwrap();
    assert_eq!(sent["method"], "sampling/createMessage");
}

#[test]
fn handles_see_the_session_close() {
    let mut rig = Rig::new(Server::builder(info()).tool(echo_tool()), no_caps());
    let handle = rig.server.handle();
    assert!(!handle.is_closed());
    rig.server.close(rig.now);
    assert!(handle.is_closed());
}

// ---------------------------------------------------------------------------------------------
// Schema keywords a minimal validator skips, compile-time refusals, and typed tools.

/// A tool whose schema uses `pattern`, `patternProperties`, `dependentRequired` and
/// `unevaluatedProperties`: each failing call is an `isError` result naming the path.
#[test]
fn tool_arguments_are_checked_against_every_keyword() {
    let schema = json!({
        "type": "object",
        "properties": {"id": {"type": "string", "pattern": "^[a-z]+-[0-9]+$"}, "card": {}, "cvv": {}},
        "patternProperties": {"^n_": {"type": "number"}},
        "dependentRequired": {"card": ["cvv"]},
        "unevaluatedProperties": false
    });
    let builder = Server::builder(info()).tool(
        Tool::try_new("strict", schema)
            .expect("compiles")
            .sync_handler(|_, _| Ok(CallToolResult::text("ok"))),
    );
    let mut rig = Rig::new(builder, no_caps());
    let ok = rig.call(
        "tools/call",
        json!({"name": "strict", "arguments": {"id": "ab-1", "n_x": 2, "card": 1, "cvv": 2}}),
        "CallToolResult",
    );
    assert!(ok.get("isError").is_none(), "{ok}");
    for (arguments, path) in [
        (json!({"id": "AB-1"}), "/id"),
        (json!({"n_x": "two"}), "/n_x"),
        (json!({"card": 1}), "/"),
        (json!({"other": 1}), "/"),
    ] {
        let r = rig.call(
            "tools/call",
            json!({"name": "strict", "arguments": arguments}),
            "CallToolResult",
        );
        assert_eq!(r["isError"], true, "{arguments}");
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(&format!("{path}:")), "{text}");
    }
}

/// `format` is asserted only on a server that opts in.
#[test]
fn format_assertions_are_opt_in_per_server() {
    let tool = || {
        Tool::new(
            "mail",
            object_schema(
                json!({"to": {"type": "string", "format": "email"}}),
                &["to"],
            ),
        )
        .sync_handler(|_, _| Ok(CallToolResult::text("sent")))
    };
    let args = json!({"name": "mail", "arguments": {"to": "not an address"}});
    let mut lax = Rig::new(Server::builder(info()).tool(tool()), no_caps());
    let r = lax.call("tools/call", args.clone(), "CallToolResult");
    assert!(r.get("isError").is_none(), "{r}");
    let strict = Server::builder(info()).tool(tool()).validate_formats(true);
    let mut strict = Rig::new(strict, no_caps());
    let r = strict.call("tools/call", args, "CallToolResult");
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("/to"));
    let ok = json!({"name": "mail", "arguments": {"to": "a@b.example"}});
    let r = strict.call("tools/call", ok, "CallToolResult");
    assert!(r.get("isError").is_none(), "{r}");
}

/// A schema that does not compile (or refers to another document) is refused when the tool
/// is registered, with the reason; the unchecked `build` answers its calls with `isError`.
#[test]
fn a_schema_that_does_not_compile_is_refused_at_registration() {
    let bad = || {
        Tool::new(
            "bad",
            json!({"type": "object", "properties": {"a": {"type": "wrong"}}}),
        )
        .sync_handler(|_, _| Ok(CallToolResult::text("never")))
    };
    assert!(Tool::try_new("remote", json!({"$ref": "https://example.com/s.json"})).is_err());
    match Server::builder(info())
        .tool(bad())
        .try_build(Instant::now())
    {
        Err(BuildError::InvalidSchema { tool, reason }) => {
            assert_eq!(tool, "bad");
            assert!(reason.to_string().contains("does not compile"), "{reason}");
        }
        other => panic!("expected a schema error, got {:?}", other.err()),
    }
    let output = Tool::new("out", json!({"type": "object"})).output_schema(json!({"minimum": "x"}));
    assert!(output.schema_error().is_some());
    let mut rig = Rig::new(Server::builder(info()).tool(bad()), no_caps());
    let handle = rig.server.handle();
    assert!(matches!(
        handle.add_tool(bad()),
        Err(BuildError::InvalidSchema { .. })
    ));
    let r = rig.call(
        "tools/call",
        json!({"name": "bad", "arguments": {}}),
        "CallToolResult",
    );
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("does not compile"));
}

/// Arguments of a typed tool: a nested type, an enum, an optional field.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// At most this many hits.
    limit: Option<u32>,
    filter: Filter,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    lang: Vec<Lang>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Lang {
    Rust,
    Go,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Hits {
    count: u32,
    first: Option<String>,
}

fn typed_server() -> ServerBuilder {
    let search = Tool::typed::<SearchArgs>("search")
        .description("Searches")
        .output::<Hits>()
        .sync_handler(|args, _| {
            let langs = args.filter.lang.len() as u32;
            Ok(Hits {
                count: args.limit.unwrap_or(10).min(langs),
                first: Some(args.query),
            })
        });
    let plain = Tool::typed::<Filter>("plain")
        .sync_handler(|f, _| Ok(CallToolResult::text(format!("{} languages", f.lang.len()))));
    Server::builder(info()).tool(search).tool(plain)
}

/// The input schema is derived (2020-12, nested types under `$defs`), the output schema too;
/// the handler gets parsed arguments and its answer is the structured content and its text.
#[test]
fn typed_tools_derive_schemas_and_parse_arguments() {
    let mut rig = Rig::new(typed_server(), no_caps());
    let list = rig.call("tools/list", json!({}), "ListToolsResult");
    let search = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "search")
        .unwrap();
    let input = &search["inputSchema"];
    assert_eq!(input["type"], "object");
    assert_eq!(
        input["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(
        input["properties"]["query"]["description"],
        "What to look for."
    );
    assert_eq!(input["properties"]["filter"]["$ref"], "#/$defs/Filter");
    assert!(input["$defs"]["Lang"].is_object(), "{input}");
    assert_eq!(input["required"], json!(["query", "filter"]));
    assert_eq!(
        search["outputSchema"]["properties"]["count"]["type"],
        "integer"
    );

    let r = rig.call(
        "tools/call",
        json!({"name": "search", "arguments": {"query": "q", "filter": {"lang": ["rust", "go"]}}}),
        "CallToolResult",
    );
    assert_eq!(r["structuredContent"], json!({"count": 2, "first": "q"}));
    let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, r["structuredContent"]);
    let r = rig.call(
        "tools/call",
        json!({"name": "plain", "arguments": {"lang": ["go"]}}),
        "CallToolResult",
    );
    assert_eq!(r["content"][0]["text"], "1 languages");
}

/// Arguments the derived schema refuses are an `isError` result naming the path; arguments
/// that pass a schema but do not parse into the type are `-32602`.
#[test]
fn typed_tool_arguments_that_do_not_fit_are_refused() {
    let mut rig = Rig::new(typed_server(), no_caps());
    let r = rig.call(
        "tools/call",
        json!({"name": "search", "arguments": {"query": "q", "filter": {"lang": ["cobol"]}}}),
        "CallToolResult",
    );
    assert_eq!(r["isError"], true);
    assert!(r["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("/filter/lang/0"));
    // `u32` is `{"type":"integer","minimum":0}` (format `uint32`, an annotation) in the schema:
    // a larger integer passes it and fails the parse.
    let e = rig.error(
        "tools/call",
        json!({"name": "search", "arguments": {"query": "q", "limit": 5_000_000_000_u64, "filter": {"lang": []}}}),
    );
    assert_eq!(e.code, code::INVALID_PARAMS);
    assert!(e.message.contains("invalid arguments"), "{}", e.message);
}

/// A typed prompt: its arguments are the type's fields (doc comments as descriptions,
/// `Option`s optional), and the handler gets them parsed.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ReviewArgs {
    /// The code to review.
    code: String,
    /// The reviewer's focus.
    focus: Option<String>,
}

#[test]
fn typed_prompts_declare_and_parse_their_arguments() {
    let prompt = Prompt::typed::<ReviewArgs>("review").sync_handler(|args, _| {
        let focus = args.focus.unwrap_or_else(|| "anything".into());
        Ok(GetPromptResult::user_text(format!(
            "Review {} for {focus}",
            args.code
        )))
    });
    let mut rig = Rig::new(Server::builder(info()).prompt(prompt), no_caps());
    let list = rig.call("prompts/list", json!({}), "ListPromptsResult");
    assert_eq!(
        list["prompts"][0]["arguments"],
        json!([
            {"name": "code", "description": "The code to review.", "required": true},
            {"name": "focus", "description": "The reviewer's focus.", "required": false}
        ])
    );
    let r = rig.call(
        "prompts/get",
        json!({"name": "review", "arguments": {"code": "x = 1"}}),
        "GetPromptResult",
    );
    assert_eq!(
        r["messages"][0]["content"]["text"],
        "Review x = 1 for anything"
    );
    let e = rig.error("prompts/get", json!({"name": "review", "arguments": {}}));
    assert_eq!(e.code, code::INVALID_PARAMS);
}

#[test]
fn a_panicking_handler_answers_its_request_with_an_internal_error_and_the_server_goes_on() {
    let sync_panic = Tool::new("sync_panic", json!({"type": "object"}))
        .sync_handler(|_, _| -> Result<CallToolResult, ErrorObject> { panic!("a bug in a tool") });
    let late_panic = Tool::new("late_panic", json!({"type": "object"})).handler(|_, _| async {
        mcp_sansio::runtime::yield_now().await;
        panic!("a bug after a wait")
    });
    let prompt =
        Prompt::new("bad_prompt").sync_handler(|_, _| -> Result<GetPromptResult, ErrorObject> {
            panic!("a bug in a prompt")
        });
    let builder = full_server()
        .tool(sync_panic)
        .tool(late_panic)
        .prompt(prompt);
    let mut rig = Rig::new(builder, no_caps());

    for params in [
        ("tools/call", json!({"name": "sync_panic"})),
        ("prompts/get", json!({"name": "bad_prompt"})),
    ] {
        let e = rig.error(params.0, params.1);
        assert_eq!(e.code, code::INTERNAL_ERROR);
        assert!(e.message.contains("panicked"), "{}", e.message);
        assert!(!e.message.contains("a bug"), "the panic's text stays local");
    }

    // A handler that panics when the driver polls its job again.
    let id = rig.send("tools/call", json!({"name": "late_panic"}), false);
    assert!(rig.outcome(&id).is_none());
    assert_eq!(rig.jobs.len(), 1);
    rig.run_jobs();
    rig.pump();
    match rig.outcome(&id) {
        Some(Outcome::Error(e)) => assert_eq!(e.code, code::INTERNAL_ERROR),
        other => panic!("expected an internal error, got {other:?}"),
    }

    let r = rig.call(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "still here"}}),
        "CallToolResult",
    );
    assert_eq!(r["content"][0]["text"], "Echo: still here");
}
