//! The client's sampling and elicitation policies, driven by hand-written server frames on a
//! virtual clock: each refusal path (rate limit with burst and refill, depth, hook, token
//! budget), an edit reaching the handler, elicitation declined or rate-limited; every
//! server-bound frame checked against the 2025-11-25 schema.

use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{json, Value};

use crate::client_frames::poll;
use crate::common::assert_valid;
use mcp_sansio::app::client::{
    CallOptions, Client, ClientBuilder, Decision, ElicitationPolicy, PendingCall, RateLimit,
    SamplingPolicy, USER_REJECTED,
};
use mcp_sansio::jsonrpc::RawJson;
use mcp_sansio::model::{
    CreateMessageParams, CreateMessageResult, ElicitResult, Implementation, ProtocolVersion,
    SamplingContent, SamplingContentList,
};

const VERSION: ProtocolVersion = ProtocolVersion::V2025_11_25;

/// Every frame the client sent since last asked, each checked against the schema.
fn sent(client: &mut Client) -> Vec<Value> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while client.poll_transmit(&mut buf).is_some() {
        assert_valid(VERSION, &buf);
        out.push(serde_json::from_slice(&buf).unwrap());
        buf.clear();
    }
    out
}

/// The params of each sampling request the handler got.
type Seen = Arc<Mutex<Vec<CreateMessageParams>>>;

fn answer(text: &str) -> CreateMessageResult {
    CreateMessageResult {
        role: mcp_sansio::model::Role::Assistant,
        content: SamplingContentList::One(SamplingContent::text(text)),
        model: "test-model".into(),
        stop_reason: Some("endTurn".into()),
        meta: None,
        extra: Default::default(),
    }
}

/// A builder whose sync sampling handler records its params and answers at once.
fn sampling_builder(seen: &Seen) -> ClientBuilder {
    let seen = seen.clone();
    Client::builder(Implementation::new("c", "1")).sampling_sync(move |params, _| {
        lock(&seen).push(params);
        Ok(answer("ok"))
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs the handshake with a fake 2025-11-25 server.
fn ready(mut client: Client, now: Instant) -> Client {
    let handle = client.handle();
    let mut init = Box::pin(async move { handle.initialize().await });
    assert!(poll(&mut init).is_pending());
    let request = sent(&mut client).remove(0);
    let response = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "protocolVersion": VERSION.as_str(), "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"}}});
    client.handle_input(now, Bytes::from(response.to_string()));
    assert!(matches!(poll(&mut init), Poll::Ready(Ok(_))));
    assert_eq!(sent(&mut client).len(), 1, "notifications/initialized");
    client
}

/// The server's `sampling/createMessage` with id `id`; the client's reply to it.
fn sample(client: &mut Client, now: Instant, id: &str, max_tokens: u64) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": max_tokens}});
    client.handle_input(now, Bytes::from(request.to_string()));
    reply_to(client, id)
}

/// The client's reply to the server's request `id` among what it sent.
fn reply_to(client: &mut Client, id: &str) -> Value {
    sent(client)
        .into_iter()
        .find(|f| f["id"] == id && f.get("method").is_none())
        .unwrap_or_else(|| panic!("no reply to {id}"))
}

/// Asserts `reply` is the policy's refusal by `limit`.
fn assert_refused(reply: &Value, limit: &str) {
    assert_eq!(reply["error"]["code"], USER_REJECTED, "{reply}");
    assert_eq!(reply["error"]["data"]["limit"], limit, "{reply}");
}

/// Sends `tools/call` (kept pending: dropping the call would cancel it); its request id.
fn call_tool(client: &mut Client, options: CallOptions, calls: &mut Vec<PendingCall>) -> Value {
    let params = RawJson::from_serialize(&json!({"name": "t", "arguments": {}})).unwrap();
    calls.push(
        client
            .handle()
            .request_raw("tools/call", Some(params), options),
    );
    let frames = sent(client);
    assert_eq!(frames[0]["method"], "tools/call");
    frames[0]["id"].clone()
}

#[test]
fn rate_limit_allows_the_burst_then_refills_as_now_advances() {
    let t0 = Instant::now();
    let seen = Seen::default();
    let policy = SamplingPolicy::new().rate(Some(RateLimit::per_minute(60, 3)));
    let mut client = ready(
        sampling_builder(&seen).sampling_policy(policy).build(t0),
        t0,
    );
    for i in 0..3 {
        let reply = sample(&mut client, t0, &format!("s{i}"), 10);
        assert_eq!(reply["result"]["model"], "test-model");
    }
    assert_refused(&sample(&mut client, t0, "s3", 10), "rate");
    let almost = t0 + Duration::from_millis(999);
    assert_refused(&sample(&mut client, almost, "s4", 10), "rate");
    let later = t0 + Duration::from_secs(1);
    assert!(sample(&mut client, later, "s5", 10).get("result").is_some());
    assert_refused(&sample(&mut client, later, "s6", 10), "rate");
    assert_eq!(
        lock(&seen).len(),
        4,
        "refused requests never reach the handler"
    );
}

#[test]
fn default_rate_limit_is_a_burst_of_twenty() {
    let t0 = Instant::now();
    let seen = Seen::default();
    let builder = sampling_builder(&seen).sampling_policy(SamplingPolicy::new());
    let mut client = ready(builder.build(t0), t0);
    for i in 0..20 {
        assert!(sample(&mut client, t0, &format!("s{i}"), 1)
            .get("result")
            .is_some());
    }
    assert_refused(&sample(&mut client, t0, "s20", 1), "rate");
}

/// A ready client whose sampling handler stays pending until the server cancels (so tool
/// calls made meanwhile are nested in it), with depth limit `max_depth` and no rate limit.
fn pending_sampler(max_depth: u32, now: Instant) -> Client {
    let builder = Client::builder(Implementation::new("c", "1")).sampling(|_, ctx| async move {
        ctx.cancelled().await;
        Ok(answer("late"))
    });
    let policy = SamplingPolicy::new().max_depth(max_depth).rate(None);
    ready(builder.sampling_policy(policy).build(now), now)
}

fn sampling_request(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 5}})
}

#[test]
fn sampling_nested_deeper_than_the_limit_is_refused() {
    let now = Instant::now();
    let mut client = pending_sampler(2, now);
    let mut calls = Vec::new();
    let outer = call_tool(&mut client, CallOptions::default(), &mut calls);
    // Depth 1, handler running (no reply yet).
    let request = sampling_request;
    client.handle_input(now, Bytes::from(request("s1").to_string()));
    assert!(sent(&mut client).is_empty());
    // A tool call made inside s1's handler (named by `parent`): depth 2 is still allowed.
    let parent = CallOptions {
        parent: Some(serde_json::from_value(json!("s1")).unwrap()),
        ..CallOptions::default()
    };
    let inner = call_tool(&mut client, parent, &mut calls);
    assert_ne!(inner, outer);
    client.handle_input(now, Bytes::from(request("s2").to_string()));
    assert!(sent(&mut client).is_empty(), "depth 2 runs");
    // With s1 and s2 running, a call naming s2 nests once more: depth 3 is refused.
    let deeper = CallOptions {
        parent: Some(serde_json::from_value(json!("s2")).unwrap()),
        ..CallOptions::default()
    };
    call_tool(&mut client, deeper, &mut calls);
    client.handle_input(now, Bytes::from(request("s3").to_string()));
    let reply = reply_to(&mut client, "s3");
    assert_refused(&reply, "depth");
}

#[test]
fn a_tool_call_during_the_only_running_sampling_is_nested_in_it() {
    let now = Instant::now();
    let mut client = pending_sampler(1, now);
    let mut calls = Vec::new();
    call_tool(&mut client, CallOptions::default(), &mut calls);
    let request = sampling_request;
    client.handle_input(now, Bytes::from(request("s1").to_string()));
    assert!(sent(&mut client).is_empty(), "depth 1 runs");
    call_tool(&mut client, CallOptions::default(), &mut calls);
    client.handle_input(now, Bytes::from(request("s2").to_string()));
    assert_refused(&reply_to(&mut client, "s2"), "depth");
}

#[test]
fn the_hook_refuses_and_the_handler_never_runs() {
    let now = Instant::now();
    let seen = Seen::default();
    let policy = SamplingPolicy::new().hook(|params, lineage| {
        assert_eq!(lineage.depth, 1);
        assert_eq!(lineage.tool_call, None);
        Decision::Refuse(format!("not {} tokens", params.max_tokens))
    });
    let mut client = ready(
        sampling_builder(&seen).sampling_policy(policy).build(now),
        now,
    );
    let reply = sample(&mut client, now, "s1", 42);
    assert_refused(&reply, "hook");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("User rejected sampling request"),
        "{message}"
    );
    assert!(message.contains("not 42 tokens"), "{message}");
    assert!(lock(&seen).is_empty());
}

#[test]
fn the_hook_edits_and_the_handler_gets_the_edit() {
    let now = Instant::now();
    let seen = Seen::default();
    let policy = SamplingPolicy::new().hook(|params, _| {
        let mut edited = params.clone();
        edited.max_tokens = 7;
        if let Some(last) = edited.messages.last_mut() {
            last.content = SamplingContentList::One(SamplingContent::text("edited"));
        }
        edited.tools = Some(Vec::new());
        Decision::Edit(edited)
    });
    let mut client = ready(
        sampling_builder(&seen).sampling_policy(policy).build(now),
        now,
    );
    let reply = sample(&mut client, now, "s1", 500);
    assert_eq!(reply["result"]["content"]["text"], "ok");
    let seen = lock(&seen);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].max_tokens, 7);
    let text = serde_json::to_value(&seen[0].messages[0].content).unwrap();
    assert_eq!(text["text"], "edited");
    assert_eq!(seen[0].tools, Some(Vec::new()));
}

#[test]
fn the_token_budget_counts_max_tokens_per_top_level_tool_call() {
    let now = Instant::now();
    let seen = Seen::default();
    let policy = SamplingPolicy::new()
        .max_tokens_per_call(Some(150))
        // Counted after the hook: 100 asked becomes 60.
        .hook(|params, _| {
            let mut edited = params.clone();
            edited.max_tokens = edited.max_tokens.min(60);
            Decision::Edit(edited)
        });
    let mut client = ready(
        sampling_builder(&seen).sampling_policy(policy).build(now),
        now,
    );
    // Outside any tool call there is no budget.
    assert!(sample(&mut client, now, "free", 1000)
        .get("result")
        .is_some());
    let mut calls = Vec::new();
    let first = call_tool(&mut client, CallOptions::default(), &mut calls);
    assert!(sample(&mut client, now, "a1", 100).get("result").is_some());
    assert!(sample(&mut client, now, "a2", 100).get("result").is_some());
    assert_refused(&sample(&mut client, now, "a3", 100), "tokens");
    // A smaller request still fits (120 + 30 = 150).
    assert!(sample(&mut client, now, "a4", 30).get("result").is_some());
    // The tool call completes; the next one has its own budget.
    let done = json!({"jsonrpc": "2.0", "id": first, "result": {"content": []}});
    client.handle_input(now, Bytes::from(done.to_string()));
    call_tool(&mut client, CallOptions::default(), &mut calls);
    assert!(sample(&mut client, now, "b1", 100).get("result").is_some());
    assert_eq!(lock(&seen).len(), 5);
}

fn elicit(client: &mut Client, now: Instant, id: &str) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create",
        "params": {"mode": "form", "message": "name?", "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}}}});
    client.handle_input(now, Bytes::from(request.to_string()));
    reply_to(client, id)
}

#[test]
fn elicitation_refused_by_the_hook_is_declined_and_rate_limited_is_an_error() {
    let t0 = Instant::now();
    let asked = Arc::new(Mutex::new(0));
    let counter = asked.clone();
    let policy = ElicitationPolicy::new()
        .rate(Some(RateLimit::per_minute(1, 2)))
        .hook(|params, _| {
            if params.message.contains("secret") {
                Decision::Refuse("no secrets".into())
            } else {
                Decision::Approve
            }
        });
    let builder = Client::builder(Implementation::new("c", "1"))
        .elicitation_sync(move |_, _| {
            *lock(&counter) += 1;
            Ok(serde_json::from_value::<ElicitResult>(json!({"action": "cancel"})).unwrap())
        })
        .elicitation_policy(policy);
    let mut client = ready(builder.build(t0), t0);
    assert_eq!(elicit(&mut client, t0, "e1")["result"]["action"], "cancel");
    let secret = json!({"jsonrpc": "2.0", "id": "e2", "method": "elicitation/create",
        "params": {"message": "your secret?", "requestedSchema": {"type": "object",
            "properties": {}}}});
    client.handle_input(t0, Bytes::from(secret.to_string()));
    let declined = reply_to(&mut client, "e2");
    assert_eq!(declined["result"], json!({"action": "decline"}));
    assert_refused(&elicit(&mut client, t0, "e3"), "rate");
    assert_eq!(*lock(&asked), 1);
    // One token per minute comes back.
    let later = t0 + Duration::from_secs(60);
    assert_eq!(
        elicit(&mut client, later, "e4")["result"]["action"],
        "cancel"
    );
}

#[test]
fn without_a_handler_the_policy_does_not_answer() {
    let now = Instant::now();
    let builder = Client::builder(Implementation::new("c", "1"))
        .sampling_policy(SamplingPolicy::new().hook(|_, _| Decision::Approve));
    assert!(builder.capabilities().sampling.is_none());
    let mut client = ready(builder.build(now), now);
    let reply = sample(&mut client, now, "s1", 1);
    assert_eq!(
        reply["error"]["code"],
        mcp_sansio::jsonrpc::code::METHOD_NOT_FOUND
    );
}
