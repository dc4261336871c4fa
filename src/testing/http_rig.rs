//! [`HttpRig`]: a Streamable HTTP [`Endpoint`] of app servers fed HTTP-shaped requests on a
//! virtual clock. It supplies each request's random bytes (a counter, so session ids are
//! predictable), keeps the handler jobs the endpoint hands out, and reads response bodies
//! back as JSON-RPC messages or SSE events.

use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{json, Value};

use super::Jobs;
use crate::app::server::Server;
use crate::framing::{SseDecoder, SseItem};
use crate::http::{
    Body, Endpoint, EndpointConfig, HttpMethod, HttpRequestHead, HttpResponse, StreamChunk,
};

/// Bytes one [`HttpRig::read_stream`] call reads at most.
const MAX_STREAM_READ: usize = 1 << 24;

/// What a response stream held when it was read.
#[derive(Debug, Default)]
pub struct StreamRead {
    /// Its SSE events as (event id, data), in order (priming events have empty data).
    pub events: Vec<(String, String)>,
    /// Whether the stream ended.
    pub ended: bool,
}

impl StreamRead {
    /// The JSON-RPC messages among the events (events with data).
    pub fn messages(&self) -> Vec<Value> {
        self.events
            .iter()
            .filter(|(_, data)| !data.is_empty())
            .map(|(_, data)| serde_json::from_str(data).expect("an SSE event that is not JSON"))
            .collect()
    }
}

/// An HTTP endpoint serving app servers, driven in memory. See the module docs.
pub struct HttpRig {
    /// The endpoint under test.
    pub endpoint: Endpoint<Server>,
    /// Handler jobs the endpoint handed out and that have not finished.
    pub jobs: Jobs,
    /// The virtual time: [`advance`](Self::advance) moves it and fires the timers due; a test
    /// may also set it and call `handle_timeout` itself.
    pub now: Instant,
    seed: u8,
}

impl HttpRig {
    /// An endpoint with `config` whose sessions are built by `factory`, at virtual time `now`.
    pub fn new(
        config: EndpointConfig,
        factory: impl FnMut(Instant) -> Server + Send + 'static,
        now: Instant,
    ) -> HttpRig {
        HttpRig {
            endpoint: Endpoint::new(config, factory),
            jobs: Jobs::new(),
            now,
            seed: 0,
        }
    }

    /// Moves the clock by `by`, fires the endpoint's due timers and collects its jobs (not
    /// run: see [`HttpRig::run_jobs`]).
    pub fn advance(&mut self, by: Duration) {
        self.now += by;
        self.endpoint.handle_timeout(self.now);
        self.collect_jobs();
    }

    /// Hands one request to the endpoint with the next random bytes (`[n; 16]` for the n-th
    /// request) and collects the jobs it made (not run).
    pub fn request(&mut self, head: &HttpRequestHead, body: impl Into<Bytes>) -> HttpResponse {
        self.seed = self.seed.wrapping_add(1);
        let response = self
            .endpoint
            .handle_request(self.now, head, body.into(), [self.seed; 16]);
        self.collect_jobs();
        response
    }

    /// A POST of `body` to `/mcp` with the headers a Streamable HTTP client sends (Host,
    /// Accept of both types, JSON content) and `Mcp-Session-Id` when `session` is given.
    pub fn post(&mut self, session: Option<&str>, body: &Value) -> HttpResponse {
        let mut head = HttpRig::post_head();
        if let Some(session) = session {
            head = head.header("Mcp-Session-Id", session);
        }
        self.request(&head, body.to_string())
    }

    /// The head [`HttpRig::post`] sends, for tests that add or change headers.
    pub fn post_head() -> HttpRequestHead {
        HttpRequestHead::new(HttpMethod::Post, "/mcp")
            .header("Host", "localhost:3000")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
    }

    /// The head of a 2026-07-28 POST of `body`: the POST headers plus `MCP-Protocol-Version`,
    /// `Mcp-Method` and `Mcp-Name`: `name` if given, else mirrored from the body (its
    /// `params.name`, `params.uri` or `params.taskId`).
    pub fn stateless_head(body: &Value, name: Option<&str>) -> HttpRequestHead {
        let method = body["method"].as_str().unwrap_or_default();
        let head = HttpRig::post_head()
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method);
        let params = &body["params"];
        let mirrored = ["name", "uri", "taskId"]
            .iter()
            .find_map(|key| params[key].as_str());
        match name.or(mirrored) {
            Some(name) => head.header("Mcp-Name", name),
            None => head,
        }
    }

    /// A 2026-07-28 POST of `body` ([`HttpRig::stateless_head`]), its jobs then run once.
    pub fn post_stateless(&mut self, body: &Value) -> HttpResponse {
        let response = self.request(&HttpRig::stateless_head(body, None), body.to_string());
        self.run_jobs();
        response
    }

    /// A GET of the session's stream, resuming after `last_event_id` when given.
    pub fn get(&mut self, session: &str, last_event_id: Option<&str>) -> HttpResponse {
        let mut head = HttpRequestHead::new(HttpMethod::Get, "/mcp")
            .header("Host", "localhost:3000")
            .header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", session);
        if let Some(id) = last_event_id {
            head = head.header("Last-Event-ID", id);
        }
        self.request(&head, Bytes::new())
    }

    /// `initialize` at `version` then `notifications/initialized`; returns the session id.
    /// Panics if the endpoint refuses either.
    pub fn open(&mut self, version: &str) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "rig", "version": "1"}}});
        let response = self.post(None, &init);
        assert_eq!(response.status, 200, "initialize: {}", response.body_text());
        let session = response
            .get("mcp-session-id")
            .expect("a session id")
            .to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = self.post(Some(&session), &initialized);
        assert_eq!(
            response.status,
            202,
            "initialized: {}",
            response.body_text()
        );
        session
    }

    /// Polls every pending job once (collecting new ones first).
    pub fn run_jobs(&mut self) {
        self.collect_jobs();
        self.jobs.run();
    }

    /// Everything a streamed body has now (its events, whether it ended). Panics if `body`
    /// is not a stream.
    pub fn read_stream(&mut self, body: &Body) -> StreamRead {
        let Body::Stream(id) = body else {
            panic!("not a stream: {body:?}")
        };
        let mut bytes = Vec::new();
        let mut ended = false;
        while let Some(chunk) = self.endpoint.poll_stream(*id, &mut bytes) {
            if chunk == StreamChunk::End {
                ended = true;
                break;
            }
            assert!(
                bytes.len() <= MAX_STREAM_READ,
                "a stream that does not pause"
            );
        }
        let mut decoder = SseDecoder::new(MAX_STREAM_READ);
        decoder.push(&bytes);
        let mut events = Vec::new();
        while let Some(item) = decoder.poll_item() {
            if let Ok(SseItem::Event(e)) = item {
                events.push((e.id.clone(), e.data_str().to_owned()));
            }
        }
        StreamRead { events, ended }
    }

    /// The JSON-RPC messages of a response: its JSON body, or what its stream has now.
    pub fn messages(&mut self, response: &HttpResponse) -> Vec<Value> {
        match &response.body {
            Body::Full(bytes) => vec![serde_json::from_slice(bytes).expect("a JSON body")],
            Body::Stream(_) => self.read_stream(&response.body).messages(),
            Body::Empty => Vec::new(),
        }
    }

    fn collect_jobs(&mut self) {
        while let Some(job) = self.endpoint.poll_job() {
            self.jobs.push(job);
        }
    }
}
