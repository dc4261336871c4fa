//! The inspector's MCP client: the `client` command's stdio and HTTP clients (Streamable
//! HTTP or HTTP+SSE, detected), run on a thread of their own with the protocol trace going to
//! the [`Feed`]. The page's requests reach the server through a [`Connection`]; the server's
//! elicitation, sampling and roots requests wait in [`Pending`] for the person to answer.

use std::ffi::OsString;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sansio::app::client::USER_REJECTED;
use mcp_sansio::app::client::{CallOptions, Client, ClientBuilder, ClientEvent, ClientHandle};
use mcp_sansio::jsonrpc::{ErrorObject, RawJson};
use mcp_sansio::model::{Implementation, InitializeResult, ListRootsResult, Root};
use mcp_sansio_http::client::{connect_auto_client, HttpClientOptions, TransportChoice};
use mcp_sansio_http::HttpTrace;
use mcp_sansio_stdio::StderrMode;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::feed::{Feed, FeedSink};
use super::pending::Pending;
use crate::client_cmd::{client_config, collect_pages, describe, http_transport_config};

/// Where the inspected server is.
pub(crate) enum Target {
    /// A child process: program and arguments.
    Stdio(Vec<OsString>, StderrMode),
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
                "protocolVersion": init.protocol_version,
                "serverInfo": init.server_info,
                "capabilities": init.capabilities,
                "instructions": init.instructions,
            })),
            Err(error) => self.set(json!({"status": "failed", "error": error})),
        }
    }

    fn on_event(&self, event: &ClientEvent) {
        if let Some(reason) = event.close_description() {
            self.set(json!({"status": "closed", "error": reason}));
        }
    }
}

/// The page's way to the server.
#[derive(Clone)]
pub(crate) struct Connection {
    handle: ClientHandle,
    timeout: Duration,
    /// The roots offered to the server (the Roots tab), shown on its `roots/list` cards.
    offered: Offered,
    pub(crate) state: State,
    pub(crate) pending: Pending,
}

/// The roots offered to the server, shared with the roots handler.
type Offered = Arc<Mutex<Vec<Root>>>;

impl Connection {
    /// Starts the client for `target` on a thread of its own and runs the handshake there;
    /// returns once the client exists (the handshake's outcome shows in the state).
    pub(crate) fn start(
        target: Target,
        feed: &Feed,
        timeout: Duration,
        roots: Vec<Root>,
    ) -> Result<Connection, String> {
        let pending = Pending::new(feed.clone(), timeout);
        let offered: Offered = Arc::new(Mutex::new(roots));
        let builder = builder(&pending, &offered, timeout);
        let state = State::new(feed.clone(), describe_target(&target));
        let (tx, rx) = std::sync::mpsc::channel();
        let (feed, run_state) = (feed.clone(), state.clone());
        std::thread::Builder::new()
            .name("inspect-client".into())
            .spawn(move || run(target, builder, feed, run_state, tx))
            .map_err(|e| format!("cannot start the client thread: {e}"))?;
        let handle = rx
            .recv()
            .map_err(|_| "the client thread ended".to_owned())??;
        Ok(Connection {
            handle,
            timeout,
            offered,
            state,
            pending,
        })
    }

    /// Runs `method` with `params` (list methods follow `nextCursor` to the end): the result,
    /// or a one-line account of what failed.
    pub(crate) fn request(&self, method: &str, params: Option<Value>) -> Result<Value, String> {
        let call = |params: Option<Value>| {
            let raw = params.and_then(|p| RawJson::from_serialize(&p).ok());
            let options = CallOptions {
                timeout: Some(self.timeout),
                ..CallOptions::default()
            };
            self.handle.request_raw(method, raw, options)
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

    /// Replaces the roots offered to the server (it is told the list changed).
    pub(crate) fn set_roots(&self, roots: Vec<Root>) {
        *self.offered.lock().unwrap_or_else(|p| p.into_inner()) = roots.clone();
        self.handle.set_roots(roots);
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

type Started = std::sync::mpsc::Sender<Result<ClientHandle, String>>;

/// The client thread: connects, hands the handle back, runs the handshake, then drives the
/// client until the process ends or the server goes away.
fn run(target: Target, builder: ClientBuilder, feed: Feed, state: State, started: Started) {
    let events = state.clone();
    let outcome = match target {
        Target::Stdio(command, stderr) => {
            let Some((program, args)) = command.split_first() else {
                let _ = started.send(Err("missing the server command".into()));
                return;
            };
            let client = match crate::client_cmd::connect_stdio(program, args, stderr, builder) {
                Ok(client) => client,
                Err(e) => {
                    let name = program.to_string_lossy();
                    let _ = started.send(Err(format!("cannot start the server `{name}`: {e}")));
                    return;
                }
            };
            let sink = FeedSink {
                feed,
                transport: "stdio",
            };
            let client = client
                .on_trace(sink)
                .on_event(move |event| events.on_event(&event));
            let handle = client.handle();
            let _ = started.send(Ok(handle.clone()));
            client.block_on(session(handle, state.clone())).map(drop)
        }
        Target::Url(url, choice, bearer_token) => {
            let options = HttpClientOptions {
                bearer_token,
                transport: http_transport_config(),
                trace: Some(HttpTrace::new(FeedSink {
                    feed,
                    transport: "http",
                })),
                ..HttpClientOptions::default()
            };
            let client = match connect_auto_client(&url, builder, options, choice) {
                Ok(client) => client,
                Err(e) => {
                    let _ = started.send(Err(e.to_string()));
                    return;
                }
            };
            let wire = state.clone();
            let client = client
                .on_event(move |event| events.on_event(&event))
                .on_wire_event(move |event| {
                    if let mcp_sansio::http::sse_transport::ClientEvent::Detected(kind) = event {
                        wire.set(json!({"transport": crate::client_http::transport_name(kind)}));
                    }
                });
            let handle = client.handle();
            let _ = started.send(Ok(handle.clone()));
            client.block_on(session(handle, state.clone())).map(drop)
        }
    };
    if let Err(e) = outcome {
        state.set(json!({"status": "closed", "error": e.to_string()}));
    }
}

/// The handshake, then an endless wait: the client serves the page's requests meanwhile.
async fn session(handle: ClientHandle, state: State) {
    let init = handle.initialize().await;
    state.initialized(init.map_err(|e| describe("initialize", &e)));
    std::future::pending::<()>().await;
}
