//! An in-memory network for the HTTP client transport: the app `Client` and `HttpClient` on
//! one side, the core `Endpoint` with a small app `Server` on the other, a virtual clock, and
//! hooks to break streams, drop sessions and watch every HTTP request.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::client::{Client, ClientEvent};
use mcp_sansio::app::server::{CallToolResult, Server, Tool};
use mcp_sansio::http::*;
use mcp_sansio::model::Implementation;
use mcp_sansio::model::LoggingLevel;
use mcp_sansio::runtime::{oneshot, OneshotSender};
use mcp_sansio::testing::Jobs;
use serde_json::json;

pub type Gates = Arc<Mutex<Vec<OneshotSender<()>>>>;

/// The server: `echo`, `chatty` (a log, then the result), `wait` (a log, then the result once
/// its gate opens) and `ask` (elicits from the client, returns the answer).
pub fn server(now: Instant, gates: Gates) -> Server {
    let schema = json!({"type": "object"});
    Server::builder(Implementation::new("http-client-test", "1"))
        .tool(Tool::new("echo", schema.clone()).sync_handler(|args, _| {
            Ok(CallToolResult::text(
                serde_json::Value::Object(args.arguments.into_map()).to_string(),
            ))
        }))
        .tool(Tool::new("chatty", schema.clone()).sync_handler(|_, ctx| {
            ctx.log(LoggingLevel::Info, None, json!("working"));
            Ok(CallToolResult::text("done"))
        }))
        .tool(wait_tool(gates))
        .tool(Tool::new("ask", schema).handler(|_, ctx| async move {
            let params = json!({"message": "name?", "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string", "default": "Ada"}}}});
            let answer = ctx.elicit(params).await;
            Ok(CallToolResult::text(format!("{answer:?}")))
        }))
        .build(now)
}

/// `wait`: logs "started", then answers "finished" once the test opens its gate (pushed on
/// `gates` per call).
pub fn wait_tool(gates: Gates) -> Tool {
    Tool::new("wait", json!({"type": "object"})).handler(move |_, ctx| {
        let (tx, rx) = oneshot::<()>();
        gates.lock().unwrap().push(tx);
        async move {
            ctx.log(LoggingLevel::Info, None, json!("started"));
            let _ = rx.await;
            Ok(CallToolResult::text("finished"))
        }
    })
}

/// The whole network.
pub struct Net {
    pub now: Instant,
    pub client: Client,
    pub transport: HttpClient,
    pub ep: Endpoint<Server>,
    pub gates: Gates,
    jobs: Jobs,
    /// Exchanges whose response is streamed: (exchange, endpoint stream).
    pub open: Vec<(ExchangeId, StreamId)>,
    /// Every request the transport asked for, in order, with the time it was sent.
    pub sent: Vec<(Instant, OutgoingRequest)>,
    pub client_events: Vec<ClientEvent>,
    pub transport_events: Vec<TransportEvent>,
    /// Frames delivered to the client machine.
    pub delivered: Vec<Bytes>,
    seed: u8,
}

impl Net {
    pub fn new(config: EndpointConfig) -> Net {
        Self::with(config, HttpClientConfig::default())
    }

    pub fn with(config: EndpointConfig, transport: HttpClientConfig) -> Net {
        let now = Instant::now();
        let gates: Gates = Arc::default();
        let g = gates.clone();
        let client = Client::builder(Implementation::new("rig", "1"))
            .elicitation_with_defaults()
            .build(now);
        Net {
            now,
            client,
            transport: HttpClient::new(transport),
            ep: Endpoint::new(config, move |now| server(now, g.clone())),
            gates,
            jobs: Jobs::new(),
            open: Vec::new(),
            sent: Vec::new(),
            client_events: Vec::new(),
            transport_events: Vec::new(),
            delivered: Vec::new(),
            seed: 0,
        }
    }

    /// Moves everything that can move at the current time (bounded).
    pub fn step(&mut self) {
        mcp_sansio::testing::settle(10_000, "the network", || self.step_once());
    }

    fn step_once(&mut self) -> bool {
        let mut moved = false;
        let mut buf = Vec::new();
        while let Some(t) = self.client.poll_transmit(&mut buf) {
            moved = true;
            let frame = Bytes::copy_from_slice(&buf);
            buf.clear();
            self.transport.handle_transmit(self.now, frame, t.kind);
        }
        while let Some(action) = self.transport.poll_action() {
            moved = true;
            match action {
                Action::Send(request) => self.perform(request),
                Action::Abort(id) => self.abort(id),
            }
        }
        moved |= self.pump_streams();
        while let Some((frame, _)) = self.transport.poll_frame() {
            moved = true;
            self.delivered.push(frame.clone());
            self.client.handle_input(self.now, frame);
        }
        while let Some(job) = self.client.poll_job() {
            self.jobs.push(job);
        }
        while let Some(job) = self.ep.poll_job() {
            self.jobs.push(job);
        }
        moved |= self.jobs.run() > 0;
        self.client.handle_wake(self.now);
        while let Some(event) = self.client.poll_event() {
            self.client_events.push(event);
        }
        while let Some(event) = self.transport.poll_event() {
            moved = true;
            self.transport_events.push(event);
        }
        moved || self.client.session().has_transmit()
    }

    fn perform(&mut self, request: OutgoingRequest) {
        self.sent.push((self.now, request.clone()));
        let mut head = HttpRequestHead::new(request.method, "/mcp").header("Host", "localhost:1");
        for (name, value) in &request.headers {
            head = head.header(*name, value.clone());
        }
        self.seed = self.seed.wrapping_add(1);
        let resp = self
            .ep
            .handle_request(self.now, &head, request.body.clone(), [self.seed; 16]);
        let headers: Vec<(&str, &str)> = resp
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let id = request.id;
        self.transport
            .handle_response_head(self.now, id, resp.status, headers);
        match resp.body {
            Body::Empty => self.transport.handle_response_end(self.now, id),
            Body::Full(bytes) => {
                self.transport.handle_response_body(self.now, id, bytes);
                self.transport.handle_response_end(self.now, id);
            }
            Body::Stream(stream) => self.open.push((id, stream)),
        }
    }

    fn abort(&mut self, id: ExchangeId) {
        if let Some(at) = self.open.iter().position(|(x, _)| *x == id) {
            let (_, stream) = self.open.remove(at);
            self.ep.stream_closed(stream);
        }
    }

    fn pump_streams(&mut self) -> bool {
        let mut moved = false;
        let mut buf = Vec::new();
        let mut i = 0;
        while i < self.open.len() {
            let (id, stream) = self.open[i];
            match self.ep.poll_stream(stream, &mut buf) {
                Some(StreamChunk::Data { .. }) => {
                    moved = true;
                    self.transport
                        .handle_response_body(self.now, id, Bytes::copy_from_slice(&buf));
                    buf.clear();
                }
                Some(StreamChunk::End) => {
                    moved = true;
                    self.open.remove(i);
                    self.transport.handle_response_end(self.now, id);
                }
                None => i += 1,
            }
        }
        moved
    }

    /// The connection of a streamed response breaks (the server sees the client go away).
    pub fn break_stream(&mut self, id: ExchangeId) {
        self.abort(id);
        self.transport
            .handle_response_failed(self.now, id, "connection reset");
        self.step();
    }

    /// Advances the virtual clock by `by`, firing every deadline on the way.
    pub fn advance(&mut self, by: Duration) {
        let end = self.now + by;
        for _ in 0..10_000 {
            let next = [
                self.transport.poll_timeout(),
                self.client.poll_timeout(),
                self.ep.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .filter(|t| *t <= end)
            .min();
            let Some(at) = next else { break };
            self.now = self.now.max(at);
            self.transport.handle_timeout(self.now);
            self.client.handle_timeout(self.now);
            self.ep.handle_timeout(self.now);
            self.step();
        }
        self.now = end;
        self.step();
    }

    /// Runs `fut` (a `ClientHandle` call) to completion, stepping the network in between.
    pub fn run<T>(&mut self, fut: impl Future<Output = T>) -> T {
        let mut fut: Pin<Box<dyn Future<Output = T> + '_>> = Box::pin(fut);
        let mut cx = Context::from_waker(Waker::noop());
        for _ in 0..1000 {
            if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
                return out;
            }
            self.step();
            if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
                return out;
            }
            self.advance(Duration::from_millis(100));
        }
        panic!("the call never finished");
    }

    /// Opens every gate of the `wait` tool.
    pub fn open_gates(&mut self) {
        for gate in self.gates.lock().unwrap().drain(..) {
            gate.send(());
        }
        self.step();
    }

    /// The requests sent with `method`, in order.
    pub fn sent_with(&self, method: HttpMethod) -> Vec<&OutgoingRequest> {
        self.sent
            .iter()
            .map(|(_, r)| r)
            .filter(|r| r.method == method)
            .collect()
    }

    /// The streamed exchange carrying the POST whose body contains `needle`.
    pub fn stream_of(&self, needle: &str) -> ExchangeId {
        let id = self
            .sent
            .iter()
            .rev()
            .find(|(_, r)| std::str::from_utf8(&r.body).unwrap().contains(needle))
            .map(|(_, r)| r.id)
            .expect("request sent");
        assert!(self.open.iter().any(|(x, _)| *x == id), "not streaming");
        id
    }
}
