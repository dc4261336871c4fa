//! Three `mcp-sansio serve --http --store redis://…` processes on loopback sharing one
//! private redis-server, and a client that sends each request to another instance: the
//! session initialized on one is served by the others, concurrent first requests on an
//! instance that does not hold the session all succeed, an elicitation answered through
//! another instance reaches the tool that asked, a DELETE on one ends it on all, and an idle
//! session expires on all, while one whose client listens does not; a response stream cut
//! off on one instance is resumed on another, which replays what the first wrote and follows
//! what it still writes; a GET stream cut off on one instance is resumed on another, which
//! sends what the first wrote after the client's id, then its own, and what still arises on
//! the first, relayed through the bus; a forged `Last-Event-ID`
//! gets 400; the open request of a killed
//! instance ends with an error when resumed elsewhere; with the store gone, requests get 503;
//! an instance started before its store answers 503 until the store comes up, then serves,
//! and serves again after the store went away and came back; a task request sent to another
//! instance than the one running the task gets the running instance's answer.
//! Every process is stopped by its PID.
//!
//! Skipped (with a message) when redis-server is not installed and `CI` is unset; under CI
//! it must run.

#[path = "../../../store/tests/contract/redis_server.rs"]
mod redis_server;

#[path = "../support/http_fixture.rs"]
mod http_fixture;

#[path = "../../../http/tests/support/sse_events.rs"]
mod sse_events;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use http_fixture::HttpFixture;
use redis_server::RedisServer;
use sse_events::sse_events;

/// One answer: status, `Mcp-Session-Id`, body (and the whole head).
struct Reply {
    head: String,
    status: u16,
    session: Option<String>,
    body: String,
}

/// One request on a fresh connection (`Connection: close`), read to its end.
fn send(url: &str, method: &str, session: Option<&str>, body: &str) -> Reply {
    let mut stream = open_request(url, method, session, body);
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read the answer");
    parse(&raw)
}

/// Writes one request on a fresh connection (`Connection: close`); the answer is to be read.
fn open_request(url: &str, method: &str, session: Option<&str>, body: &str) -> TcpStream {
    open_request_with(url, method, session, body, "")
}

/// A GET of the session's stream resuming after `last_event_id`; the answer is to be read.
fn open_resume(url: &str, session: &str, last_event_id: &str) -> TcpStream {
    let extra = format!("Last-Event-ID: {last_event_id}\r\n");
    open_request_with(url, "GET", Some(session), "", &extra)
}

/// [`open_request`] with `extra` header lines (each ending in CRLF).
fn open_request_with(
    url: &str,
    method: &str,
    session: Option<&str>,
    body: &str,
    extra: &str,
) -> TcpStream {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, path) = rest.split_at(rest.find('/').expect("a path"));
    let mut stream = TcpStream::connect(authority).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    if let Some(session) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
        ));
    }
    head.push_str(extra);
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("write head");
    stream.write_all(body.as_bytes()).expect("write body");
    stream
}

/// Status, session id and body of a whole answer.
fn parse(raw: &str) -> Reply {
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let session = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_owned())
    });
    Reply {
        head: head.to_owned(),
        status,
        session,
        body: body.to_owned(),
    }
}

fn post(url: &str, session: Option<&str>, body: &str) -> Reply {
    send(url, "POST", session, body)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rotating","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"test_simple_text","arguments":{{}}}}}}"#
    )
}

fn ping(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)
}

/// A private redis-server and three instances using it, or `None` (skipped).
fn cluster(flags: &[&str]) -> Option<(RedisServer, Vec<HttpFixture>)> {
    let redis = RedisServer::start()?;
    let store = redis.url();
    let mut all = vec!["--store", store.as_str()];
    all.extend_from_slice(flags);
    let instances = (0..3).map(|_| HttpFixture::start_with(&all, &[])).collect();
    Some((redis, instances))
}

/// Initializes on `a` and finishes the handshake on `b`; returns the session id.
fn open(a: &HttpFixture, b: &HttpFixture) -> String {
    open_with(a, b, INITIALIZE)
}

fn open_with(a: &HttpFixture, b: &HttpFixture, initialize: &str) -> String {
    let init = post(&a.url, None, initialize);
    assert_eq!(init.status, 200, "{}", init.body);
    let sid = init.session.expect("a session id");
    let done = post(&b.url, Some(&sid), INITIALIZED);
    assert_eq!(done.status, 202, "{}", done.body);
    sid
}

#[test]
fn a_client_rotating_instances_sees_one_session_until_a_delete_ends_it_everywhere() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let [a, b, c] = &instances[..] else {
        unreachable!()
    };
    let sid = open(a, b);
    for (i, instance) in [c, a, b, c].into_iter().enumerate() {
        let reply = post(&instance.url, Some(&sid), &call(10 + i as u64));
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert!(
            reply
                .body
                .contains("This is a simple text response for testing."),
            "{}",
            reply.body
        );
    }
    let level =
        r#"{"jsonrpc":"2.0","id":20,"method":"logging/setLevel","params":{"level":"error"}}"#;
    assert_eq!(post(&b.url, Some(&sid), level).status, 200);
    // A second initialize on another instance is refused: the session is past its handshake.
    let again = post(&c.url, Some(&sid), INITIALIZE);
    assert!(again.body.contains("\"error\""), "{}", again.body);

    let deleted = send(&c.url, "DELETE", Some(&sid), "");
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    for instance in [a, b, c] {
        let reply = post(&instance.url, Some(&sid), &ping(30));
        assert_eq!(
            reply.status, 404,
            "{} after DELETE: {}",
            instance.url, reply.body
        );
    }
    // A session id no instance ever issued is unknown everywhere.
    assert_eq!(post(&a.url, Some("0123abcd"), &ping(31)).status, 404);
}

#[test]
fn concurrent_first_requests_on_another_instance_are_all_served() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let sid = open(&instances[0], &instances[0]);
    let url = instances[1].url.clone();
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let (url, sid) = (url.clone(), sid.clone());
            std::thread::spawn(move || post(&url, Some(&sid), &call(100 + i)))
        })
        .collect();
    for thread in threads {
        let reply = thread.join().expect("a client thread");
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert!(
            reply.body.contains("simple text response"),
            "{}",
            reply.body
        );
    }
    // The instance that restored it and the third one still agree.
    assert_eq!(post(&instances[2].url, Some(&sid), &ping(200)).status, 200);
}

#[test]
fn an_idle_session_expires_on_every_instance() {
    let Some((_redis, instances)) = cluster(&["--session-idle-timeout", "1"]) else {
        return;
    };
    let sid = open(&instances[0], &instances[1]);
    assert_eq!(post(&instances[2].url, Some(&sid), &ping(1)).status, 200);
    // Twice the idle timeout with no request: the record's time to live ran out.
    std::thread::sleep(Duration::from_millis(2500));
    for instance in &instances {
        let reply = post(&instance.url, Some(&sid), &ping(2));
        assert_eq!(reply.status, 404, "{}: {}", instance.url, reply.body);
    }
}

/// Reads `stream` until its text so far contains `wanted` (bounded by the read timeout and
/// 1 MiB); returns the text.
fn read_until(stream: &mut TcpStream, text: &mut String, wanted: &str) {
    let mut buf = [0u8; 4096];
    while !text.contains(wanted) {
        let n = stream.read(&mut buf).expect("read the stream");
        assert!(
            n > 0 && text.len() < 1 << 20,
            "ended without {wanted}: {text}"
        );
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
}

#[test]
fn an_elicitation_answered_through_another_instance_reaches_the_tool() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let [a, b, c] = &instances[..] else {
        unreachable!()
    };
    let init = INITIALIZE.replace(
        r#""capabilities":{}"#,
        r#""capabilities":{"elicitation":{}}"#,
    );
    let sid = open_with(a, c, &init);
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"Proceed?"}}}"#;
    // The call goes to B, whose answer streams the elicitation request.
    let mut stream = open_request(&b.url, "POST", Some(&sid), call);
    let mut text = String::new();
    read_until(&mut stream, &mut text, "elicitation/create");
    let request = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .find(|data| data.contains("elicitation/create"))
        .expect("an SSE data line");
    let request: serde_json::Value = serde_json::from_str(request).expect("JSON");
    let id = request["id"].clone();
    assert!(id.is_string(), "{request}");
    // The answer goes to C, which hands it to B.
    let answer = serde_json::json!({"jsonrpc": "2.0", "id": id,
        "result": {"action": "accept", "content": {"response": "yes"}}});
    let reply = post(&c.url, Some(&sid), &answer.to_string());
    assert_eq!(reply.status, 202, "{}", reply.body);
    read_until(&mut stream, &mut text, "action=accept");
    assert!(text.contains(r#"\"response\":\"yes\""#), "{text}");
}

#[test]
fn a_cancellation_sent_to_another_instance_stops_the_request() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let [a, b, c] = &instances[..] else {
        unreachable!()
    };
    let sid = open(a, b);
    // A minute-long call on B, whose stream stays open while it runs ...
    let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test_slow","arguments":{"ms":60000}}}"#;
    let mut stream = open_request(&b.url, "POST", Some(&sid), call);
    let mut text = String::new();
    read_until(&mut stream, &mut text, "\r\n\r\n");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    // ... cancelled through C: B's stream ends well within the read timeout, unanswered.
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"changed my mind"}}"#;
    let reply = post(&c.url, Some(&sid), cancel);
    assert_eq!(reply.status, 202, "{}", reply.body);
    let mut rest = String::new();
    stream
        .read_to_string(&mut rest)
        .expect("the stream ends before the read timeout");
    assert!(!rest.contains("Slept"), "{rest}");
}

/// The `initialize` of a 2025-11-25 client with elicitation: its response streams open with
/// a priming event whose id it can resume from.
fn initialize_with_priming() -> String {
    INITIALIZE.replace("2025-06-18", "2025-11-25").replace(
        r#""capabilities":{}"#,
        r#""capabilities":{"elicitation":{}}"#,
    )
}

/// The id of the first event in an SSE text.
fn first_event_id(text: &str) -> String {
    text.lines()
        .find_map(|line| line.strip_prefix("id: "))
        .expect("an event id")
        .to_owned()
}

#[test]
fn a_stream_cut_on_one_instance_is_resumed_on_another_from_the_store() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let [a, b, c] = &instances[..] else {
        unreachable!()
    };
    let sid = open_with(a, b, &initialize_with_priming());
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"Proceed?"}}}"#;
    // A streams the elicitation request; the client's connection to A is then cut.
    let mut cut = open_request(&a.url, "POST", Some(&sid), call);
    let mut text = String::new();
    read_until(&mut cut, &mut text, "elicitation/create");
    drop(cut);
    let priming = first_event_id(&text);
    // B replays from the store what A wrote after the priming event ...
    let mut resumed = open_resume(&b.url, &sid, &priming);
    let mut again = String::new();
    read_until(&mut resumed, &mut again, "elicitation/create");
    assert!(again.starts_with("HTTP/1.1 200"), "{again}");
    let request = again
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .find(|data| data.contains("elicitation/create"))
        .expect("the replayed request");
    let request: serde_json::Value = serde_json::from_str(request).expect("JSON");
    // ... and follows what A still writes: the answer, sent through C, reaches A's tool,
    // whose result comes out on B's stream, which then ends.
    let answer = serde_json::json!({"jsonrpc": "2.0", "id": request["id"],
        "result": {"action": "accept", "content": {"response": "yes"}}});
    assert_eq!(post(&c.url, Some(&sid), &answer.to_string()).status, 202);
    let mut rest = String::new();
    resumed
        .read_to_string(&mut rest)
        .expect("B's stream ends once A's does");
    assert!(rest.contains("action=accept"), "{again}{rest}");
    assert_eq!(
        (again + &rest).matches("elicitation/create").count(),
        1,
        "nothing twice"
    );
}

#[test]
fn a_forged_last_event_id_gets_400_on_every_instance() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let sid = open_with(&instances[0], &instances[1], &initialize_with_priming());
    let other = open_with(&instances[1], &instances[2], &initialize_with_priming());
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_slow","arguments":{"ms":60000}}}"#;
    let mut stream = open_request(&instances[0].url, "POST", Some(&sid), call);
    let mut text = String::new();
    read_until(&mut stream, &mut text, "id: ");
    read_until(&mut stream, &mut text, "\n\n");
    let genuine = first_event_id(&text);
    let mut forged = genuine.clone();
    let last = forged.pop().expect("a MAC");
    forged.push(if last == 'A' { 'B' } else { 'A' });
    for instance in &instances {
        for (session, id) in [(&sid, forged.as_str()), (&other, genuine.as_str())] {
            let mut resume = open_resume(&instance.url, session, id);
            let mut reply = String::new();
            resume.read_to_string(&mut reply).expect("an answer");
            assert!(
                reply.starts_with("HTTP/1.1 400"),
                "{}: {reply}",
                instance.url
            );
        }
    }
}

#[test]
fn a_request_of_a_killed_instance_ends_with_an_error_when_resumed_elsewhere() {
    let Some((_redis, mut instances)) = cluster(&[]) else {
        return;
    };
    let sid = open_with(&instances[0], &instances[1], &initialize_with_priming());
    let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test_slow","arguments":{"ms":60000}}}"#;
    let mut stream = open_request(&instances[0].url, "POST", Some(&sid), call);
    let mut text = String::new();
    read_until(&mut stream, &mut text, "id: ");
    read_until(&mut stream, &mut text, "\n\n");
    let priming = first_event_id(&text);
    // Give A's appender a moment to log the stream's opening, then kill A.
    std::thread::sleep(Duration::from_millis(300));
    drop(instances.remove(0));
    drop(stream);
    let mut resumed = open_resume(&instances[0].url, &sid, &priming);
    let mut reply = String::new();
    resumed
        .read_to_string(&mut reply)
        .expect("the resumed stream ends before the read timeout");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    let error = reply
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .find(|data| data.contains("\"error\""))
        .expect("an error response");
    let error: serde_json::Value = serde_json::from_str(error).expect("JSON");
    assert_eq!(error["id"], 9, "{error}");
    assert_eq!(error["error"]["code"], -32603, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("gone"),
        "{error}"
    );
}

#[test]
fn a_session_whose_client_listens_outlives_the_idle_timeout() {
    let Some((_redis, instances)) = cluster(&["--session-idle-timeout", "1"]) else {
        return;
    };
    let sid = open(&instances[0], &instances[0]);
    let mut listen = open_request(&instances[0].url, "GET", Some(&sid), "");
    let mut text = String::new();
    read_until(&mut listen, &mut text, "\r\n\r\n");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    // No request for over twice the idle timeout, but the GET stream is open on A.
    std::thread::sleep(Duration::from_millis(2500));
    let reply = post(&instances[1].url, Some(&sid), &ping(1));
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[test]
fn requests_of_a_session_get_503_while_the_store_is_gone() {
    let Some((redis, instances)) = cluster(&[]) else {
        return;
    };
    let sid = open(&instances[0], &instances[1]);
    // Each instance reads the shared event key from the store before it serves its first
    // request (after it printed its URL): every one is serving before the store goes.
    for instance in &instances {
        let reply = post(&instance.url, Some(&sid), &ping(0));
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    drop(redis);
    let reply = post(&instances[2].url, Some(&sid), &ping(7));
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert!(reply.body.contains("session store"), "{}", reply.body);
    // The refusal answers the request: its JSON-RPC error carries the request's id.
    assert_eq!(message(&reply)["id"], 7, "{}", reply.body);
    // A new session cannot be stored either: refused, with no session id handed out.
    let init = post(&instances[0].url, None, INITIALIZE);
    assert_eq!(init.status, 503, "{}", init.body);
    assert_eq!(init.session, None);
    assert_eq!(message(&init)["id"], 1, "{}", init.body);
}

/// Posts `initialize` to `url` until it is answered 200 (the instance reached its store):
/// its session id. Bounded: 300 tries 50 ms apart, more than the longest wait between two
/// tries of the store (5 s).
fn initialize_once_served(url: &str) -> String {
    for _ in 0..300 {
        let init = post(url, None, INITIALIZE);
        if init.status == 200 {
            return init.session.expect("a session id");
        }
        assert_eq!(init.status, 503, "{}", init.body);
        assert_eq!(message(&init)["id"], 1, "{}", init.body);
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{url} never served initialize once its store was up");
}

#[test]
fn an_instance_started_before_its_store_answers_503_until_the_store_comes_up() {
    let port = redis_server::free_port();
    let store = format!("redis://127.0.0.1:{port}");
    let early = HttpFixture::start_with(&["--store", &store], &[]);
    // Nothing listens on the store's port: the instance runs and refuses every request.
    for request in [INITIALIZE.to_owned(), ping(1)] {
        let reply = post(&early.url, None, &request);
        assert_eq!(reply.status, 503, "{}", reply.body);
        assert!(reply.body.contains("session store"), "{}", reply.body);
        assert!(
            reply
                .head
                .to_ascii_lowercase()
                .contains("\r\nretry-after: "),
            "{}",
            reply.head
        );
        assert_eq!(reply.session, None);
    }
    let Some(redis) = RedisServer::start_at(port) else {
        return;
    };
    let sid = initialize_once_served(&early.url);
    // An instance started with the store up shares the session (and the event key).
    let late = HttpFixture::start_with(&["--store", &store], &[]);
    let done = post(&late.url, Some(&sid), INITIALIZED);
    assert_eq!(done.status, 202, "{}", done.body);
    let called = post(&early.url, Some(&sid), &call(2));
    assert_eq!(called.status, 200, "{}", called.body);
    assert!(called.body.contains("\"result\""), "{}", called.body);
    // The store goes away under a serving instance and comes back (empty: no persistence).
    drop(redis);
    let reply = post(&early.url, Some(&sid), &ping(3));
    assert_eq!(reply.status, 503, "{}", reply.body);
    let _redis = RedisServer::start_at(port).expect("redis-server starts again");
    let again = initialize_once_served(&early.url);
    let done = post(&late.url, Some(&again), INITIALIZED);
    assert_eq!(done.status, 202, "{}", done.body);
}

/// A 2026-07-28 request (no session: its headers mirror the body) on a fresh connection;
/// the answer is to be read.
fn open_stateless(url: &str, id: u64, method: &str, name: Option<&str>, params: &str) -> TcpStream {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{meta}}}}}"#);
    let mut extra = format!("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n");
    if let Some(name) = name {
        extra.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    open_request_with(url, "POST", None, &body, &extra)
}

/// Calls `tool` statelessly on `url` and waits for its answer.
fn call_stateless(url: &str, id: u64, tool: &str) -> String {
    let reply = call_stateless_with(url, id, tool, "");
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

/// Calls `tool` statelessly on `url` with `more` params (each followed by a comma).
fn call_stateless_with(url: &str, id: u64, tool: &str, more: &str) -> Reply {
    let params = format!(r#""name":"{tool}","arguments":{{}},{more}"#);
    let mut stream = open_stateless(url, id, "tools/call", Some(tool), &params);
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read the answer");
    parse(&raw)
}

/// The JSON-RPC message of a stateless answer (a JSON body, or the last event of a stream).
fn message(reply: &Reply) -> serde_json::Value {
    let text = reply
        .body
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("data:"))
        .unwrap_or(&reply.body);
    serde_json::from_str(text.trim()).expect("a JSON-RPC message")
}

#[test]
fn a_request_state_minted_on_one_instance_is_redeemed_once_on_any() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let tool = "test_input_required_result_elicitation";
    let first = message(&call_stateless_with(&instances[0].url, 1, tool, ""));
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].as_str().expect("a state");
    let answer =
        r#""inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}},"#;
    let retry = format!(r#""requestState":"{state}",{answer}"#);
    // The second instance verifies the first one's state (one key for all) and redeems it.
    let done = call_stateless_with(&instances[1].url, 2, tool, &retry);
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(
        message(&done)["result"]["content"][0]["text"],
        "Hello, Alice!"
    );
    // A replay is refused on every instance, the one that redeemed it included.
    for (i, instance) in instances.iter().enumerate().rev() {
        let again = call_stateless_with(&instance.url, 3, tool, &retry);
        assert_eq!(again.status, 400, "instance {i}: {}", again.body);
        let error = &message(&again)["error"];
        assert_eq!(error["code"], -32602, "instance {i}: {error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap_or("")
                .contains("already used"),
            "{error}"
        );
    }
}

#[test]
fn a_change_made_on_one_instance_reaches_the_listen_streams_of_the_others() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let listen = |url: &str, id: u64, filter: &str| {
        let params = format!(r#""notifications":{{"{filter}":true}},"#);
        let mut stream = open_stateless(url, id, "subscriptions/listen", None, &params);
        let mut text = String::new();
        read_until(
            &mut stream,
            &mut text,
            "notifications/subscriptions/acknowledged",
        );
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        (stream, text)
    };
    let (mut tools, mut tools_text) = listen(&instances[0].url, 1, "toolsListChanged");
    let (mut prompts, mut prompts_text) = listen(&instances[2].url, 2, "promptsListChanged");

    // Both changes are made on the second instance, in this order.
    assert!(
        call_stateless(&instances[1].url, 3, "test_trigger_tool_change")
            .contains("Tool list changed")
    );
    assert!(
        call_stateless(&instances[1].url, 4, "test_trigger_prompt_change")
            .contains("Prompt list changed")
    );

    read_until(
        &mut tools,
        &mut tools_text,
        "notifications/tools/list_changed",
    );
    assert!(
        tools_text.contains(r#""io.modelcontextprotocol/subscriptionId":1"#),
        "{tools_text}"
    );
    read_until(
        &mut prompts,
        &mut prompts_text,
        "notifications/prompts/list_changed",
    );
    // The prompts stream's filter left the earlier tools change out.
    assert!(
        !prompts_text.contains("tools/list_changed"),
        "{prompts_text}"
    );
    assert!(
        prompts_text.contains(r#""io.modelcontextprotocol/subscriptionId":2"#),
        "{prompts_text}"
    );
}

/// A task method (`tasks/get`, `tasks/cancel`) for `task` on `url`: its JSON-RPC answer.
fn task_method(url: &str, id: u64, method: &str, task: &str) -> serde_json::Value {
    let params = format!(r#""taskId":"{task}","#);
    let mut stream = open_stateless(url, id, method, Some(task), &params);
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read the answer");
    let reply = parse(&raw);
    assert_eq!(reply.status, 200, "{}", reply.body);
    message(&reply)
}

/// Starts `slow_compute` for `seconds` as a task on `url`; returns its id.
fn start_task(url: &str, seconds: u32) -> String {
    let arguments = format!(r#""arguments":{{"seconds":{seconds}}},"#);
    let params = format!(r#""name":"slow_compute",{arguments}"#);
    let mut stream = open_stateless(url, 1, "tools/call", Some("slow_compute"), &params);
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read the answer");
    let created = message(&parse(&raw));
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned()
}

/// Asks for `task` on `url` (every 100 ms, at most 100 times) until its status is `status`.
fn wait_for_status(url: &str, task: &str, status: &str) -> serde_json::Value {
    for n in 0..100 {
        let got = task_method(url, 10 + n, "tasks/get", task);
        if got["result"]["status"] == status {
            return got;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("task {task} never became {status} on {url}");
}

#[test]
fn a_task_run_on_one_instance_is_followed_and_cancelled_on_the_others() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let (a, b, c) = (&instances[0].url, &instances[1].url, &instances[2].url);
    let task = start_task(a, 1);
    // Another instance answers from the stored record while the first one works.
    let working = task_method(b, 2, "tasks/get", &task);
    assert_eq!(working["result"]["taskId"], task.as_str(), "{working}");
    assert_eq!(working["result"]["status"], "working", "{working}");
    let done = wait_for_status(c, &task, "completed");
    let text = done["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(!text.is_empty(), "{done}");

    // A cancellation sent to a second instance reaches the job on the first.
    let long = start_task(a, 60);
    let cancelled = task_method(b, 3, "tasks/cancel", &long);
    assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
    wait_for_status(c, &long, "cancelled");
    assert_eq!(
        task_method(a, 4, "tasks/get", &long)["result"]["status"],
        "cancelled"
    );

    // An id no instance knows is unknown everywhere.
    let unknown = task_method(c, 5, "tasks/get", "00112233445566778899aabbccddeeff");
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[test]
fn a_task_request_forwarded_to_the_running_instance_gets_its_answer() {
    let Some((redis, instances)) = cluster(&[]) else {
        return;
    };
    let (a, b) = (&instances[0].url, &instances[1].url);
    // A running task's cancellation through another instance gets the running one's success.
    let long = start_task(a, 60);
    let cancelled = task_method(b, 2, "tasks/cancel", &long);
    assert_eq!(cancelled["id"], 2, "{cancelled}");
    assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
    wait_for_status(a, &long, "cancelled");

    // A finished task's cancellation through another instance: the running one's answer, and
    // the task stays completed.
    let short = start_task(a, 1);
    wait_for_status(b, &short, "completed");
    let late = task_method(b, 3, "tasks/cancel", &short);
    assert_eq!(late["result"]["resultType"], "complete", "{late}");
    assert_eq!(
        task_method(a, 4, "tasks/get", &short)["result"]["status"],
        "completed"
    );

    // A record naming the first instance for a task it does not hold: the cancellation sent to
    // another instance reaches the first, whose error comes back.
    let stored = redis_command(&redis.url(), &["HGET", &task_record(&long), "d"]);
    let owner = stored.split('\n').next().unwrap_or_default().to_owned();
    assert!(!owner.is_empty(), "{stored}");
    let stranger = "00112233445566778899aabbccddeeff";
    let detailed = format!(
        r#"{owner}
{{"taskId":"{stranger}","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}}"#
    );
    let key = task_record(stranger);
    redis_command(&redis.url(), &["HSET", &key, "v", "1", "d", &detailed]);
    redis_command(&redis.url(), &["PEXPIRE", &key, "60000"]);
    let refused = task_method(b, 5, "tasks/cancel", stranger);
    assert_eq!(refused["id"], 5, "{refused}");
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("unknown taskId"), "{refused}");
}

/// The Redis key of task `task`'s record.
fn task_record(task: &str) -> String {
    format!("mcp:task:{{{task}}}:record")
}

/// Sends one command to the Redis at `url` (`redis://127.0.0.1:<port>`); its reply's text.
fn redis_command(url: &str, args: &[&str]) -> String {
    let address = url.trim_start_matches("redis://");
    let mut stream = TcpStream::connect(address).expect("redis");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut command = format!("*{}\r\n", args.len());
    for arg in args {
        command.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(command.as_bytes()).expect("write");
    let mut reply = Vec::new();
    let mut chunk = [0u8; 4096];
    // At most 100 reads: a reply is whole once its first line and the bulk it announces came.
    for _ in 0..100 {
        let n = stream.read(&mut chunk).expect("read");
        reply.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&reply).into_owned();
        if let Some((first, rest)) = text.split_once("\r\n") {
            let whole = match first.strip_prefix('$').map(str::parse::<usize>) {
                Some(Ok(len)) => rest.len() >= len + 2,
                _ => true,
            };
            if whole {
                assert!(!first.starts_with('-'), "redis refused: {text}");
                return match first.starts_with('$') {
                    true => rest.trim_end_matches("\r\n").to_owned(),
                    false => first.to_owned(),
                };
            }
        }
        assert!(n > 0, "redis closed: {text}");
    }
    panic!("no whole reply from redis");
}

#[test]
fn a_task_of_a_killed_instance_ends_with_an_error_elsewhere() {
    let Some((_redis, mut instances)) = cluster(&[]) else {
        return;
    };
    let task = start_task(&instances[0].url, 60);
    assert_eq!(
        task_method(&instances[1].url, 2, "tasks/get", &task)["result"]["status"],
        "working"
    );
    drop(instances.remove(0));
    let gone = task_method(&instances[1].url, 3, "tasks/get", &task);
    assert_eq!(gone["error"]["code"], -32603, "{gone}");
    let cancel = task_method(&instances[0].url, 4, "tasks/cancel", &task);
    assert_eq!(cancel["error"]["code"], -32603, "{cancel}");
}

#[test]
fn bench_rotating_every_request_over_the_instances_gets_every_answer() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-sansio"))
        .args([
            "bench",
            "--rotate",
            "--json",
            "--requests",
            "300",
            "--sessions",
            "1",
        ])
        .args(["--concurrency", "1", "--warmup", "0", "--timeout", "20s"])
        .args(["--mix", "ping=1,tool:test_simple_text=1"])
        .args(instances.iter().map(|i| i.url.as_str()))
        .output()
        .expect("run bench");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr:\n{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert_eq!(report["ok"], report["completed"], "{report}");
    assert_eq!(report["errors"]["total"], 0, "{report}");
    assert_eq!(report["sessions_lost"], 0, "{report}");
    // One call at a time, yet a connection to each instance: the requests went round.
    let opened = report["connections_opened"].as_u64().unwrap_or(0);
    assert!(opened >= 3, "{report}");
}

/// Reads `stream` until its text holds `wanted` `n` times (bounded as [`read_until`]).
fn read_until_count(stream: &mut TcpStream, text: &mut String, wanted: &str, n: usize) {
    let mut buf = [0u8; 4096];
    while text.matches(wanted).count() < n {
        let read = stream.read(&mut buf).expect("read the stream");
        assert!(
            read > 0 && text.len() < 1 << 20,
            "ended without {n} × {wanted}: {text}"
        );
        text.push_str(&String::from_utf8_lossy(&buf[..read]));
    }
}

#[test]
fn a_get_stream_cut_on_one_instance_is_resumed_on_another_with_what_it_missed() {
    let Some((redis, instances)) = cluster(&[]) else {
        return;
    };
    let [a, b, c] = &instances[..] else {
        unreachable!()
    };
    let sid = open(a, c);
    let changed = ["tools", "resources", "prompts"].map(|n| format!("{n}/list_changed"));
    // A's GET stream carries the three list changes of the session's late additions.
    let mut listen = open_request(&a.url, "GET", Some(&sid), "");
    let mut text = String::new();
    read_until(&mut listen, &mut text, &changed[2]);
    drop(listen);
    let on_a = sse_events(&text);
    assert_eq!(on_a.len(), 3, "{text}");
    for (event, change) in on_a.iter().zip(&changed) {
        assert!(event.1.contains(change.as_str()), "{text}");
    }
    // The client saw only the first; the other two are in A's log once A appended them.
    let seen = on_a[0].0.clone();
    let origin = seen.split('-').next().expect("an origin");
    let log = format!("mcp:{{{sid}}}:stream:{origin}-0");
    let logged = || {
        let reply = redis_command(&redis.url(), &["XLEN", &log]);
        reply
            .trim_start_matches(':')
            .parse::<usize>()
            .expect("a count")
    };
    for _ in 0..200 {
        if logged() >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(logged(), 3, "A logged its GET stream's events");

    // B opens its own GET stream with A's two events first, then B's own changes (its copy
    // of the session, restored by this GET, makes its late additions 2 s later).
    let mut resumed = open_resume(&b.url, &sid, &seen);
    let mut again = String::new();
    read_until_count(&mut resumed, &mut again, &changed[2], 2);
    assert!(again.starts_with("HTTP/1.1 200"), "{again}");
    let on_b = sse_events(&again);
    assert_eq!(on_b.len(), 5, "{again}");
    assert_eq!(on_b[..2], on_a[1..], "the missed events, once, first");
    for (event, change) in on_b[2..].iter().zip(&changed) {
        assert!(event.1.contains(change.as_str()), "{again}");
        assert!(!event.0.starts_with(origin), "B's own: {again}");
    }
    assert!(!again.contains(&seen), "{again}");
}

#[test]
fn a_get_stream_resumed_on_another_instance_gets_what_arises_on_the_first() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let [a, b, c] = &instances[..] else {
        unreachable!()
    };
    let sid = open_with(a, c, &initialize_with_priming());
    // A's GET stream opens with its priming event; the client loses it at once, before the
    // session's late additions (2 s after its start on A), and resumes on B.
    let mut listen = open_request(&a.url, "GET", Some(&sid), "");
    let mut text = String::new();
    read_until(&mut listen, &mut text, "\n\n");
    let seen = first_event_id(&text);
    drop(listen);
    let mut resumed = open_resume(&b.url, &sid, &seen);
    // A's three list changes reach the client through B (relayed, or read from A's log when
    // A made them before the client came back), and B's copy of the session, restored by
    // this GET, makes its own three: each change twice, and nothing more.
    let changed = ["tools", "resources", "prompts"].map(|n| format!("{n}/list_changed"));
    let mut again = String::new();
    for change in &changed {
        read_until_count(&mut resumed, &mut again, change, 2);
    }
    assert!(again.starts_with("HTTP/1.1 200"), "{again}");
    assert_eq!(sse_events(&again).len(), 6, "{again}");
}

#[test]
fn a_plain_get_on_another_instance_gets_what_waits_on_the_first() {
    let Some((_redis, instances)) = cluster(&[]) else {
        return;
    };
    let [a, b, _] = &instances[..] else {
        unreachable!()
    };
    // Only A holds the session; its late additions (2 s after its start) find no GET stream
    // there and wait. A GET without Last-Event-ID on B gets them (relayed from A), and B's
    // copy of the session, restored by this GET, makes its own three: each change twice.
    let sid = open_with(a, a, INITIALIZE);
    let mut listen = open_request(&b.url, "GET", Some(&sid), "");
    let changed = ["tools", "resources", "prompts"].map(|n| format!("{n}/list_changed"));
    let mut text = String::new();
    for change in &changed {
        read_until_count(&mut listen, &mut text, change, 2);
    }
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert_eq!(sse_events(&text).len(), 6, "{text}");
}
