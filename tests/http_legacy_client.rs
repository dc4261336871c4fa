//! The client-side transports (legacy HTTP+SSE and auto-detection) driven in memory against
//! the core server endpoints, with a real client `Session` on top and a virtual clock; plus
//! scripted responses for the paths no well-behaved server takes.

use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::runtime::Job;
use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::http::legacy::*;
use mcp_sansio::http::*;
use mcp_sansio::jsonrpc::RawJson;
use mcp_sansio::model::{ClientCapabilities, Implementation, ProtocolVersion};
use mcp_sansio::session::{ClientSetup, Event, Outcome, RequestOptions, Session};
use mcp_sansio::Config;
use serde_json::{json, Value};

fn app_server(now: Instant) -> Server {
    Server::builder(Implementation::new("legacy-client-test", "1"))
        .tool(
            Tool::new("echo", json!({"type": "object"}))
                .sync_handler(|_, _| Ok(CallToolResult::text("hi"))),
        )
        .build(now)
}

/// The server side, whichever endpoint it is.
trait Srv {
    fn request(
        &mut self,
        now: Instant,
        head: &HttpRequestHead,
        body: Bytes,
        r: [u8; 16],
    ) -> HttpResponse;
    fn poll(&mut self, id: StreamId, buf: &mut Vec<u8>) -> Option<StreamChunk>;
    fn closed(&mut self, id: StreamId);
    fn job(&mut self) -> Option<Job>;
}

macro_rules! srv {
    ($t:ty) => {
        impl Srv for $t {
            fn request(
                &mut self,
                now: Instant,
                head: &HttpRequestHead,
                body: Bytes,
                r: [u8; 16],
            ) -> HttpResponse {
                self.handle_request(now, head, body, r)
            }
            fn poll(&mut self, id: StreamId, buf: &mut Vec<u8>) -> Option<StreamChunk> {
                self.poll_stream(id, buf)
            }
            fn closed(&mut self, id: StreamId) {
                self.stream_closed(id)
            }
            fn job(&mut self) -> Option<Job> {
                self.poll_job()
            }
        }
    };
}
srv!(Router<Server>);
srv!(Endpoint<Server>);

/// The client transport, whichever it is.
trait Client {
    fn frame(&mut self, frame: Bytes) -> Result<(), SendError>;
    fn request(&mut self) -> Option<OutgoingRequest>;
    fn abort(&mut self) -> Option<RequestKey>;
    fn incoming(&mut self) -> Option<Bytes>;
    fn event(&mut self) -> Option<ClientEvent>;
    fn head(&mut self, now: Instant, key: RequestKey, status: u16, headers: &[(String, String)]);
    fn data(&mut self, key: RequestKey, data: &[u8]);
    fn end(&mut self, key: RequestKey);
}

impl Client for LegacyClient {
    fn frame(&mut self, frame: Bytes) -> Result<(), SendError> {
        self.handle_frame(frame)
    }
    fn request(&mut self) -> Option<OutgoingRequest> {
        self.poll_request()
    }
    fn abort(&mut self) -> Option<RequestKey> {
        self.poll_abort()
    }
    fn incoming(&mut self) -> Option<Bytes> {
        self.poll_frame()
    }
    fn event(&mut self) -> Option<ClientEvent> {
        self.poll_event()
    }
    fn head(&mut self, _: Instant, key: RequestKey, status: u16, headers: &[(String, String)]) {
        self.handle_response_head(key, status, headers)
    }
    fn data(&mut self, key: RequestKey, data: &[u8]) {
        self.handle_response_body(key, data)
    }
    fn end(&mut self, key: RequestKey) {
        self.handle_response_end(key)
    }
}

impl Client for AutoClient {
    fn frame(&mut self, frame: Bytes) -> Result<(), SendError> {
        self.handle_frame(frame)
    }
    fn request(&mut self) -> Option<OutgoingRequest> {
        self.poll_request()
    }
    fn abort(&mut self) -> Option<RequestKey> {
        self.poll_abort()
    }
    fn incoming(&mut self) -> Option<Bytes> {
        self.poll_frame()
    }
    fn event(&mut self) -> Option<ClientEvent> {
        self.poll_event()
    }
    fn head(&mut self, now: Instant, key: RequestKey, status: u16, headers: &[(String, String)]) {
        self.handle_response_head(now, key, status, headers)
    }
    fn data(&mut self, key: RequestKey, data: &[u8]) {
        self.handle_response_body(key, data)
    }
    fn end(&mut self, key: RequestKey) {
        self.handle_response_end(key)
    }
}

/// A client session, its transport and a server, wired in memory.
struct Net<S, C> {
    now: Instant,
    server: S,
    client: C,
    session: Session,
    /// Open response bodies: the client's key → the server's stream.
    streams: Vec<(RequestKey, StreamId)>,
    jobs: Vec<Job>,
    /// Every request performed, with its status.
    log: Vec<(HttpMethod, String, u16)>,
    events: Vec<ClientEvent>,
    session_events: Vec<Event>,
    seed: u8,
}

fn session(now: Instant, version: ProtocolVersion) -> Session {
    let setup = ClientSetup {
        info: Implementation::new("legacy-client", "1"),
        capabilities: ClientCapabilities::default(),
        protocol_version: version,
    };
    Session::client(Config::default(), setup, now)
}

impl<S: Srv, C: Client> Net<S, C> {
    fn new(now: Instant, server: S, client: C, version: ProtocolVersion) -> Self {
        Net {
            now,
            server,
            client,
            session: session(now, version),
            streams: Vec::new(),
            jobs: Vec::new(),
            log: Vec::new(),
            events: Vec::new(),
            session_events: Vec::new(),
            seed: 0,
        }
    }

    /// Moves everything until nothing moves (bounded).
    fn settle(&mut self) {
        for _ in 0..1000 {
            if !self.step() {
                return;
            }
        }
        panic!("the network never settled");
    }

    fn step(&mut self) -> bool {
        let mut moved = false;
        let mut buf = Vec::new();
        while self.session.poll_transmit(&mut buf).is_some() {
            let frame = Bytes::from(std::mem::take(&mut buf));
            let _ = self.client.frame(frame);
            moved = true;
        }
        while let Some(req) = self.client.request() {
            moved = true;
            self.perform(req);
        }
        while let Some(key) = self.client.abort() {
            if let Some(i) = self.streams.iter().position(|(k, _)| *k == key) {
                let (_, id) = self.streams.remove(i);
                self.server.closed(id);
                moved = true;
            }
        }
        for (key, id) in self.streams.clone() {
            let mut bytes = Vec::new();
            let mut ended = false;
            while let Some(chunk) = self.server.poll(id, &mut bytes) {
                if chunk == StreamChunk::End {
                    ended = true;
                    break;
                }
            }
            // Byte by byte: the client must cope with any split.
            for b in &bytes {
                self.client.data(key, std::slice::from_ref(b));
                moved = true;
            }
            if ended {
                self.client.end(key);
                self.streams.retain(|(k, _)| *k != key);
                moved = true;
            }
        }
        while let Some(frame) = self.client.incoming() {
            self.session.handle_input(self.now, frame);
            moved = true;
        }
        while let Some(e) = self.client.event() {
            self.events.push(e);
            moved = true;
        }
        while let Some(e) = self.session.poll_event() {
            self.session_events.push(e);
            moved = true;
        }
        while let Some(job) = self.server.job() {
            self.jobs.push(job);
        }
        let mut cx = Context::from_waker(Waker::noop());
        let before = self.jobs.len();
        self.jobs
            .retain_mut(|job| job.as_mut().poll(&mut cx) == Poll::Pending);
        moved || self.jobs.len() != before
    }

    fn perform(&mut self, req: OutgoingRequest) {
        assert!(
            req.url.ends_with(&req.head.path),
            "{} vs {}",
            req.url,
            req.head.path
        );
        let head = req.head.clone().header("Host", "127.0.0.1:8080");
        self.seed = self.seed.wrapping_add(1);
        let resp = self
            .server
            .request(self.now, &head, req.body, [self.seed; 16]);
        self.log
            .push((req.head.method, req.head.path.clone(), resp.status));
        let headers: Vec<(String, String)> = resp
            .headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        self.client.head(self.now, req.key, resp.status, &headers);
        match resp.body {
            Body::Empty => self.client.end(req.key),
            Body::Full(b) => {
                self.client.data(req.key, &b);
                self.client.end(req.key);
            }
            Body::Stream(id) => self.streams.push((req.key, id)),
        }
    }

    fn initialize(&mut self) -> ProtocolVersion {
        self.session.initialize(self.now).unwrap();
        self.settle();
        self.session_events
            .iter()
            .find_map(|e| match e {
                Event::Initialized { protocol_version } => Some(*protocol_version),
                _ => None,
            })
            .unwrap_or_else(|| panic!("not initialized: {:?} {:?}", self.events, self.log))
    }

    /// Calls tool `echo` and returns the outcome.
    fn call_echo(&mut self) -> Outcome {
        let params = RawJson::from_serialize(&json!({"name": "echo", "arguments": {}})).unwrap();
        let id = self
            .session
            .send_request(
                self.now,
                "tools/call",
                Some(params),
                RequestOptions::default(),
            )
            .unwrap();
        self.settle();
        self.session_events
            .iter()
            .find_map(|e| match e {
                Event::Completed { id: done, outcome } if *done == id => Some(outcome.clone()),
                _ => None,
            })
            .expect("completed")
    }
}

fn result_text(outcome: &Outcome) -> String {
    let Outcome::Result(raw) = outcome else {
        panic!("{outcome:?}")
    };
    let v: Value = serde_json::from_str(raw.get()).unwrap();
    v["content"][0]["text"].as_str().unwrap().to_string()
}

fn router() -> Router<Server> {
    Router::new(
        EndpointConfig::default(),
        RouterPaths::default(),
        app_server,
    )
}

/// A legacy-only server: the Streamable endpoint is mounted nowhere a client looks.
fn legacy_only() -> Router<Server> {
    let paths = RouterPaths {
        streamable: "/not-here".into(),
        ..Default::default()
    };
    Router::new(EndpointConfig::default(), paths, app_server)
}

#[test]
fn legacy_client_speaks_to_the_legacy_endpoint() {
    let now = Instant::now();
    let client =
        LegacyClient::new("http://127.0.0.1:8080/sse", ClientConfig::default(), now, 1).unwrap();
    let mut net = Net::new(now, router(), client, ProtocolVersion::V2024_11_05);
    assert_eq!(net.initialize(), ProtocolVersion::V2024_11_05);
    let sid = "01".repeat(16);
    assert_eq!(
        net.events[0],
        ClientEvent::Ready {
            post_url: format!("http://127.0.0.1:8080/messages?sessionId={sid}")
        }
    );
    assert_eq!(result_text(&net.call_echo()), "hi");
    // One GET, then only POSTs, all 202.
    assert_eq!(net.log[0], (HttpMethod::Get, "/sse".into(), 200));
    assert!(net.log[1..]
        .iter()
        .all(|(m, p, s)| *m == HttpMethod::Post && p.starts_with("/messages?") && *s == 202));
    assert_eq!(
        net.log.len(),
        4,
        "initialize, initialized, tools/call: {:?}",
        net.log
    );

    // Closing the client abandons the stream, which ends the server's session.
    assert_eq!(net.server.legacy().session_count(), 1);
    net.client.close();
    net.settle();
    assert_eq!(net.server.legacy().session_count(), 0);
    assert_eq!(
        net.events.last(),
        Some(&ClientEvent::Closed(CloseReason::Local))
    );
    assert_eq!(
        net.client.handle_frame(Bytes::from_static(b"{}")),
        Err(SendError::Closed)
    );
}

#[test]
fn auto_detection_finds_streamable_http_on_a_streamable_only_server() {
    for mode in [ResponseMode::Auto, ResponseMode::AlwaysSse] {
        let now = Instant::now();
        let config = EndpointConfig {
            response_mode: mode,
            ..Default::default()
        };
        let server = Endpoint::new(config, app_server);
        let client = AutoClient::new("http://127.0.0.1:8080/mcp", ClientConfig::default()).unwrap();
        let mut net = Net::new(now, server, client, ProtocolVersion::V2025_06_18);
        assert_eq!(net.initialize(), ProtocolVersion::V2025_06_18, "{mode:?}");
        assert_eq!(
            net.events,
            vec![ClientEvent::Detected(TransportKind::StreamableHttp)]
        );
        assert_eq!(net.client.detected(), Some(TransportKind::StreamableHttp));
        assert_eq!(
            net.log,
            vec![(HttpMethod::Post, "/mcp".into(), 200)],
            "no GET"
        );
        // The hand-off carries the session and the `initialized` queued meanwhile.
        let handoff = net.client.take_handoff().expect("handoff");
        let sid = handoff.session_id.clone().expect("session id");
        assert_eq!(net.server.session_count(), 1);
        assert_eq!(handoff.pending.len(), 1);
        assert!(std::str::from_utf8(&handoff.pending[0])
            .unwrap()
            .contains("notifications/initialized"));
        assert_eq!(net.client.take_handoff(), None, "once");
        assert_eq!(
            net.client.handle_frame(Bytes::from_static(b"{}")),
            Err(SendError::HandedOff)
        );
        // The Streamable session really is usable with that id.
        let head = HttpRequestHead::new(HttpMethod::Post, "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("Mcp-Session-Id", sid.as_str());
        let resp = net
            .server
            .handle_request(now, &head, handoff.pending[0].clone(), [9; 16]);
        assert_eq!(resp.status, 202);
    }
}

#[test]
fn auto_detection_falls_back_to_the_legacy_transport_on_a_legacy_only_server() {
    let now = Instant::now();
    let client = AutoClient::new("http://127.0.0.1:8080/sse", ClientConfig::default()).unwrap();
    let mut net = Net::new(now, legacy_only(), client, ProtocolVersion::V2025_03_26);
    assert_eq!(net.initialize(), ProtocolVersion::V2025_03_26);
    assert_eq!(
        net.log[0],
        (HttpMethod::Post, "/sse".into(), 405),
        "the probe"
    );
    assert_eq!(
        net.log[1],
        (HttpMethod::Get, "/sse".into(), 200),
        "the fallback"
    );
    assert!(matches!(
        net.events.as_slice(),
        [
            ClientEvent::Detected(TransportKind::LegacySse),
            ClientEvent::Ready { .. }
        ]
    ));
    assert_eq!(net.client.detected(), Some(TransportKind::LegacySse));
    assert_eq!(net.client.take_handoff(), None);
    assert_eq!(result_text(&net.call_echo()), "hi");
    assert_eq!(net.server.streamable().session_count(), 0);
    assert_eq!(net.server.legacy().session_count(), 1);
}

#[test]
fn one_router_is_found_as_streamable_on_its_mcp_path_and_legacy_on_its_sse_path() {
    let now = Instant::now();
    let client = AutoClient::new("http://127.0.0.1:8080/mcp", ClientConfig::default()).unwrap();
    let mut net = Net::new(now, router(), client, ProtocolVersion::V2025_11_25);
    net.initialize();
    assert_eq!(net.client.detected(), Some(TransportKind::StreamableHttp));

    let client = AutoClient::new("http://127.0.0.1:8080/sse", ClientConfig::default()).unwrap();
    let mut net = Net::new(now, router(), client, ProtocolVersion::V2025_11_25);
    assert_eq!(net.initialize(), ProtocolVersion::V2025_11_25);
    assert_eq!(net.client.detected(), Some(TransportKind::LegacySse));
    assert_eq!(result_text(&net.call_echo()), "hi");
}

fn init_frame() -> Bytes {
    Bytes::from(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})
        .to_string(),
    )
}

fn sse_head() -> Vec<(String, String)> {
    vec![("Content-Type".into(), "text/event-stream".into())]
}

#[test]
fn the_probe_falls_back_on_400_404_405_and_fails_on_other_statuses() {
    let now = Instant::now();
    for status in [400, 404, 405] {
        let mut c =
            AutoClient::new("http://localhost:9/base/mcp", ClientConfig::default()).unwrap();
        c.handle_frame(init_frame()).unwrap();
        let probe = c.poll_request().unwrap();
        assert_eq!(probe.head.method, HttpMethod::Post);
        assert_eq!(
            probe.head.get("accept"),
            Some("application/json, text/event-stream")
        );
        assert_eq!(probe.body, init_frame());
        c.handle_response_head(now, probe.key, status, &[]);
        assert_eq!(
            c.poll_abort(),
            Some(probe.key),
            "{status}: the probe is abandoned"
        );
        let get = c.poll_request().expect("fallback GET");
        assert_eq!(get.head.method, HttpMethod::Get);
        assert_eq!(get.url, "http://localhost:9/base/mcp");
        assert_eq!(get.head.get("accept"), Some("text/event-stream"));
        assert_eq!(
            c.poll_event(),
            None,
            "{status}: nothing detected before the endpoint event"
        );
        c.handle_response_head(now, get.key, 200, &sse_head());
        c.handle_response_body(get.key, b"event: endpoint\ndata: msg?sid=7\n\n");
        assert_eq!(
            c.poll_event(),
            Some(ClientEvent::Detected(TransportKind::LegacySse))
        );
        assert_eq!(
            c.poll_event(),
            Some(ClientEvent::Ready {
                post_url: "http://localhost:9/base/msg?sid=7".into()
            })
        );
        let post = c.poll_request().expect("initialize replayed");
        assert_eq!(
            (post.head.method, post.body),
            (HttpMethod::Post, init_frame())
        );
        assert_eq!(post.head.path, "/base/msg?sid=7");
    }
    for status in [401, 403, 500] {
        let mut c = AutoClient::new("http://localhost:9/mcp", ClientConfig::default()).unwrap();
        c.handle_frame(init_frame()).unwrap();
        let probe = c.poll_request().unwrap();
        c.handle_response_head(now, probe.key, status, &[]);
        assert_eq!(
            c.poll_event(),
            Some(ClientEvent::Closed(CloseReason::HttpStatus(status)))
        );
        assert!(c.poll_request().is_none());
    }
    // The first frame must be `initialize`.
    let mut c = AutoClient::new("http://localhost:9/mcp", ClientConfig::default()).unwrap();
    let ping = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert_eq!(c.handle_frame(ping), Err(SendError::Closed));
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::Closed(CloseReason::NotInitialize))
    );
}

#[test]
fn frames_wait_for_the_endpoint_event_and_go_out_in_order() {
    let now = Instant::now();
    let mut c =
        LegacyClient::new("http://127.0.0.1:1/sse", ClientConfig::default(), now, 1).unwrap();
    let get = c.poll_request().unwrap();
    for i in 0..3 {
        c.handle_frame(Bytes::from(format!("{{\"n\":{i}}}")))
            .unwrap();
    }
    assert!(
        c.poll_request().is_none(),
        "nothing before the endpoint event"
    );
    c.handle_response_head(get.key, 200, &sse_head());
    // A message before the endpoint event is still delivered; comments and odd events skipped.
    c.handle_response_body(
        get.key,
        b": hi\n\nevent: other\ndata: x\n\ndata: {\"early\":1}\n\n",
    );
    c.handle_response_body(get.key, b"event: endpoint\r\ndata: /m?s=1\r\n\r\n");
    c.handle_response_body(get.key, b"event: endpoint\ndata: /ignored\n\n");
    let bodies: Vec<_> = std::iter::from_fn(|| c.poll_request())
        .map(|r| r.body)
        .collect();
    assert_eq!(
        bodies,
        vec![
            Bytes::from("{\"n\":0}"),
            "{\"n\":1}".into(),
            "{\"n\":2}".into()
        ]
    );
    assert_eq!(c.poll_frame(), Some(Bytes::from("{\"early\":1}")));
    assert_eq!(c.post_url().as_deref(), Some("http://127.0.0.1:1/m?s=1"));
    c.handle_frame(Bytes::from("{}")).unwrap();
    assert_eq!(c.poll_request().unwrap().url, "http://127.0.0.1:1/m?s=1");
}

#[test]
fn no_endpoint_event_in_time_closes_on_the_virtual_clock() {
    let now = Instant::now();
    let config = ClientConfig {
        endpoint_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let mut c = LegacyClient::new("http://127.0.0.1:1/sse", config, now, 1).unwrap();
    let get = c.poll_request().unwrap();
    c.handle_response_head(get.key, 200, &sse_head());
    assert_eq!(c.poll_timeout(), Some(now + Duration::from_secs(5)));
    c.handle_timeout(now + Duration::from_millis(4999));
    assert_eq!(c.poll_event(), None);
    c.handle_timeout(now + Duration::from_secs(5));
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::Closed(CloseReason::EndpointTimeout))
    );
    assert_eq!(c.poll_abort(), Some(get.key));
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn bad_streams_and_endpoints_close_the_client() {
    let now = Instant::now();
    let start = || {
        let mut c =
            LegacyClient::new("http://127.0.0.1:1/sse", ClientConfig::default(), now, 1).unwrap();
        let key = c.poll_request().unwrap().key;
        (c, key)
    };
    type Case = (u16, Vec<(String, String)>, &'static [u8], CloseReason);
    let cases: Vec<Case> = vec![
        (
            200,
            sse_head(),
            b"event: endpoint\ndata: http://evil.example/m\n\n",
            CloseReason::CrossOriginEndpoint,
        ),
        (
            200,
            sse_head(),
            b"event: endpoint\ndata: https://127.0.0.1:1/m\n\n",
            CloseReason::CrossOriginEndpoint,
        ),
        (
            200,
            sse_head(),
            b"event: endpoint\ndata: mailto:x\n\n",
            CloseReason::InvalidEndpoint,
        ),
        (
            200,
            vec![("content-type".into(), "application/json".into())],
            b"",
            CloseReason::NotEventStream,
        ),
        (401, vec![], b"", CloseReason::HttpStatus(401)),
    ];
    for (status, headers, data, reason) in cases {
        let (mut c, key) = start();
        c.handle_frame(init_frame()).unwrap();
        c.handle_response_head(key, status, &headers);
        c.handle_response_body(key, data);
        assert_eq!(c.poll_event(), Some(ClientEvent::Closed(reason.clone())));
        assert!(
            c.poll_request().is_none(),
            "{reason:?}: nothing is ever POSTed"
        );
        assert!(c.is_closed());
    }
    // The stream ending closes too (no resumption in this transport).
    let (mut c, key) = start();
    c.handle_response_head(key, 200, &sse_head());
    c.handle_response_end(key);
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::Closed(CloseReason::StreamEnded))
    );
    let (mut c, key) = start();
    c.handle_response_failed(key);
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::Closed(CloseReason::RequestFailed))
    );
}

#[test]
fn a_refused_post_answers_its_request_with_an_error_exactly_once() {
    let now = Instant::now();
    let mut c =
        LegacyClient::new("http://127.0.0.1:1/sse", ClientConfig::default(), now, 1).unwrap();
    let get = c.poll_request().unwrap();
    c.handle_response_head(get.key, 200, &sse_head());
    c.handle_response_body(get.key, b"event: endpoint\ndata: /m?s=1\n\n");
    assert!(matches!(c.poll_event(), Some(ClientEvent::Ready { .. })));
    c.handle_frame(Bytes::from_static(
        br#"{"jsonrpc":"2.0","id":41,"method":"ping"}"#,
    ))
    .unwrap();
    c.handle_frame(Bytes::from_static(
        br#"{"jsonrpc":"2.0","method":"notifications/x"}"#,
    ))
    .unwrap();
    let (a, b) = (c.poll_request().unwrap(), c.poll_request().unwrap());
    c.handle_response_head(a.key, 500, &[]);
    c.handle_response_end(a.key);
    c.handle_response_failed(b.key);
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::PostFailed { status: Some(500) })
    );
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::PostFailed { status: None })
    );
    let err: Value = serde_json::from_slice(&c.poll_frame().unwrap()).unwrap();
    assert_eq!(err["id"], 41);
    assert_eq!(err["error"]["code"], -32000);
    assert_eq!(c.poll_frame(), None, "a notification has nothing to answer");
    assert!(!c.is_closed());
    // 404: the server forgot the session.
    c.handle_frame(Bytes::from_static(
        br#"{"jsonrpc":"2.0","id":42,"method":"ping"}"#,
    ))
    .unwrap();
    let p = c.poll_request().unwrap();
    c.handle_response_head(p.key, 404, &[]);
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::PostFailed { status: Some(404) })
    );
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::Closed(CloseReason::HttpStatus(404)))
    );
    assert!(c.poll_frame().is_some());
}

#[test]
fn pending_and_inbound_frames_are_bounded() {
    let now = Instant::now();
    let config = ClientConfig {
        max_pending_frames: 2,
        max_inbound_frames: 2,
        ..Default::default()
    };
    let mut c = LegacyClient::new("http://127.0.0.1:1/sse", config, now, 1).unwrap();
    let get = c.poll_request().unwrap();
    assert_eq!(c.handle_frame(Bytes::from("1")), Ok(()));
    assert_eq!(c.handle_frame(Bytes::from("2")), Ok(()));
    assert_eq!(c.handle_frame(Bytes::from("3")), Err(SendError::Full));
    c.handle_response_head(get.key, 200, &sse_head());
    c.handle_response_body(get.key, b"data: 1\n\ndata: 2\n\ndata: 3\n\n");
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::Closed(CloseReason::InboundOverflow))
    );
}
