//! The client-side transports (HTTP+SSE and auto-detection) driven in memory against
//! the core server endpoints, with a real client `Session` on top and a virtual clock; plus
//! scripted responses for the paths no well-behaved server takes.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::server::Server;
use mcp_sansio::http::sse_transport::*;
use mcp_sansio::http::*;
use mcp_sansio::jsonrpc::RawJson;
use mcp_sansio::model::{ClientCapabilities, Implementation, ProtocolVersion};
use mcp_sansio::outgoing::{Action, ClientTransport, ExchangeId, OutgoingRequest};
use mcp_sansio::runtime::Job;
use mcp_sansio::session::{ClientSetup, Event, Outcome, RequestOptions, Session, TransmitKind};
use mcp_sansio::testing::{echo_server, Jobs};
use mcp_sansio::Config;
use serde_json::{json, Value};

use crate::support::read_now;

fn app_server(now: Instant) -> Server {
    echo_server(Implementation::new("sse-transport-client-test", "1"), now)
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

/// The client transport, whichever it is: both follow the core's one client contract.
trait Client: ClientTransport<Event = TransportEvent> {}
impl<T: ClientTransport<Event = TransportEvent>> Client for T {}

/// The request head a server sees for `req` (HTTP+SSE requests carry their absolute URL).
fn head_of(req: &OutgoingRequest) -> HttpRequestHead {
    let url = req
        .url_str()
        .expect("the HTTP+SSE transports name their URL");
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("/", |i| &rest[i..]);
    let mut head = HttpRequestHead::new(req.method, path);
    for (name, value) in &req.headers {
        head = head.header(*name, value.clone());
    }
    head
}

/// A request frame as the session would transmit it.
fn request(frame: &'static [u8]) -> (Bytes, TransmitKind) {
    (Bytes::from_static(frame), TransmitKind::Request)
}

/// The client's next action, which must be a request to perform.
fn next_send<C: Client>(c: &mut C) -> Option<OutgoingRequest> {
    match c.poll_action()? {
        Action::Send(r) => Some(r),
        Action::Abort(id) => panic!("expected a request, got an abort of {id:?}"),
    }
}

/// The client's next action, which must be an abort.
fn next_abort<C: Client>(c: &mut C) -> Option<ExchangeId> {
    match c.poll_action()? {
        Action::Abort(id) => Some(id),
        Action::Send(r) => panic!("expected an abort, got {r:?}"),
    }
}

/// The next frame for the session, as JSON.
fn next_frame<C: Client>(c: &mut C) -> Option<Value> {
    c.poll_frame()
        .map(|(f, _)| serde_json::from_slice(&f).unwrap())
}

fn pairs(headers: &[(String, String)]) -> impl Iterator<Item = (&str, &str)> {
    headers.iter().map(|(n, v)| (n.as_str(), v.as_str()))
}

/// A client session, its transport and a server, wired in memory.
struct Net<S, C> {
    now: Instant,
    server: S,
    client: C,
    session: Session,
    /// Open response bodies: the client's key → the server's stream.
    streams: Vec<(ExchangeId, StreamId)>,
    jobs: Jobs,
    /// Every request performed, with its status.
    log: Vec<(HttpMethod, String, u16)>,
    events: Vec<TransportEvent>,
    session_events: Vec<Event>,
    seed: u8,
}

fn session(now: Instant, version: ProtocolVersion) -> Session {
    let setup = ClientSetup {
        info: Implementation::new("sse-transport-client", "1"),
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
            jobs: Jobs::new(),
            log: Vec::new(),
            events: Vec::new(),
            session_events: Vec::new(),
            seed: 0,
        }
    }

    /// Moves everything until nothing moves (bounded).
    fn settle(&mut self) {
        mcp_sansio::testing::settle(1000, "the network", || self.step());
    }

    fn step(&mut self) -> bool {
        let mut moved = false;
        let mut buf = Vec::new();
        while let Some(t) = self.session.poll_transmit(&mut buf) {
            let frame = Bytes::from(std::mem::take(&mut buf));
            self.client.handle_transmit(self.now, frame, t.kind);
            moved = true;
        }
        while let Some(action) = self.client.poll_action() {
            match action {
                Action::Send(req) => {
                    moved = true;
                    self.perform(req);
                }
                Action::Abort(key) => {
                    if let Some(i) = self.streams.iter().position(|(k, _)| *k == key) {
                        let (_, id) = self.streams.remove(i);
                        self.server.closed(id);
                        moved = true;
                    }
                }
            }
        }
        for (key, id) in self.streams.clone() {
            let (bytes, ended) = read_now(|buf| self.server.poll(id, buf));
            // Byte by byte: the client must cope with any split.
            for b in &bytes {
                let chunk = Bytes::copy_from_slice(std::slice::from_ref(b));
                self.client.handle_response_body(self.now, key, chunk);
                moved = true;
            }
            if ended {
                self.client.handle_response_end(self.now, key);
                self.streams.retain(|(k, _)| *k != key);
                moved = true;
            }
        }
        while let Some((frame, _)) = self.client.poll_frame() {
            self.session.handle_input(self.now, frame);
            moved = true;
        }
        while let Some(e) = self.client.poll_event() {
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
        let finished = self.jobs.run();
        moved || finished > 0
    }

    fn perform(&mut self, req: OutgoingRequest) {
        let head = head_of(&req).header("Host", "127.0.0.1:8080");
        self.seed = self.seed.wrapping_add(1);
        let resp = self
            .server
            .request(self.now, &head, req.body, [self.seed; 16]);
        self.log.push((head.method, head.path.clone(), resp.status));
        let headers: Vec<(String, String)> = resp
            .headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        self.client
            .handle_response_head(self.now, req.id, resp.status, pairs(&headers));
        match resp.body {
            Body::Empty => self.client.handle_response_end(self.now, req.id),
            Body::Full(b) => {
                self.client.handle_response_body(self.now, req.id, b);
                self.client.handle_response_end(self.now, req.id);
            }
            Body::Stream(id) => self.streams.push((req.id, id)),
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

/// A sse-transport-only server: the Streamable endpoint is mounted nowhere a client looks.
fn sse_transport_only() -> Router<Server> {
    let paths = RouterPaths {
        streamable: "/not-here".into(),
        ..Default::default()
    };
    Router::new(EndpointConfig::default(), paths, app_server)
}

#[test]
fn sse_transport_client_speaks_to_the_sse_transport_endpoint() {
    let now = Instant::now();
    let client = SseTransportClient::new(
        "http://127.0.0.1:8080/sse",
        HttpClientConfig::default(),
        now,
        1,
    )
    .unwrap();
    let mut net = Net::new(now, router(), client, ProtocolVersion::V2024_11_05);
    assert_eq!(net.initialize(), ProtocolVersion::V2024_11_05);
    let sid = "01".repeat(16);
    assert_eq!(
        net.events[0],
        TransportEvent::Ready {
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
    assert_eq!(net.server.sse_transport().session_count(), 1);
    net.client.close(now);
    net.settle();
    assert_eq!(net.server.sse_transport().session_count(), 0);
    assert_eq!(
        net.events.last(),
        Some(&TransportEvent::Closed(TransportCloseReason::Local))
    );
    // A request after the close is answered at once with a transport error.
    let (ping, kind) = request(br#"{"jsonrpc":"2.0","id":77,"method":"ping"}"#);
    net.client.handle_transmit(now, ping, kind);
    let refused = next_frame(&mut net.client).expect("an error frame");
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (json!(77), json!(-32000))
    );
    assert!(net.client.poll_action().is_none(), "nothing is sent");
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
        let client =
            AutoClient::new("http://127.0.0.1:8080/mcp", HttpClientConfig::default()).unwrap();
        let mut net = Net::new(now, server, client, ProtocolVersion::V2025_06_18);
        assert_eq!(net.initialize(), ProtocolVersion::V2025_06_18, "{mode:?}");
        assert_eq!(
            net.events,
            vec![TransportEvent::Detected(TransportKind::StreamableHttp)]
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
        let (ping, kind) = request(br#"{"jsonrpc":"2.0","id":78,"method":"ping"}"#);
        net.client.handle_transmit(now, ping, kind);
        let refused = next_frame(&mut net.client).expect("an error frame");
        assert_eq!(refused["id"], 78, "handed off: refused with an error");
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
fn auto_detection_falls_back_to_the_sse_transport_transport_on_a_sse_transport_only_server() {
    let now = Instant::now();
    let client = AutoClient::new("http://127.0.0.1:8080/sse", HttpClientConfig::default()).unwrap();
    let mut net = Net::new(
        now,
        sse_transport_only(),
        client,
        ProtocolVersion::V2025_03_26,
    );
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
            TransportEvent::Detected(TransportKind::SseTransport),
            TransportEvent::Ready { .. }
        ]
    ));
    assert_eq!(net.client.detected(), Some(TransportKind::SseTransport));
    assert_eq!(net.client.take_handoff(), None);
    assert_eq!(result_text(&net.call_echo()), "hi");
    assert_eq!(net.server.streamable().session_count(), 0);
    assert_eq!(net.server.sse_transport().session_count(), 1);
}

#[test]
fn one_router_is_found_as_streamable_on_its_mcp_path_and_sse_transport_on_its_sse_path() {
    let now = Instant::now();
    let client = AutoClient::new("http://127.0.0.1:8080/mcp", HttpClientConfig::default()).unwrap();
    let mut net = Net::new(now, router(), client, ProtocolVersion::V2025_11_25);
    net.initialize();
    assert_eq!(net.client.detected(), Some(TransportKind::StreamableHttp));

    let client = AutoClient::new("http://127.0.0.1:8080/sse", HttpClientConfig::default()).unwrap();
    let mut net = Net::new(now, router(), client, ProtocolVersion::V2025_11_25);
    assert_eq!(net.initialize(), ProtocolVersion::V2025_11_25);
    assert_eq!(net.client.detected(), Some(TransportKind::SseTransport));
    assert_eq!(result_text(&net.call_echo()), "hi");
}

fn init_frame() -> Bytes {
    Bytes::from(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})
        .to_string(),
    )
}

fn sse_head() -> [(&'static str, &'static str); 1] {
    [("Content-Type", "text/event-stream")]
}

/// The initialize request as the session transmits it.
fn transmit_init<C: Client>(c: &mut C, now: Instant) {
    c.handle_transmit(now, init_frame(), TransmitKind::Request);
}

fn chunk(bytes: &'static [u8]) -> Bytes {
    Bytes::from_static(bytes)
}

/// An HTTP+SSE client for `http://127.0.0.1:1/sse` and the key of its stream GET.
fn sse_client(now: Instant, config: HttpClientConfig) -> (SseTransportClient, ExchangeId) {
    let mut c = SseTransportClient::new("http://127.0.0.1:1/sse", config, now, 1).unwrap();
    let get = next_send(&mut c).expect("the stream GET");
    (c, get.id)
}

/// An HTTP+SSE client whose stream has opened and named `/m?s=1` in its `endpoint` event.
fn ready_client(now: Instant, config: HttpClientConfig) -> (SseTransportClient, ExchangeId) {
    let (mut c, get) = sse_client(now, config);
    c.handle_response_head(now, get, 200, sse_head());
    c.handle_response_body(now, get, chunk(b"event: endpoint\ndata: /m?s=1\n\n"));
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::Ready {
            post_url: "http://127.0.0.1:1/m?s=1".into()
        })
    );
    (c, get)
}

#[test]
fn the_probe_falls_back_on_400_404_405_and_fails_on_other_statuses() {
    let now = Instant::now();
    for status in [400, 404, 405] {
        let mut c =
            AutoClient::new("http://localhost:9/base/mcp", HttpClientConfig::default()).unwrap();
        transmit_init(&mut c, now);
        let probe = next_send(&mut c).unwrap();
        assert_eq!(probe.method, HttpMethod::Post);
        assert_eq!(
            probe.header("accept"),
            Some("application/json, text/event-stream")
        );
        assert_eq!(probe.body, init_frame());
        c.handle_response_head(now, probe.id, status, []);
        assert_eq!(
            next_abort(&mut c),
            Some(probe.id),
            "{status}: the probe is abandoned"
        );
        let get = next_send(&mut c).expect("fallback GET");
        assert_eq!(get.method, HttpMethod::Get);
        assert_eq!(get.url_str(), Some("http://localhost:9/base/mcp"));
        assert_eq!(get.header("accept"), Some("text/event-stream"));
        assert_eq!(
            c.poll_event(),
            None,
            "{status}: nothing detected before the endpoint event"
        );
        c.handle_response_head(now, get.id, 200, sse_head());
        c.handle_response_body(now, get.id, chunk(b"event: endpoint\ndata: msg?sid=7\n\n"));
        assert_eq!(
            c.poll_event(),
            Some(TransportEvent::Detected(TransportKind::SseTransport))
        );
        assert_eq!(
            c.poll_event(),
            Some(TransportEvent::Ready {
                post_url: "http://localhost:9/base/msg?sid=7".into()
            })
        );
        let post = next_send(&mut c).expect("initialize replayed");
        assert_eq!(
            (post.method, post.body.clone()),
            (HttpMethod::Post, init_frame())
        );
        assert_eq!(post.url_str(), Some("http://localhost:9/base/msg?sid=7"));
    }
    for status in [401, 403, 500] {
        let mut c = AutoClient::new("http://localhost:9/mcp", HttpClientConfig::default()).unwrap();
        transmit_init(&mut c, now);
        let probe = next_send(&mut c).unwrap();
        c.handle_response_head(now, probe.id, status, []);
        assert_eq!(
            c.poll_event(),
            Some(TransportEvent::Closed(TransportCloseReason::HttpStatus(
                status
            )))
        );
        assert_eq!(next_abort(&mut c), Some(probe.id), "the probe is abandoned");
        assert!(c.poll_action().is_none(), "nothing else is sent");
        let answer = next_frame(&mut c).expect("the probe's initialize is answered");
        assert_eq!(answer["id"], 0);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("HTTP {status}")), "{message}");
        assert_eq!(next_frame(&mut c), None, "answered once");
    }
    // The first frame must be `initialize`: anything else closes, and a request is answered.
    let mut c = AutoClient::new("http://localhost:9/mcp", HttpClientConfig::default()).unwrap();
    let (ping, kind) = request(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    c.handle_transmit(now, ping, kind);
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::Closed(TransportCloseReason::NotInitialize))
    );
    assert_eq!(next_frame(&mut c).unwrap()["id"], 1);
    assert!(c.is_closed());
}

#[test]
fn a_redirected_or_oversized_probe_answers_initialize_with_the_reason() {
    let now = Instant::now();
    let mut c = AutoClient::new("http://localhost:9/mcp", HttpClientConfig::default()).unwrap();
    transmit_init(&mut c, now);
    let probe = next_send(&mut c).unwrap();
    c.handle_response_head(
        now,
        probe.id,
        307,
        [("Location", "http://localhost:9/other")],
    );
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::Closed(TransportCloseReason::Redirect {
            status: 307,
            location: Some(r#""http://localhost:9/other""#.into())
        }))
    );
    assert_eq!(
        TransportCloseReason::InvalidEndpoint {
            uri: r#""mailto:x""#.into()
        }
        .to_string(),
        r#"the endpoint event's URI "mailto:x" is not a valid http(s) reference"#
    );
    let answer = next_frame(&mut c).unwrap();
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(r#"HTTP 307, a redirect to "http://localhost:9/other""#),
        "{message}"
    );

    let config = HttpClientConfig {
        max_event_size: 64,
        ..Default::default()
    };
    for content_type in ["application/json", "text/event-stream"] {
        let mut c = AutoClient::new("http://localhost:9/mcp", config.clone()).unwrap();
        transmit_init(&mut c, now);
        let probe = next_send(&mut c).unwrap();
        c.handle_response_head(now, probe.id, 200, [("Content-Type", content_type)]);
        let body = if content_type == "application/json" {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":\"{}\"}}",
                "x".repeat(100)
            )
        } else {
            format!("data: {}\n\n", "x".repeat(100))
        };
        c.handle_response_body(now, probe.id, Bytes::from(body));
        assert_eq!(
            c.poll_event(),
            Some(TransportEvent::Detected(TransportKind::StreamableHttp)),
            "{content_type}"
        );
        assert_eq!(
            c.poll_event(),
            Some(TransportEvent::Closed(TransportCloseReason::TooLarge {
                limit: 64
            })),
            "{content_type}"
        );
        let answer = next_frame(&mut c).expect("initialize answered");
        assert_eq!(answer["id"], 0);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("size limit"), "{content_type}: {message}");
    }
}

#[test]
fn a_probe_without_an_answer_in_time_closes_on_the_virtual_clock() {
    let now = Instant::now();
    let config = HttpClientConfig {
        post_timeout: Duration::from_secs(3),
        ..Default::default()
    };
    let mut c = AutoClient::new("http://localhost:9/mcp", config).unwrap();
    assert_eq!(c.poll_timeout(), None, "nothing sent yet");
    transmit_init(&mut c, now);
    let probe = next_send(&mut c).unwrap();
    assert_eq!(c.poll_timeout(), Some(now + Duration::from_secs(3)));
    c.handle_timeout(now + Duration::from_millis(2999));
    assert_eq!(c.poll_event(), None);
    c.handle_timeout(now + Duration::from_secs(3));
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::Closed(TransportCloseReason::ProbeTimeout))
    );
    assert_eq!(next_abort(&mut c), Some(probe.id));
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn frames_wait_for_the_endpoint_event_and_go_out_in_order() {
    let now = Instant::now();
    let (mut c, get) = sse_client(now, HttpClientConfig::default());
    for i in 0..3 {
        let frame = Bytes::from(format!("{{\"n\":{i}}}"));
        c.handle_transmit(now, frame, TransmitKind::Notification);
    }
    assert!(
        c.poll_action().is_none(),
        "nothing before the endpoint event"
    );
    c.handle_response_head(now, get, 200, sse_head());
    // A message before the endpoint event is still delivered; comments and odd events skipped.
    c.handle_response_body(
        now,
        get,
        chunk(b": hi\n\nevent: other\ndata: x\n\ndata: {\"early\":1}\n\n"),
    );
    c.handle_response_body(now, get, chunk(b"event: endpoint\r\ndata: /m?s=1\r\n\r\n"));
    c.handle_response_body(now, get, chunk(b"event: endpoint\ndata: /ignored\n\n"));
    let bodies: Vec<_> = std::iter::from_fn(|| next_send(&mut c))
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
    assert_eq!(next_frame(&mut c), Some(json!({"early": 1})));
    assert_eq!(c.post_url().as_deref(), Some("http://127.0.0.1:1/m?s=1"));
    c.handle_transmit(now, Bytes::from("{}"), TransmitKind::Notification);
    assert_eq!(
        next_send(&mut c).unwrap().url_str(),
        Some("http://127.0.0.1:1/m?s=1")
    );
}

#[test]
fn no_endpoint_event_in_time_closes_on_the_virtual_clock() {
    let now = Instant::now();
    let config = HttpClientConfig {
        endpoint_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let (mut c, get) = sse_client(now, config);
    c.handle_response_head(now, get, 200, sse_head());
    assert_eq!(c.poll_timeout(), Some(now + Duration::from_secs(5)));
    c.handle_timeout(now + Duration::from_millis(4999));
    assert_eq!(c.poll_event(), None);
    c.handle_timeout(now + Duration::from_secs(5));
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::Closed(
            TransportCloseReason::EndpointTimeout
        ))
    );
    assert_eq!(next_abort(&mut c), Some(get));
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn a_post_without_an_answer_in_time_ends_its_request_once() {
    let now = Instant::now();
    let config = HttpClientConfig {
        post_timeout: Duration::from_secs(2),
        ..Default::default()
    };
    let (mut c, _) = ready_client(now, config);
    assert_eq!(c.poll_timeout(), None, "no POST in flight");
    let (ping, kind) = request(br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#);
    let sent_at = now + Duration::from_secs(1);
    c.handle_transmit(sent_at, ping, kind);
    let post = next_send(&mut c).unwrap();
    assert_eq!(c.poll_timeout(), Some(sent_at + Duration::from_secs(2)));
    c.handle_timeout(sent_at + Duration::from_millis(1999));
    assert!(c.poll_frame().is_none());
    c.handle_timeout(sent_at + Duration::from_secs(2));
    assert_eq!(next_abort(&mut c), Some(post.id));
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::PostFailed { status: None })
    );
    let err = next_frame(&mut c).expect("the request ends");
    assert_eq!(
        (err["id"].clone(), err["error"]["code"].clone()),
        (json!(9), json!(-32000))
    );
    // A late answer for the aborted POST changes nothing.
    c.handle_response_head(now, post.id, 202, []);
    c.handle_response_end(now, post.id);
    assert!(c.poll_frame().is_none());
    assert_eq!(c.poll_timeout(), None);
    assert!(!c.is_closed());
}

#[test]
fn bad_streams_and_endpoints_close_the_client() {
    let now = Instant::now();
    let start = || sse_client(now, HttpClientConfig::default());
    type Case = (
        u16,
        Vec<(&'static str, &'static str)>,
        &'static [u8],
        TransportCloseReason,
    );
    // A stream that opened as it should, then named a bad endpoint.
    let endpoint_case = |event: &'static [u8], reason| (200, sse_head().to_vec(), event, reason);
    let cases: Vec<Case> = vec![
        endpoint_case(
            b"event: endpoint\ndata: http://evil.example/m\n\n",
            TransportCloseReason::CrossOriginEndpoint {
                uri: r#""http://evil.example/m""#.into(),
            },
        ),
        endpoint_case(
            b"event: endpoint\ndata: https://127.0.0.1:1/m\n\n",
            TransportCloseReason::CrossOriginEndpoint {
                uri: r#""https://127.0.0.1:1/m""#.into(),
            },
        ),
        endpoint_case(
            b"event: endpoint\ndata: mailto:x\x1b[2J\n\n",
            TransportCloseReason::InvalidEndpoint {
                uri: r#""mailto:x\u{1b}[2J""#.into(),
            },
        ),
        endpoint_case(
            b"event: endpoint\ndata: ftp://127.0.0.1:1/m\n\n",
            TransportCloseReason::InvalidEndpoint {
                uri: r#""ftp://127.0.0.1:1/m""#.into(),
            },
        ),
        (
            200,
            vec![("content-type", "application/json")],
            b"",
            TransportCloseReason::NotEventStream {
                content_type: r#""application/json""#.into(),
            },
        ),
        (401, vec![], b"", TransportCloseReason::HttpStatus(401)),
        (
            302,
            vec![("location", "http://127.0.0.1:1/login\u{1b}[2J")],
            b"",
            TransportCloseReason::Redirect {
                status: 302,
                location: Some(r#""http://127.0.0.1:1/login\u{1b}[2J""#.into()),
            },
        ),
    ];
    for (status, headers, data, reason) in cases {
        let (mut c, key) = start();
        transmit_init(&mut c, now);
        c.handle_response_head(now, key, status, headers);
        c.handle_response_body(now, key, chunk(data));
        assert_eq!(c.poll_event(), Some(TransportEvent::Closed(reason.clone())));
        assert_eq!(next_abort(&mut c), Some(key));
        assert!(
            c.poll_action().is_none(),
            "{reason:?}: nothing is ever POSTed"
        );
        assert!(c.is_closed());
        // The held `initialize` ends with an error instead of waiting forever, saying why.
        let answer = next_frame(&mut c).expect("answered");
        assert_eq!(answer["id"], 0, "{reason:?}");
        assert_eq!(
            answer["error"]["message"],
            format!("the HTTP+SSE transport closed: {reason}"),
        );
    }
    // The stream ending closes too (no resumption in this transport).
    let (mut c, key) = start();
    c.handle_response_head(now, key, 200, sse_head());
    c.handle_response_end(now, key);
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::Closed(TransportCloseReason::StreamEnded))
    );
    let (mut c, key) = start();
    c.handle_response_failed(now, key, "refused");
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::Closed(TransportCloseReason::RequestFailed))
    );
}

#[test]
fn a_refused_post_answers_its_request_with_an_error_exactly_once() {
    let now = Instant::now();
    let (mut c, _) = ready_client(now, HttpClientConfig::default());
    let (ping, kind) = request(br#"{"jsonrpc":"2.0","id":41,"method":"ping"}"#);
    c.handle_transmit(now, ping, kind);
    c.handle_transmit(
        now,
        chunk(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#),
        TransmitKind::Notification,
    );
    let (a, b) = (next_send(&mut c).unwrap(), next_send(&mut c).unwrap());
    c.handle_response_head(now, a.id, 500, []);
    c.handle_response_end(now, a.id);
    c.handle_response_failed(now, b.id, "reset");
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::PostFailed { status: Some(500) })
    );
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::PostFailed { status: None })
    );
    let err = next_frame(&mut c).unwrap();
    assert_eq!(err["id"], 41);
    assert_eq!(err["error"]["code"], -32000);
    assert!(
        c.poll_frame().is_none(),
        "a notification has nothing to answer"
    );
    assert!(!c.is_closed());
    // 404: the server forgot the session.
    let (ping, kind) = request(br#"{"jsonrpc":"2.0","id":42,"method":"ping"}"#);
    c.handle_transmit(now, ping, kind);
    let p = next_send(&mut c).unwrap();
    c.handle_response_head(now, p.id, 404, []);
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::PostFailed { status: Some(404) })
    );
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::Closed(TransportCloseReason::HttpStatus(
            404
        )))
    );
    assert!(c.poll_frame().is_some());
}

#[test]
fn pending_and_inbound_frames_are_bounded() {
    let now = Instant::now();
    let config = HttpClientConfig {
        max_pending_frames: 2,
        max_inbound_frames: 2,
        ..Default::default()
    };
    let (mut c, get) = sse_client(now, config);
    for id in 1..=3 {
        let frame = Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        c.handle_transmit(now, frame, TransmitKind::Request);
    }
    // The third did not fit: it is answered at once; the two others wait.
    let refused = next_frame(&mut c).expect("the third is refused");
    assert_eq!(refused["id"], 3);
    assert!(c.poll_frame().is_none());
    c.handle_response_head(now, get, 200, sse_head());
    c.handle_response_body(now, get, chunk(b"data: 1\n\ndata: 2\n\ndata: 3\n\n"));
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::Closed(
            TransportCloseReason::InboundOverflow
        ))
    );
}

#[test]
fn an_oversized_event_closes_the_sse_transport_naming_the_limit() {
    let now = Instant::now();
    let config = HttpClientConfig {
        max_event_size: 64,
        ..Default::default()
    };
    let (mut c, get) = ready_client(now, config);
    // An event past the limit (it could be the answer a request waits for) closes at once,
    // before it ends.
    let big = format!("event: message\ndata: {}", "x".repeat(100));
    c.handle_response_body(now, get, Bytes::from(big));
    let event = c.poll_event();
    assert_eq!(
        event,
        Some(TransportEvent::Closed(TransportCloseReason::TooLarge {
            limit: 64
        }))
    );
    assert_eq!(
        TransportCloseReason::TooLarge { limit: 64 }.to_string(),
        "a response exceeded the 64 bytes size limit"
    );
    assert_eq!(next_abort(&mut c), Some(get));
    assert!(c.is_closed());

    // An `endpoint` event past the limit too, instead of waiting for the endpoint timeout.
    let config = HttpClientConfig {
        max_event_size: 64,
        ..Default::default()
    };
    let (mut c, get) = sse_client(now, config);
    c.handle_response_head(now, get, 200, sse_head());
    let big = format!("event: endpoint\ndata: /m?{}", "y".repeat(100));
    c.handle_response_body(now, get, Bytes::from(big));
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::Closed(TransportCloseReason::TooLarge {
            limit: 64
        }))
    );
}

#[test]
fn a_redirected_post_ends_its_request_quoting_the_location() {
    let now = Instant::now();
    let (mut c, _) = ready_client(now, HttpClientConfig::default());
    let (ping, kind) = request(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    c.handle_transmit(now, ping, kind);
    let post = next_send(&mut c).unwrap();
    let location = format!("http://127.0.0.1:1/else\r\n{}", "z".repeat(300));
    c.handle_response_head(now, post.id, 307, [("Location", location.as_str())]);
    assert_eq!(
        c.poll_event(),
        Some(TransportEvent::PostFailed { status: Some(307) })
    );
    let err = next_frame(&mut c).expect("the request ends");
    assert_eq!(err["id"], 3);
    let message = err["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            r#"the message endpoint answered HTTP 307, a redirect to "http://127.0.0.1:1/else\r\nzzz"#
        ),
        "{message}"
    );
    assert!(
        message.ends_with(&format!("... ({} bytes) (not followed)", location.len())),
        "{message}"
    );
}
