//! The poll machine on a virtual clock: the per-request timeout, the reply size limit, an
//! input-required round trip through a pending handler job, task polling at the server's
//! interval from `now`, cancel (Abort on HTTP, `notifications/cancelled` on stdio), the limits
//! of calls and unread events, and stdio lines.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{json, Value};

use super::*;
use crate::app::client::stateless::TaskHandle;
use crate::app::client::Client;
use crate::model::{ElicitAction, ElicitResult, Implementation};
use crate::outgoing::{Action, OutgoingRequest};

fn machine(wire: Wire, now: Instant) -> StatelessMachine {
    let client = StatelessClient::new(&Client::builder(Implementation::new("t", "1")));
    StatelessMachine::new(client, wire, now)
}

fn sent(m: &mut StatelessMachine) -> OutgoingRequest {
    match m.poll_action() {
        Some(Action::Send(request)) => request,
        other => panic!("expected a request, got {other:?}"),
    }
}

/// A machine at `now` with one call of `method` started and its request taken.
fn started(
    wire: Wire,
    now: Instant,
    method: &str,
    params: Option<Value>,
) -> (StatelessMachine, CallId, OutgoingRequest) {
    let mut m = machine(wire, now);
    let id = m.start_call(now, method, params);
    let request = sent(&mut m);
    (m, id, request)
}

fn body(request: &OutgoingRequest) -> Value {
    serde_json::from_slice(&request.body).unwrap()
}

fn answer(m: &mut StatelessMachine, now: Instant, request: &OutgoingRequest, result: Value) {
    let message = json!({"jsonrpc": "2.0", "id": body(request)["id"], "result": result});
    let bytes = Bytes::from(serde_json::to_vec(&message).unwrap());
    m.handle_response_head(now, request.id, 200, [("content-type", "application/json")]);
    m.handle_response_body(now, request.id, bytes);
    m.handle_response_end(now, request.id);
}

fn done(m: &mut StatelessMachine) -> (CallId, Result<Value, ClientError>) {
    match m.poll_event() {
        Some(StatelessEvent::Done { call, result }) => (call, result),
        other => panic!("expected Done, got {other:?}"),
    }
}

#[test]
fn an_unanswered_attempt_times_out_and_is_aborted() {
    let t0 = Instant::now();
    let (mut m, id, request) = started(Wire::Http, t0, "prompts/list", None);
    assert_eq!(m.poll_timeout(), Some(t0 + DEFAULT_REQUEST_TIMEOUT));
    m.handle_timeout(t0 + DEFAULT_REQUEST_TIMEOUT - Duration::from_millis(1));
    assert!(m.poll_event().is_none(), "not due yet");
    m.handle_timeout(t0 + DEFAULT_REQUEST_TIMEOUT);
    assert_eq!(m.poll_action(), Some(Action::Abort(request.id)));
    let (call, result) = done(&mut m);
    assert_eq!(call, id);
    assert!(matches!(result, Err(ClientError::TimedOut)));
    assert_eq!(m.poll_timeout(), None);
    assert!(m.had_unanswered());
    // A late answer is passed over.
    answer(&mut m, t0, &request, json!({}));
    assert!(m.poll_event().is_none());

    m.set_request_timeout(Duration::from_secs(2));
    m.start_call(t0, "prompts/list", None);
    assert_eq!(m.poll_timeout(), Some(t0 + Duration::from_secs(2)));
}

#[test]
fn a_reply_body_over_the_limit_fails_the_call() {
    let t0 = Instant::now();
    let (mut m, id, request) = started(
        Wire::Http,
        t0,
        "resources/read",
        Some(json!({"uri": "a:b"})),
    );
    m.handle_response_head(t0, request.id, 200, [("content-type", "application/json")]);
    let chunk = Bytes::from(vec![b' '; 1024 * 1024]);
    for _ in 0..16 {
        m.handle_response_body(t0, request.id, chunk.clone());
    }
    assert!(m.poll_event().is_none(), "exactly the limit is accepted");
    m.handle_response_body(t0, request.id, Bytes::from_static(b" "));
    assert_eq!(m.poll_action(), Some(Action::Abort(request.id)));
    let (call, result) = done(&mut m);
    assert_eq!(call, id);
    let Err(ClientError::Limit(why)) = result else {
        panic!("{result:?}");
    };
    assert!(why.contains(&MAX_REPLY_BODY.to_string()), "{why}");
    m.handle_response_end(t0, request.id);
    assert!(m.poll_event().is_none());
}

#[test]
fn input_required_round_trip_runs_the_handler_as_a_job() {
    let t0 = Instant::now();
    let builder = Client::builder(Implementation::new("t", "1")).elicitation(|_, _| async {
        crate::runtime::yield_now().await;
        Ok(ElicitResult {
            action: ElicitAction::Accept,
            content: Some(json!({"ok": true}).as_object().unwrap().clone()),
            meta: None,
            extra: Default::default(),
        })
    });
    let mut m = StatelessMachine::new(StatelessClient::new(&builder), Wire::Http, t0);
    let wakes = Arc::new(AtomicUsize::new(0));
    let counter = wakes.clone();
    m.set_waker(Arc::new(move || {
        counter.fetch_add(1, Ordering::SeqCst);
    }));
    let id = m.start_call(t0, "prompts/get", Some(json!({"name": "p"})));
    let first = sent(&mut m);
    let ask = json!({"method": "elicitation/create", "params": {"message": "ok?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}});
    let t1 = t0 + Duration::from_secs(1);
    answer(
        &mut m,
        t1,
        &first,
        json!({"resultType": "input_required", "inputRequests": {"k": ask}, "requestState": "s1"}),
    );
    assert!(m.poll_action().is_none(), "the handler has not answered");
    assert_eq!(
        m.poll_timeout(),
        None,
        "no attempt in flight while answering"
    );
    let mut job = m.poll_job().expect("the pending handler is a job");
    assert!(job
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_ready());
    assert_eq!(wakes.load(Ordering::SeqCst), 1);
    let t2 = t1 + Duration::from_secs(1);
    m.handle_wake(t2);
    let retry = sent(&mut m);
    let params = &body(&retry)["params"];
    assert_eq!(params["inputResponses"]["k"]["content"]["ok"], true);
    assert_eq!(params["requestState"], "s1");
    assert_ne!(body(&retry)["id"], body(&first)["id"]);
    assert_eq!(m.poll_timeout(), Some(t2 + DEFAULT_REQUEST_TIMEOUT));
    answer(&mut m, t2, &retry, json!({"messages": []}));
    let (call, result) = done(&mut m);
    assert_eq!(call, id);
    assert_eq!(result.unwrap(), json!({"messages": []}));
}

#[test]
fn task_polls_follow_the_server_interval_from_now() {
    let t0 = Instant::now();
    let mut m = machine(Wire::Http, t0);
    let created = json!({"resultType": "task", "taskId": "t1", "status": "working",
        "pollIntervalMs": 250});
    let task = TaskHandle::from_create_result(&created).expect("a task");
    let id = m.start_task_wait(t0, task);
    assert!(
        m.poll_action().is_none(),
        "the first poll waits one interval"
    );
    assert_eq!(m.poll_timeout(), Some(t0 + Duration::from_millis(250)));
    m.handle_timeout(t0 + Duration::from_millis(249));
    assert!(m.poll_action().is_none());
    let t1 = t0 + Duration::from_millis(260);
    m.handle_timeout(t1);
    let get = sent(&mut m);
    assert_eq!(body(&get)["method"], "tasks/get");
    assert_eq!(get.header("Mcp-Name"), Some("t1"));
    let t2 = t1 + Duration::from_millis(5);
    answer(
        &mut m,
        t2,
        &get,
        json!({"taskId": "t1", "status": "working", "pollIntervalMs": 100}),
    );
    assert!(matches!(
        m.poll_event(),
        Some(StatelessEvent::TaskStatus { call, status: crate::model::TaskStatus::Working }) if call == id
    ));
    assert_eq!(m.poll_timeout(), Some(t2 + Duration::from_millis(100)));
    m.handle_timeout(t2 + Duration::from_millis(100));
    let get = sent(&mut m);
    answer(
        &mut m,
        t2,
        &get,
        json!({"taskId": "t1", "status": "completed", "result": {"content": []}}),
    );
    assert!(matches!(
        m.poll_event(),
        Some(StatelessEvent::TaskStatus { .. })
    ));
    match m.poll_event() {
        Some(StatelessEvent::TaskDone {
            call,
            task_id,
            outcome: Ok(TaskOutcome::Completed(result)),
        }) => {
            assert_eq!(call, id);
            assert_eq!(task_id, "t1");
            assert_eq!(result, json!({"content": []}));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(m.calls_in_flight(), 0);
}

#[test]
fn cancel_aborts_on_http_and_sends_cancelled_on_stdio() {
    let t0 = Instant::now();
    let (mut m, id, request) = started(Wire::Http, t0, "tools/list", None);
    m.cancel(t0, id);
    assert_eq!(m.poll_action(), Some(Action::Abort(request.id)));
    assert!(
        m.poll_event().is_none(),
        "a cancelled call ends without an event"
    );
    answer(&mut m, t0, &request, json!({"tools": []}));
    assert!(m.poll_event().is_none());

    let mut m = machine(Wire::Stdio, t0);
    let listen = m.start_listen(t0, &ListenFilter::default());
    let open = sent(&mut m);
    m.cancel(t0, listen);
    let cancel = sent(&mut m);
    let cancel = body(&cancel);
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], body(&open)["id"]);
    assert!(m.had_unanswered());
}

#[test]
fn calls_past_the_limit_fail_at_once() {
    let t0 = Instant::now();
    let mut m = machine(Wire::Http, t0);
    for _ in 0..MAX_CALLS_IN_FLIGHT {
        m.start_call(t0, "prompts/list", None);
    }
    assert!(m.poll_event().is_none());
    let over = m.start_call(t0, "prompts/list", None);
    let (call, result) = done(&mut m);
    assert_eq!(call, over);
    assert!(matches!(result, Err(ClientError::Limit(_))));
    assert_eq!(m.calls_in_flight(), MAX_CALLS_IN_FLIGHT);
}

fn line(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap()
}

#[test]
fn stdio_lines_answer_by_id_and_feed_listen_streams() {
    let t0 = Instant::now();
    let mut m = machine(Wire::Stdio, t0);
    let listen = m.start_listen(t0, &ListenFilter::default());
    let listen_id = body(&sent(&mut m))["id"].as_i64().unwrap();
    let call = m.start_call(t0, "prompts/list", None);
    let request = sent(&mut m);
    let rpc_id = body(&request)["id"].clone();
    m.handle_line(t0, b"not json");
    m.handle_line(
        t0,
        &line(&json!({"jsonrpc": "2.0", "id": 999, "result": {}})),
    );
    assert!(m.poll_event().is_none());
    let tag = json!({"io.modelcontextprotocol/subscriptionId": listen_id});
    let change = json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed",
        "params": {"_meta": tag}});
    m.handle_line(t0, &line(&change));
    assert!(matches!(
        m.poll_event(),
        Some(StatelessEvent::Listen { call, event: ListenEvent::PromptsListChanged }) if call == listen
    ));
    m.handle_line(
        t0,
        &line(&json!({"jsonrpc": "2.0", "id": rpc_id, "result": {"prompts": []}})),
    );
    let (ended, result) = done(&mut m);
    assert_eq!(ended, call);
    assert_eq!(result.unwrap(), json!({"prompts": []}));
    // The events past the limit fail the stream.
    for _ in 0..MAX_QUEUED_EVENTS {
        m.handle_line(t0, &line(&change));
    }
    m.handle_line(t0, &line(&change));
    let mut last = None;
    while let Some(event) = m.poll_event() {
        last = Some(event);
    }
    assert!(matches!(
        last,
        Some(StatelessEvent::Done { call, result: Err(ClientError::Limit(_)) }) if call == listen
    ));
    assert_eq!(m.calls_in_flight(), 0);
}

#[test]
fn an_http_listen_stream_reads_its_body_and_ends_with_its_response() {
    let t0 = Instant::now();
    let mut m = machine(Wire::Http, t0);
    let filter = ListenFilter {
        tools: true,
        ..Default::default()
    };
    let listen = m.start_listen(t0, &filter);
    let open = sent(&mut m);
    let rpc_id = body(&open)["id"].as_i64().unwrap();
    assert_eq!(m.poll_timeout(), Some(t0 + DEFAULT_REQUEST_TIMEOUT));
    m.handle_response_head(t0, open.id, 200, [("Content-Type", "text/event-stream")]);
    assert_eq!(m.poll_timeout(), None, "an open stream has no deadline");
    let tag = json!({"io.modelcontextprotocol/subscriptionId": rpc_id});
    let change = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": tag}});
    let closing = json!({"jsonrpc": "2.0", "id": rpc_id, "result": {}});
    let sse = format!("data: {change}\n\ndata: {closing}\n\n");
    m.handle_response_body(t0, open.id, Bytes::from(sse));
    assert!(matches!(
        m.poll_event(),
        Some(StatelessEvent::Listen { call, event: ListenEvent::ToolsListChanged }) if call == listen
    ));
    assert!(matches!(
        m.poll_event(),
        Some(StatelessEvent::Listen {
            event: ListenEvent::Closed(_),
            ..
        })
    ));
    assert_eq!(m.poll_action(), Some(Action::Abort(open.id)));
    assert_eq!(m.calls_in_flight(), 0);

    // A status without a stream or JSON fails the listen call.
    let listen = m.start_listen(t0, &filter);
    let open = sent(&mut m);
    m.handle_response_head(t0, open.id, 404, [("Content-Type", "text/html")]);
    let (call, result) = done(&mut m);
    assert_eq!(call, listen);
    assert!(matches!(result, Err(ClientError::Http { status: 404 })));
}

#[test]
fn close_fails_every_call_and_later_starts() {
    let t0 = Instant::now();
    let (mut m, a, request) = started(Wire::Http, t0, "prompts/list", None);
    m.close(t0);
    assert_eq!(m.poll_action(), Some(Action::Abort(request.id)));
    let (call, result) = done(&mut m);
    assert_eq!(call, a);
    assert!(matches!(result, Err(ClientError::Transport(_))));
    let b = m.start_call(t0, "prompts/list", None);
    assert_eq!(done(&mut m).0, b);
    assert!(m.is_closed());
}
