//! The inspector's MCP client: the `client` command's stdio and HTTP clients (Streamable
//! HTTP or HTTP+SSE, detected), run on a thread of their own with the protocol trace going to
//! the [`Feed`]. The era is probed as `client` does (a 2026-07-28 `server/discover` first,
//! stateless.rs) unless `--era` names it. The page's requests reach the server through a
//! [`Connection`]; the server's elicitation, sampling and roots requests (or 2026-07-28 input
//! requests) wait in [`Pending`] for the person to answer.

use std::ffi::OsString;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcp_sansio::app::client::stateless::StatelessClient;
use mcp_sansio::app::client::USER_REJECTED;
use mcp_sansio::app::client::{CallOptions, Client, ClientBuilder, ClientEvent, ClientHandle};
use mcp_sansio::jsonrpc::{ErrorObject, RawJson};
use mcp_sansio::model::{Implementation, InitializeResult, ListRootsResult, Root};
use mcp_sansio_http::client::{
    block_on_stateless_http, connect_auto_client, HttpClientOptions, TransportChoice,
};
use mcp_sansio_http::HttpTrace;
use mcp_sansio_stdio::ChildProcess;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::feed::{Feed, FeedSink};
use super::pending::Pending;
use super::stateless::{self, Jobs, Probe};
use crate::args::{EraArg, StderrArg};
use crate::client_cmd::{client_config, collect_pages, describe, http_transport_config};
use crate::client_stateless::{HTTP_PROBE_TIMEOUT, STDIO_PROBE_TIMEOUT};
use crate::stateless_stdio::StatelessStdio;

/// Where the inspected server is.
pub(crate) enum Target {
    /// A child process: program and arguments.
    Stdio(Vec<OsString>, StderrArg),
    /// An HTTP endpoint, the transport to speak and the bearer token to send.
    Url(String, TransportChoice, Option<String>),
}

/// The connection panel's facts (`GET api/state`), announced on the feed when they change.
#[derive(Clone)]
pub(crate) struct State {
    value: Arc<Mutex<Map<String, Value>>>,
    feed: Feed,
}

impl State {
    fn new(feed: Feed, target: String) -> Self {
        let mut value = Map::new();
        value.insert("target".into(), target.into());
        value.insert("status".into(), "connecting".into());
        State {
            value: Arc::new(Mutex::new(value)),
            feed,
        }
    }

    /// The facts as JSON.
    pub(crate) fn get(&self) -> Value {
        Value::Object(self.value.lock().unwrap_or_else(|p| p.into_inner()).clone())
    }

    fn set(&self, fields: Value) {
        if let Value::Object(fields) = fields {
            let mut value = self.value.lock().unwrap_or_else(|p| p.into_inner());
            value.extend(fields);
        }
        self.feed.event("state", self.get());
    }

    fn initialized(&self, init: Result<InitializeResult, String>) {
        match init {
            Ok(init) => self.set(json!({
                "status": "connected",
                "era": "stateful",
                "protocolVersion": init.protocol_version,
                "serverInfo": init.server_info,
                "capabilities": init.capabilities,
                "instructions": init.instructions,
            })),
            Err(error) => self.set(json!({"status": "failed", "error": error})),
        }
    }

    /// The facts of a 2026-07-28 server, from its `server/discover` result.
    fn discovered(&self, version: &str, discover: &Value) {
        self.set(json!({
            "status": "connected",
            "era": "stateless",
            "protocolVersion": version,
            "supportedVersions": discover["supportedVersions"],
            "serverInfo": discover["_meta"]["io.modelcontextprotocol/serverInfo"],
            "capabilities": discover["capabilities"],
            "instructions": discover["instructions"],
        }));
    }

    /// The session's end: its error, if it ended with one, is shown.
    fn ended<T, E: std::fmt::Display>(&self, outcome: Result<T, E>) {
        if let Err(e) = outcome {
            self.set(json!({"status": "closed", "error": e.to_string()}));
        }
    }

    /// A transport event's line (if it is worth one) in the page's event log.
    fn log(&self, line: Option<String>) {
        if let Some(line) = line {
            self.feed.event("transport", json!({ "text": line }));
        }
    }

    fn on_event(&self, event: &ClientEvent) {
        if let Some(reason) = event.close_description() {
            self.set(json!({"status": "closed", "error": reason}));
        }
    }
}

/// How the page's requests reach the server, once the era is known.
#[derive(Clone)]
enum Route {
    /// A session after `initialize`.
    Session(ClientHandle),
    /// The 2026-07-28 worker, one request at a time.
    Stateless(Jobs),
}

/// The route, set once by the client thread.
type Routes = Arc<OnceLock<Route>>;

/// The page's way to the server.
#[derive(Clone)]
pub(crate) struct Connection {
    route: Routes,
    timeout: Duration,
    /// The roots offered to the server (the Roots tab), shown on its `roots/list` cards.
    offered: Offered,
    pub(crate) state: State,
    pub(crate) pending: Pending,
}

/// The roots offered to the server, shared with the roots handler.
type Offered = Arc<Mutex<Vec<Root>>>;

impl Connection {
    /// Starts the client for `target` on a thread of its own, probes the era there (or takes
    /// `era`) and runs the handshake or `server/discover`; returns once the server is started
    /// (the outcome shows in the state).
    pub(crate) fn start(
        target: Target,
        era: EraArg,
        feed: &Feed,
        timeout: Duration,
        roots: Vec<Root>,
    ) -> Result<Connection, String> {
        let pending = Pending::new(feed.clone(), timeout);
        let offered: Offered = Arc::new(Mutex::new(roots));
        let state = State::new(feed.clone(), describe_target(&target));
        let (tx, rx) = std::sync::mpsc::channel();
        let route = Routes::default();
        let run = Run {
            era,
            timeout,
            pending: pending.clone(),
            offered: offered.clone(),
            feed: feed.clone(),
            state: state.clone(),
            route: route.clone(),
            started: tx,
        };
        std::thread::Builder::new()
            .name("inspect-client".into())
            .spawn(move || run.run(target))
            .map_err(|e| format!("cannot start the client thread: {e}"))?;
        rx.recv()
            .map_err(|_| "the client thread ended".to_owned())??;
        Ok(Connection {
            route,
            timeout,
            offered,
            state,
            pending,
        })
    }

    /// Runs `method` with `params` (list methods follow `nextCursor` to the end): the result,
    /// or a one-line account of what failed.
    pub(crate) fn request(&self, method: &str, params: Option<Value>) -> Result<Value, String> {
        let handle = match self.route.get() {
            None => return Err(format!("{method}: not connected yet")),
            Some(Route::Stateless(jobs)) => return jobs.request(method, params),
            Some(Route::Session(handle)) => handle,
        };
        let call = |params: Option<Value>| {
            let raw = params.and_then(|p| RawJson::from_serialize(&p).ok());
            let options = CallOptions {
                timeout: Some(self.timeout),
                ..CallOptions::default()
            };
            handle.request_raw(method, raw, options)
        };
        smol::block_on(async {
            if method.ends_with("/list") {
                return collect_pages(method, params, call).await;
            }
            let raw = call(params).await.map_err(|e| describe(method, &e))?;
            raw.to_value()
                .map_err(|e| format!("{method}: unreadable result: {e}"))
        })
    }

    /// Replaces the roots offered to the server (a session is told the list changed; a
    /// 2026-07-28 server sees them when it next asks).
    pub(crate) fn set_roots(&self, roots: Vec<Root>) {
        *self.offered.lock().unwrap_or_else(|p| p.into_inner()) = roots.clone();
        if let Some(Route::Session(handle)) = self.route.get() {
            handle.set_roots(roots);
        }
    }
}

fn describe_target(target: &Target) -> String {
    match target {
        Target::Stdio(command, _) => {
            let words: Vec<String> = command
                .iter()
                .map(|w| w.to_string_lossy().into_owned())
                .collect();
            format!("stdio: {}", words.join(" "))
        }
        Target::Url(url, _, _) => url.clone(),
    }
}

/// The client's registrations: elicitation, sampling and `roots/list` ask the page (a roots
/// card shows the list the page's Roots tab offers).
fn builder(pending: &Pending, offered: &Offered, timeout: Duration) -> ClientBuilder {
    let (elicit, sample, list) = (pending.clone(), pending.clone(), pending.clone());
    let offered = offered.clone();
    Client::builder(Implementation::new(
        "mcp-sansio-inspect",
        env!("CARGO_PKG_VERSION"),
    ))
    .config(client_config(timeout))
    .elicitation(move |params, _| ask(elicit.clone(), "elicitation", params))
    .sampling(move |params, _| ask(sample.clone(), "sampling", params))
    .roots_handler(move |_| {
        let roots = offered.lock().unwrap_or_else(|p| p.into_inner()).clone();
        ask::<_, ListRootsResult>(list.clone(), "roots", json!({ "offered": roots }))
    })
}

/// Shows `params` to the person and reads their answer as `R`; a refusal is error -1.
async fn ask<P: Serialize, R: DeserializeOwned>(
    pending: Pending,
    kind: &'static str,
    params: P,
) -> Result<R, ErrorObject> {
    let params = serde_json::to_value(params).map_err(|e| ErrorObject::internal(e.to_string()))?;
    match pending.ask(kind, params).await {
        Ok(answer) => serde_json::from_value(answer)
            .map_err(|e| ErrorObject::internal(format!("the inspector's answer: {e}"))),
        Err(refusal) => Err(ErrorObject::new(USER_REJECTED, refusal)),
    }
}

type Started = std::sync::mpsc::Sender<Result<(), String>>;

/// The client thread's parts.
struct Run {
    era: EraArg,
    timeout: Duration,
    pending: Pending,
    offered: Offered,
    feed: Feed,
    state: State,
    route: Routes,
    started: Started,
}

/// What the 2026-07-28 attempt left to do.
enum Next {
    /// Nothing: the stateless worker ran (and ended).
    Done,
    /// The `initialize` client, on this child when the probe's pipes are clean.
    Stateful(Option<ChildProcess>),
}

impl Run {
    /// Connects, tells [`Connection::start`], probes the era, then drives the client until
    /// the process ends or the server goes away.
    fn run(self, target: Target) {
        // The HTTP+SSE transport predates 2026-07-28.
        let sse = matches!(&target, Target::Url(_, TransportChoice::Sse, _));
        let next = if self.era == EraArg::Stateful || sse {
            Next::Stateful(None)
        } else {
            match &target {
                Target::Stdio(command, stderr) => self.stateless_stdio(command, *stderr),
                Target::Url(url, _, token) => self.stateless_http(url, token.clone()),
            }
        };
        match (next, target) {
            (Next::Done, _) => {}
            (Next::Stateful(child), Target::Stdio(command, stderr)) => {
                self.stateful_stdio(&command, stderr, child)
            }
            (Next::Stateful(_), Target::Url(url, choice, token)) => {
                self.stateful_http(&url, choice, token)
            }
        }
    }

    /// A fresh builder with the page's handlers (each client takes one).
    fn builder(&self) -> ClientBuilder {
        builder(&self.pending, &self.offered, self.timeout)
    }

    fn sink(&self, transport: &'static str) -> FeedSink {
        FeedSink {
            feed: self.feed.clone(),
            transport,
        }
    }

    fn http_options(&self, bearer_token: Option<String>) -> HttpClientOptions {
        HttpClientOptions {
            bearer_token,
            transport: http_transport_config(),
            trace: Some(HttpTrace::new(self.sink("http"))),
            ..HttpClientOptions::default()
        }
    }

    /// Starts the child and speaks 2026-07-28 to it, when the probe (or `--era`) says so.
    fn stateless_stdio(&self, command: &[OsString], stderr: StderrArg) -> Next {
        let client = StatelessClient::new(&self.builder()).with_tasks();
        let wire = StatelessStdio::spawn(command, stderr, client, self.timeout);
        let wire = match wire {
            Ok(wire) => wire.on_trace(Some(self.sink("stdio"))),
            Err(e) => {
                let name = command[0].to_string_lossy();
                let _ = self
                    .started
                    .send(Err(format!("cannot start the server `{name}`: {e}")));
                return Next::Done;
            }
        };
        let _ = self.started.send(Ok(()));
        smol::block_on(async {
            let mut wire = wire;
            if self.stateless(&mut wire, STDIO_PROBE_TIMEOUT).await {
                wire.shutdown().await;
                return Next::Done;
            }
            // The refused probe's child gets the handshake when nothing of the probe can
            // still arrive on its pipes; otherwise the server is started again.
            Next::Stateful(wire.into_child().await)
        })
    }

    /// Speaks 2026-07-28 to the endpoint, when the probe (or `--era`) says so.
    fn stateless_http(&self, url: &str, bearer_token: Option<String>) -> Next {
        let client = StatelessClient::new(&self.builder()).with_tasks();
        let options = self.http_options(bearer_token);
        let ran = block_on_stateless_http(url, &options, client, self.timeout, |mut wire| {
            let _ = self.started.send(Ok(()));
            // 2026-07-28 is spoken only over Streamable HTTP POSTs.
            self.state.set(json!({"transport": "streamable"}));
            async move { self.stateless(&mut wire, HTTP_PROBE_TIMEOUT).await }
        });
        match ran {
            Ok(true) => Next::Done,
            Ok(false) => Next::Stateful(None),
            Err(e) => {
                let _ = self.started.send(Err(e.to_string()));
                Next::Done
            }
        }
    }

    /// Probes; on 2026-07-28 serves the page's requests until the inspector ends and returns
    /// true; false when the server only speaks the handshake era.
    async fn stateless<T: crate::client_stateless::Calls>(
        &self,
        wire: &mut T,
        probe: Duration,
    ) -> bool {
        match stateless::probe(wire, self.era, probe, self.timeout).await {
            Probe::Stateless(version, discover) => {
                let (jobs, queue) = stateless::queue();
                let _ = self.route.set(Route::Stateless(jobs));
                self.state.discovered(&version, &discover);
                stateless::serve(wire, queue).await;
                true
            }
            Probe::Stateful(why) => {
                self.feed
                    .event("era", json!({ "probe": why, "next": "initialize" }));
                false
            }
            Probe::Failed(why) => {
                self.state.set(json!({"status": "failed", "error": why}));
                std::future::pending::<()>().await;
                true
            }
        }
    }

    /// The client could not start: the page and the waiting `start` are told why.
    fn start_failed(self, why: String) {
        self.state
            .set(json!({"status": "failed", "error": why.clone()}));
        let _ = self.started.send(Err(why));
    }

    /// The `initialize` client over stdio, on `child` when given.
    fn stateful_stdio(self, command: &[OsString], stderr: StderrArg, child: Option<ChildProcess>) {
        let Some((program, args)) = command.split_first() else {
            let _ = self.started.send(Err("missing the server command".into()));
            return;
        };
        let builder = self.builder();
        let client = match child {
            Some(child) => crate::client_cmd::client_on(child, builder),
            None => crate::client_cmd::connect_stdio(program, args, stderr.mode(), builder),
        };
        let client = match client {
            Ok(client) => client,
            Err(e) => {
                let name = program.to_string_lossy();
                return self.start_failed(format!("cannot start the server `{name}`: {e}"));
            }
        };
        let events = self.state.clone();
        let client = client
            .on_trace(self.sink("stdio"))
            .on_event(move |event| events.on_event(&event));
        let handle = client.handle();
        let _ = self.route.set(Route::Session(handle.clone()));
        let _ = self.started.send(Ok(()));
        let outcome = client.block_on(session(handle, self.state.clone()));
        self.state.ended(outcome);
    }

    /// The `initialize` client over HTTP (Streamable HTTP or HTTP+SSE).
    fn stateful_http(self, url: &str, choice: TransportChoice, bearer_token: Option<String>) {
        let options = self.http_options(bearer_token);
        let client = match connect_auto_client(url, self.builder(), options, choice) {
            Ok(client) => client,
            Err(e) => return self.start_failed(e.to_string()),
        };
        let (events, wire, streamable) =
            (self.state.clone(), self.state.clone(), self.state.clone());
        let client = client
            .on_event(move |event| events.on_event(&event))
            .on_wire_event(move |event| {
                if let mcp_sansio::http::TransportEvent::Detected(kind) = event {
                    wire.set(json!({"transport": crate::client_http::transport_name(kind)}));
                }
                wire.log(crate::client_http::wire_event_line(&event, true));
            })
            .on_transport_event(move |event| {
                streamable.log(crate::client_http::transport_event_line(&event));
            });
        let handle = client.handle();
        let _ = self.route.set(Route::Session(handle.clone()));
        let _ = self.started.send(Ok(()));
        let outcome = client.block_on(session(handle, self.state.clone()));
        self.state.ended(outcome);
    }
}

/// The handshake, then an endless wait: the client serves the page's requests meanwhile.
async fn session(handle: ClientHandle, state: State) {
    let init = handle.initialize().await;
    state.initialized(init.map_err(|e| describe("initialize", &e)));
    std::future::pending::<()>().await;
}
