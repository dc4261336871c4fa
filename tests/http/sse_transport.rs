//! The HTTP+SSE server endpoint (2024-11-05) driven with HTTP-shaped values and a real
//! app `Server`, mounted beside Streamable HTTP by the `Router`: the endpoint event, message
//! events, every status code, session routing, expiry, and no message on two streams.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::framing::{SseDecoder, SseItem};
use mcp_sansio::http::sse_transport::{
    Router, RouterPaths, SseTransportEndpoint, SSE_TRANSPORT_STREAM_BIT,
};
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::model::LoggingLevel;
use mcp_sansio::runtime::{oneshot, Job, OneshotSender};
use serde_json::{json, Value};

use crate::support::read_now;

type Gates = Arc<Mutex<Vec<OneshotSender<()>>>>;

fn server(now: Instant, gates: Gates) -> Server {
    let schema = json!({"type": "object"});
    Server::builder(Implementation::new("sse-transport-test", "1"))
        .tool(Tool::new("echo", schema.clone()).sync_handler(|_, _| Ok(CallToolResult::text("hi"))))
        .tool(
            Tool::new("mebibyte", schema.clone())
                .sync_handler(|_, _| Ok(CallToolResult::text("x".repeat(1 << 20)))),
        )
        .tool(Tool::new("chatty", schema.clone()).sync_handler(|_, ctx| {
            ctx.log(LoggingLevel::Info, None, json!("working"));
            Ok(CallToolResult::text("done"))
        }))
        .tool(
            Tool::new("ask", schema.clone()).handler(|_, ctx| async move {
                let text = match ctx.list_roots().await {
                    Ok(roots) => format!("{} roots", roots["roots"].as_array().map_or(0, Vec::len)),
                    Err(e) => format!("failed: {e:?}"),
                };
                Ok(CallToolResult::text(text))
            }),
        )
        .tool(Tool::new("wait", schema).handler(move |_, _| {
            let (tx, rx) = oneshot::<()>();
            gates.lock().unwrap().push(tx);
            async move {
                let _ = rx.await;
                Ok(CallToolResult::text("finished"))
            }
        }))
        .build(now)
}

/// One SSE event as read off a stream: (event type, data).
type Ev = (Option<String>, String);

struct Rig {
    now: Instant,
    router: Router<Server>,
    gates: Gates,
    jobs: Vec<Job>,
    seed: u8,
}

impl Rig {
    fn new(config: EndpointConfig) -> Rig {
        let gates: Gates = Arc::default();
        let g = gates.clone();
        let factory = move |now| server(now, g.clone());
        Rig {
            now: Instant::now(),
            router: Router::new(config, RouterPaths::default(), factory),
            gates,
            jobs: Vec::new(),
            seed: 0,
        }
    }

    fn send(&mut self, head: &HttpRequestHead, body: Bytes) -> HttpResponse {
        self.seed = self.seed.wrapping_add(1);
        let resp = self
            .router
            .handle_request(self.now, head, body, [self.seed; 16]);
        while let Some(job) = self.router.poll_job() {
            self.jobs.push(job);
        }
        resp
    }

    fn open_sse(&mut self) -> HttpResponse {
        let head = HttpRequestHead::new(HttpMethod::Get, "/sse")
            .header("Host", "localhost:8080")
            .header("Accept", "text/event-stream");
        self.send(&head, Bytes::new())
    }

    /// Opens an HTTP+SSE session: returns its stream and the POST URI from the endpoint event.
    fn open(&mut self) -> (StreamId, String) {
        let resp = self.open_sse();
        assert_eq!(resp.status, 200, "{}", resp.body_text());
        let Body::Stream(conn) = resp.body else {
            panic!("GET must stream")
        };
        let (events, ended) = self.drain(conn);
        assert!(!ended);
        assert_eq!(
            events.len(),
            1,
            "exactly the endpoint event first: {events:?}"
        );
        assert_eq!(events[0].0.as_deref(), Some("endpoint"));
        (conn, events[0].1.clone())
    }

    fn post_to(&mut self, uri: &str, body: Value) -> HttpResponse {
        let head = HttpRequestHead::new(HttpMethod::Post, uri)
            .header("Host", "127.0.0.1:8080")
            .header("Content-Type", "application/json");
        self.send(&head, Bytes::from(body.to_string()))
    }

    /// Opens a session and completes the handshake on it.
    fn initialized(&mut self) -> (StreamId, String) {
        let (conn, uri) = self.open();
        assert_eq!(self.post_to(&uri, init("2024-11-05")).status, 202);
        let (events, _) = self.drain(conn);
        assert_eq!(events.len(), 1);
        let result: Value = serde_json::from_str(&events[0].1).unwrap();
        assert_eq!(result["result"]["protocolVersion"], "2024-11-05");
        let done = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        assert_eq!(self.post_to(&uri, done).status, 202);
        (conn, uri)
    }

    /// Everything stream `conn` has now, and whether it ended.
    fn drain(&mut self, conn: StreamId) -> (Vec<Ev>, bool) {
        let (bytes, ended) = read_now(|buf| self.router.poll_stream(conn, buf));
        (parse_events(&bytes), ended)
    }

    fn run_jobs(&mut self) {
        let mut cx = Context::from_waker(Waker::noop());
        self.jobs
            .retain_mut(|job| job.as_mut().poll(&mut cx) == Poll::Pending);
    }
}

fn parse_events(bytes: &[u8]) -> Vec<Ev> {
    let mut dec = SseDecoder::new(1 << 20);
    dec.push(bytes);
    let mut events = Vec::new();
    while let Some(item) = dec.poll_item() {
        if let Ok(SseItem::Event(e)) = item {
            events.push((e.event.clone(), e.data_str().to_string()));
        }
    }
    events
}

fn init(version: &str) -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":version,
        "capabilities":{},"clientInfo":{"name":"c","version":"1"}}})
}

fn call(id: i64, tool: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":{}}})
}

fn messages(events: &[Ev]) -> Vec<Value> {
    events
        .iter()
        .map(|(ty, data)| {
            assert_eq!(ty.as_deref(), Some("message"), "{data}");
            serde_json::from_str(data).unwrap()
        })
        .collect()
}

#[test]
fn get_opens_a_stream_whose_first_event_names_the_post_uri_with_the_session_id() {
    let mut rig = Rig::new(EndpointConfig::default());
    let resp = rig.open_sse();
    assert_eq!(resp.status, 200);
    assert_eq!(resp.get("content-type"), Some("text/event-stream"));
    assert_eq!(resp.get("cache-control"), Some("no-cache"));
    let Body::Stream(conn) = resp.body else {
        panic!()
    };
    assert_ne!(conn.0 & SSE_TRANSPORT_STREAM_BIT, 0);
    let (events, ended) = rig.drain(conn);
    assert!(!ended);
    let sid = "01".repeat(16);
    assert_eq!(
        events,
        vec![(
            Some("endpoint".into()),
            format!("/messages?sessionId={sid}")
        )],
        "the id comes from the caller's random bytes"
    );
    assert_eq!(rig.router.sse_transport().session_count(), 1);
    assert_eq!(rig.router.streamable().session_count(), 0);
}

#[test]
fn posts_get_202_and_every_response_travels_on_the_stream_as_message_events() {
    let mut rig = Rig::new(EndpointConfig::default());
    let (conn, uri) = rig.initialized();
    let resp = rig.post_to(&uri, call(1, "echo"));
    assert_eq!(resp.status, 202);
    assert_eq!(resp.body, Body::Empty);
    let got = messages(&rig.drain(conn).0);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["id"], 1);
    assert_eq!(got[0]["result"]["content"][0]["text"], "hi");

    // A server-initiated message (a log) comes first, on the same stream, in order.
    let set_level = json!({"jsonrpc":"2.0","id":2,"method":"logging/setLevel",
        "params":{"level":"debug"}});
    assert_eq!(rig.post_to(&uri, set_level).status, 202);
    assert_eq!(rig.post_to(&uri, call(3, "chatty")).status, 202);
    let got = messages(&rig.drain(conn).0);
    let kinds: Vec<_> = got
        .iter()
        .map(|m| m.get("method").cloned().unwrap_or(m["id"].clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![json!(2), json!("notifications/message"), json!(3)]
    );
}

#[test]
fn a_handler_still_running_answers_on_the_stream_when_it_finishes() {
    let mut rig = Rig::new(EndpointConfig::default());
    let (conn, uri) = rig.initialized();
    assert_eq!(rig.post_to(&uri, call(7, "wait")).status, 202);
    rig.run_jobs();
    assert!(
        rig.drain(conn).0.is_empty(),
        "nothing before the handler ends"
    );
    for tx in rig.gates.lock().unwrap().drain(..) {
        tx.send(());
    }
    rig.run_jobs();
    let got = messages(&rig.drain(conn).0);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["result"]["content"][0]["text"], "finished");
}

#[test]
fn post_status_codes() {
    let mut rig = Rig::new(EndpointConfig {
        max_body: 512,
        ..Default::default()
    });
    let (_conn, uri) = rig.initialized();

    // 400: no session id (or an empty one); 404: unknown session.
    assert_eq!(rig.post_to("/messages", call(1, "echo")).status, 400);
    assert_eq!(
        rig.post_to("/messages?sessionId=", call(1, "echo")).status,
        400
    );
    assert_eq!(
        rig.post_to("/messages?other=1", call(1, "echo")).status,
        400
    );
    let resp = rig.post_to("/messages?sessionId=feed", call(1, "echo"));
    assert_eq!(resp.status, 404);
    assert_eq!(
        serde_json::from_str::<Value>(resp.body_text()).unwrap()["error"]["code"],
        -32001
    );

    // 415: not JSON.
    let head =
        HttpRequestHead::new(HttpMethod::Post, uri.as_str()).header("Content-Type", "text/plain");
    assert_eq!(rig.send(&head, Bytes::from_static(b"{}")).status, 415);
    let head = HttpRequestHead::new(HttpMethod::Post, uri.as_str());
    assert_eq!(rig.send(&head, Bytes::from_static(b"{}")).status, 415);

    // 415: a content coding.
    let head = HttpRequestHead::new(HttpMethod::Post, uri.as_str())
        .header("Content-Type", "application/json")
        .header("Content-Encoding", "gzip");
    assert_eq!(rig.send(&head, Bytes::from_static(b"{}")).status, 415);

    // 413: past max_body.
    let big = json!({"jsonrpc":"2.0","method":"x","params":{"pad":"a".repeat(600)}});
    assert_eq!(rig.post_to(&uri, big).status, 413);

    // 400 with a JSON-RPC error: unparsable, then not a JSON-RPC message.
    let head = HttpRequestHead::new(HttpMethod::Post, uri.as_str())
        .header("Content-Type", "application/json; charset=utf-8");
    let resp = rig.send(&head, Bytes::from_static(b"{not json"));
    assert_eq!(resp.status, 400);
    assert_eq!(
        serde_json::from_str::<Value>(resp.body_text()).unwrap()["error"]["code"],
        -32700
    );
    let resp = rig.send(&head, Bytes::from_static(b"{\"hello\":1}"));
    assert_eq!(resp.status, 400);
    assert_eq!(
        serde_json::from_str::<Value>(resp.body_text()).unwrap()["error"]["code"],
        -32600
    );

    // 400: an MCP-Protocol-Version we do not speak; a supported one passes.
    for (version, status) in [("1999-01-01", 400), ("2024-11-05", 202)] {
        let head = HttpRequestHead::new(HttpMethod::Post, uri.as_str())
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", version);
        let body = Bytes::from(call(1, "echo").to_string());
        assert_eq!(rig.send(&head, body).status, status, "{version}");
    }
}

#[test]
fn host_origin_accept_method_and_capacity_rules() {
    let mut rig = Rig::new(EndpointConfig {
        max_sessions: 1,
        ..Default::default()
    });
    let evil = HttpRequestHead::new(HttpMethod::Get, "/sse").header("Host", "evil.example");
    assert_eq!(rig.send(&evil, Bytes::new()).status, 403);
    let null_origin = HttpRequestHead::new(HttpMethod::Get, "/sse").header("Origin", "null");
    assert_eq!(rig.send(&null_origin, Bytes::new()).status, 403);
    let json_only =
        HttpRequestHead::new(HttpMethod::Get, "/sse").header("Accept", "application/json");
    assert_eq!(rig.send(&json_only, Bytes::new()).status, 406);
    let (_conn, uri) = rig.initialized();
    // The POST endpoint checks Host/Origin too.
    let head = HttpRequestHead::new(HttpMethod::Post, uri.as_str())
        .header("Content-Type", "application/json")
        .header("Origin", "http://evil.example");
    assert_eq!(
        rig.send(&head, Bytes::from(init("2024-11-05").to_string()))
            .status,
        403
    );
    // One session max, and it finished its handshake: the next GET is refused.
    assert_eq!(rig.open_sse().status, 503);
    assert_eq!(rig.router.sse_transport().stats().sessions_refused, 1);
    // Wrong method per path, unknown path.
    let get_messages = HttpRequestHead::new(HttpMethod::Get, uri.as_str());
    let resp = rig.send(&get_messages, Bytes::new());
    assert_eq!((resp.status, resp.get("allow")), (405, Some("POST")));
    let post_sse =
        HttpRequestHead::new(HttpMethod::Post, "/sse").header("Content-Type", "application/json");
    let resp = rig.send(&post_sse, Bytes::from(init("2024-11-05").to_string()));
    assert_eq!((resp.status, resp.get("allow")), (405, Some("GET")));
    let delete = HttpRequestHead::new(HttpMethod::Delete, "/sse");
    assert_eq!(rig.send(&delete, Bytes::new()).status, 405);
    let other = HttpRequestHead::new(HttpMethod::Get, "/elsewhere");
    assert_eq!(rig.send(&other, Bytes::new()).status, 404);
    assert!(rig.router.serves("/messages?sessionId=1"));
    assert!(rig.router.serves("/mcp"));
    assert!(!rig.router.serves("/elsewhere"));
}

#[test]
fn each_session_gets_only_its_own_messages() {
    let mut rig = Rig::new(EndpointConfig::default());
    let (a, uri_a) = rig.initialized();
    let (b, uri_b) = rig.initialized();
    assert_ne!(uri_a, uri_b);
    // The same request id in both sessions; each answer goes to its own stream only.
    assert_eq!(rig.post_to(&uri_a, call(1, "echo")).status, 202);
    assert_eq!(rig.post_to(&uri_b, call(1, "chatty")).status, 202);
    assert_eq!(rig.post_to(&uri_a, call(2, "chatty")).status, 202);
    let got_a = messages(&rig.drain(a).0);
    let got_b = messages(&rig.drain(b).0);
    // Each stream: its own log notification(s) and its own results, in order.
    let texts = |got: &[Value]| -> Vec<String> {
        got.iter()
            .map(|m| match m["result"]["content"][0]["text"].as_str() {
                Some(text) => text.to_string(),
                None => m["method"].as_str().unwrap_or("?").to_string(),
            })
            .collect()
    };
    assert_eq!(texts(&got_a), vec!["hi", "notifications/message", "done"]);
    assert_eq!(texts(&got_b), vec!["notifications/message", "done"]);
}

#[test]
fn a_message_never_appears_on_two_streams_with_both_transports_mounted() {
    let mut rig = Rig::new(EndpointConfig::default());
    let (sse_transport_conn, uri) = rig.initialized();
    // A Streamable session with its standalone GET stream open, on the same router.
    let post = |sid: Option<&str>| {
        let mut h = HttpRequestHead::new(HttpMethod::Post, "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        if let Some(sid) = sid {
            h = h.header("Mcp-Session-Id", sid);
        }
        h
    };
    let resp = rig.send(&post(None), Bytes::from(init("2025-06-18").to_string()));
    assert_eq!(resp.status, 200);
    let sid = resp.get("mcp-session-id").unwrap().to_string();
    let done = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    assert_eq!(
        rig.send(&post(Some(&sid)), Bytes::from(done.to_string()))
            .status,
        202
    );
    let get = HttpRequestHead::new(HttpMethod::Get, "/mcp")
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", sid.as_str());
    let standalone = match rig.send(&get, Bytes::new()).body {
        Body::Stream(id) => id,
        other => panic!("{other:?}"),
    };
    // Streamable streams are tracked by `touched_streams`, the HTTP+SSE ones are not.
    assert!(rig.router.stream_tracked(standalone));
    assert!(!rig.router.stream_tracked(sse_transport_conn));

    // Interleave calls with the same ids on both transports.
    let streamable_resp = rig.send(&post(Some(&sid)), Bytes::from(call(1, "echo").to_string()));
    assert_eq!(rig.post_to(&uri, call(1, "echo")).status, 202);
    assert_eq!(streamable_resp.status, 200);
    let streamable_json: Value = serde_json::from_str(streamable_resp.body_text()).unwrap();
    assert_eq!(streamable_json["id"], 1);

    let (on_standalone, _) = rig.drain(standalone);
    let on_sse_transport = messages(&rig.drain(sse_transport_conn).0);
    assert!(on_standalone.is_empty(), "{on_standalone:?}");
    assert_eq!(on_sse_transport.len(), 1, "{on_sse_transport:?}");
    assert_eq!(on_sse_transport[0]["id"], 1);
    // Nothing more anywhere: each message went out once.
    assert!(rig.drain(sse_transport_conn).0.is_empty());
}

#[test]
fn closing_the_stream_ends_the_session() {
    let mut rig = Rig::new(EndpointConfig::default());
    let (conn, uri) = rig.initialized();
    rig.router.stream_closed(conn);
    assert_eq!(rig.router.sse_transport().session_count(), 0);
    assert_eq!(rig.post_to(&uri, call(1, "echo")).status, 404);
    let mut buf = Vec::new();
    assert_eq!(
        rig.router.poll_stream(conn, &mut buf),
        Some(StreamChunk::End)
    );
}

#[test]
fn an_open_stream_keeps_the_session_alive_past_the_idle_timeout() {
    let mut rig = Rig::new(EndpointConfig {
        idle_timeout: Duration::from_secs(60),
        ..Default::default()
    });
    let (conn, uri) = rig.initialized();
    assert_eq!(
        rig.router.poll_timeout(),
        Some(rig.now + Duration::from_secs(15)),
        "an attached stream has no idle deadline, only its keep-alive"
    );
    rig.now += Duration::from_secs(3600);
    rig.router.handle_timeout(rig.now);
    assert_eq!(rig.router.sse_transport().stats().sessions_expired, 0);
    assert_eq!(rig.post_to(&uri, call(1, "echo")).status, 202);
    assert_eq!(messages(&rig.drain(conn).0).len(), 1);
}

#[test]
fn server_close_ends_the_stream_after_what_is_queued() {
    let mut rig = Rig::new(EndpointConfig::default());
    let (conn, uri) = rig.initialized();
    assert_eq!(rig.post_to(&uri, call(1, "echo")).status, 202);
    let sid = uri.split('=').nth(1).unwrap().to_string();
    assert!(rig.router.sse_transport().close_session(&sid));
    assert_eq!(rig.post_to(&uri, call(2, "echo")).status, 404);
    let (events, ended) = rig.drain(conn);
    assert_eq!(
        messages(&events).len(),
        1,
        "the queued answer still goes out"
    );
    assert!(ended);
    assert_eq!(rig.router.sse_transport().session_count(), 0);
}

#[test]
fn a_reader_too_far_behind_ends_its_session_instead_of_growing_without_bound() {
    let mut rig = Rig::new(EndpointConfig::default());
    let (conn, uri) = rig.initialized();
    let ping = |id: i64| json!({"jsonrpc":"2.0","id":id,"method":"ping"});
    let mut last = 0;
    for id in 1..=5000 {
        last = rig.post_to(&uri, ping(id)).status;
        if last != 202 {
            break;
        }
    }
    assert_eq!(last, 404, "the session ended once the queue was full");
    let sid = uri.split('=').nth(1).unwrap().to_string();
    assert!(rig.router.sse_transport().dropped_messages(&sid).unwrap() > 4000);
    let (events, ended) = rig.drain(conn);
    assert!(events.is_empty() && ended);
    assert_eq!(rig.router.sse_transport().session_count(), 0);
}

/// The queue is bounded in bytes too: a reader that reads nothing while every answer is a
/// mebibyte ends its session after a few dozen answers, not 4096 of them.
#[test]
fn a_reader_too_far_behind_in_bytes_ends_its_session() {
    let mut rig = Rig::new(EndpointConfig::default());
    let (conn, uri) = rig.initialized();
    let mut accepted = 0;
    for id in 1..=200 {
        if rig.post_to(&uri, call(id, "mebibyte")).status != 202 {
            break;
        }
        accepted += 1;
    }
    assert!(
        (32..=40).contains(&accepted),
        "ended past 32 MiB queued: {accepted} answers accepted"
    );
    let (events, ended) = rig.drain(conn);
    assert!(events.is_empty() && ended);
    assert_eq!(rig.router.sse_transport().session_count(), 0);
}

/// Not a pass/fail test: prints HTTP+SSE round trips per second (POST `tools/call` → 202, then
/// the answer pulled off the SSE stream). Run with `--ignored --nocapture`.
#[test]
#[ignore]
fn measure_sse_transport_post_echo_throughput() {
    let mut rig = Rig::new(EndpointConfig::default());
    let (conn, uri) = rig.initialized();
    let head = HttpRequestHead::new(HttpMethod::Post, uri.as_str())
        .header("Content-Type", "application/json");
    let bodies: Vec<Bytes> = (0..20_000)
        .map(|i| Bytes::from(call(i + 10, "echo").to_string()))
        .collect();
    let mut buf = Vec::new();
    let start = Instant::now();
    for body in bodies {
        let resp = rig.router.handle_request(rig.now, &head, body, [0; 16]);
        assert_eq!(resp.status, 202);
        buf.clear();
        let chunk = rig.router.poll_stream(conn, &mut buf);
        assert!(matches!(chunk, Some(StreamChunk::Data { .. })));
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "HTTP+SSE POST tools/call echo → SSE message: {:.0} req/s",
        20_000.0 / secs
    );
}

#[test]
fn idle_streams_get_keep_alive_comments_on_the_timer() {
    let mut rig = Rig::new(EndpointConfig::default());
    let (conn, uri) = rig.initialized();
    let start = rig.now;
    let due = rig.router.poll_timeout().expect("keep-alive deadline");
    assert_eq!(due, start + Duration::from_secs(15));
    rig.router.handle_timeout(due - Duration::from_millis(1));
    let mut buf = Vec::new();
    assert_eq!(
        rig.router.poll_stream(conn, &mut buf),
        None,
        "nothing before it is due"
    );
    rig.now = due;
    rig.router.handle_timeout(due);
    assert_eq!(
        rig.router.poll_stream(conn, &mut buf),
        Some(StreamChunk::Data { len: 3 })
    );
    assert_eq!(buf, b":\n\n");
    assert_eq!(rig.router.poll_stream(conn, &mut buf), None);
    assert_eq!(
        rig.router.poll_timeout(),
        Some(due + Duration::from_secs(15))
    );
    // A comment dispatches nothing: the next message still parses alone.
    assert_eq!(rig.post_to(&uri, call(1, "echo")).status, 202);
    assert_eq!(messages(&rig.drain(conn).0).len(), 1);

    // Off: no deadline at all for an attached stream of an initialized session.
    let off = EndpointConfig {
        sse_keep_alive: None,
        ..EndpointConfig::default()
    };
    let sse_transport =
        SseTransportEndpoint::new(off, "/messages", |now| server(now, Gates::default()));
    let streamable = Endpoint::new(EndpointConfig::default(), |now| {
        server(now, Gates::default())
    });
    let paths = RouterPaths {
        messages: "/ignored".into(),
        ..Default::default()
    };
    rig.router = Router::from_parts(streamable, sse_transport, paths);
    let (_conn, uri) = rig.initialized();
    assert!(
        uri.starts_with("/messages?"),
        "the HTTP+SSE config names the POST path"
    );
    assert_eq!(rig.router.poll_timeout(), None);
}

#[test]
fn the_endpoint_config_keep_alive_reaches_the_sse_transport_streams() {
    let mut rig = Rig::new(EndpointConfig {
        sse_keep_alive: Some(Duration::from_secs(4)),
        ..EndpointConfig::default()
    });
    let (conn, _uri) = rig.initialized();
    let due = rig.now + Duration::from_secs(4);
    assert_eq!(rig.router.poll_timeout(), Some(due));
    rig.router.handle_timeout(due);
    let mut buf = Vec::new();
    assert_eq!(
        rig.router.poll_stream(conn, &mut buf),
        Some(StreamChunk::Data { len: 3 })
    );
    assert_eq!(buf, b":\n\n");

    let mut rig = Rig::new(EndpointConfig {
        sse_keep_alive: None,
        ..EndpointConfig::default()
    });
    let _ = rig.initialized();
    assert_eq!(
        rig.router.poll_timeout(),
        None,
        "off: no keep-alive deadline"
    );
}

#[test]
fn a_server_request_goes_out_on_the_stream_and_its_answer_comes_back_by_post() {
    let mut rig = Rig::new(EndpointConfig::default());
    let (conn, uri) = rig.open();
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2024-11-05","capabilities":{"roots":{}},
        "clientInfo":{"name":"c","version":"1"}}});
    assert_eq!(rig.post_to(&uri, init).status, 202);
    assert_eq!(messages(&rig.drain(conn).0).len(), 1);
    let done = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    assert_eq!(rig.post_to(&uri, done).status, 202);

    assert_eq!(rig.post_to(&uri, call(5, "ask")).status, 202);
    rig.run_jobs();
    let got = messages(&rig.drain(conn).0);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["method"], "roots/list");
    let answer = json!({"jsonrpc":"2.0","id":got[0]["id"].clone(),
        "result":{"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}});
    assert_eq!(rig.post_to(&uri, answer).status, 202);
    rig.run_jobs();
    let got = messages(&rig.drain(conn).0);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["id"], 5);
    assert_eq!(got[0]["result"]["content"][0]["text"], "2 roots");
}

#[test]
fn a_session_without_a_handshake_ends_after_the_grace_and_makes_room_when_full() {
    let mut rig = Rig::new(EndpointConfig {
        max_sessions: 2,
        handshake_grace: Duration::from_secs(10),
        ..Default::default()
    });
    let start = rig.now;
    let (ready_conn, ready_uri) = rig.initialized();
    let (oldest, _) = rig.open();
    rig.now += Duration::from_secs(1);
    // Full: a GET ends the oldest session still without a handshake.
    let (younger, younger_uri) = rig.open();
    assert_eq!(rig.router.sse_transport().stats().handshakes_evicted, 1);
    assert!(rig.drain(oldest).1, "the evicted session's stream ends");
    assert_eq!(rig.router.sse_transport().session_count(), 2);
    // Its open stream does not keep the younger one past the grace.
    let grace_end = start + Duration::from_secs(11);
    assert_eq!(rig.router.poll_timeout(), Some(grace_end));
    rig.now = grace_end;
    rig.router.handle_timeout(rig.now);
    assert_eq!(rig.router.sse_transport().stats().handshakes_expired, 1);
    assert!(rig.drain(younger).1, "the expired session's stream ends");
    assert_eq!(rig.post_to(&younger_uri, call(1, "echo")).status, 404);
    assert_eq!(rig.router.sse_transport().session_count(), 1);
    // The initialized session is untouched.
    assert_eq!(rig.post_to(&ready_uri, call(2, "echo")).status, 202);
    assert_eq!(messages(&rig.drain(ready_conn).0).len(), 1);
}

#[test]
fn a_peer_limit_refuses_one_session_too_many_with_429_and_gets_the_place_back_at_its_end() {
    let mut rig = Rig::new(EndpointConfig {
        peer_limit: Some(Arc::new(MaxSessionsPerPeer::new(2))),
        ..Default::default()
    });
    let get_from = |last: u8| {
        let mut head = HttpRequestHead::new(HttpMethod::Get, "/sse")
            .header("Host", "localhost:8080")
            .header("Accept", "text/event-stream");
        head.peer = Peer {
            addr: Some(std::net::IpAddr::from([10, 0, 0, last])),
            subject: None,
        };
        head
    };
    let stream_of = |resp: &HttpResponse| match resp.body {
        Body::Stream(conn) => conn,
        _ => panic!("GET must stream: {}", resp.body_text()),
    };
    let head = get_from(1);
    let first = rig.send(&head, Bytes::new());
    let first = stream_of(&first);
    let second = rig.send(&head, Bytes::new());
    let second = stream_of(&second);
    // The third is refused as the Streamable endpoint refuses an `initialize` too many.
    let refused = rig.send(&head, Bytes::new());
    assert_eq!(refused.status, 429);
    assert_eq!(refused.get("retry-after"), Some("10"));
    let error: Value = serde_json::from_str(refused.body_text()).unwrap();
    assert_eq!(error["error"]["code"], -32000);
    assert_eq!(rig.router.sse_transport().stats().peers_refused, 1);
    assert_eq!(rig.router.sse_transport().session_count(), 2);
    // Another peer is not held back.
    assert_eq!(rig.send(&get_from(2), Bytes::new()).status, 200);
    // A session whose client went away gives its place back.
    rig.router.stream_closed(first);
    let third = rig.send(&head, Bytes::new());
    let third = stream_of(&third);
    assert_eq!(rig.send(&head, Bytes::new()).status, 429);
    // So do the ones the server ends (no handshake within the grace), once their streams end.
    rig.now += EndpointConfig::default().handshake_grace;
    rig.router.handle_timeout(rig.now);
    assert!(rig.drain(second).1 && rig.drain(third).1);
    assert_eq!(rig.send(&head, Bytes::new()).status, 200);
    assert_eq!(rig.send(&head, Bytes::new()).status, 200);
    assert_eq!(rig.router.sse_transport().stats().peers_refused, 2);
}
