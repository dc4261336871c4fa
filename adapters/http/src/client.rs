//! The Streamable HTTP client on hyper 1 + smol: runs the app [`Client`] through the core's
//! [`HttpClient`] transport and performs the HTTP requests the transport asks for. Thin: every
//! header, retry and session decision is the core's; this module moves bytes and time.
//!
//! Connections are HTTP/1.1 keep-alive with TCP_NODELAY, pooled (N requests in flight use N
//! connections), response bodies are streamed chunk by chunk into the core, and an optional
//! bearer token goes on every request.
//!
//! ```no_run
//! use mcp_sansio::app::client::Client;
//! use mcp_sansio::model::Implementation;
//! use mcp_sansio_http::client::{connect_http_client, HttpClientOptions};
//!
//! let builder = Client::builder(Implementation::new("demo", "0.1.0"));
//! let client = connect_http_client("http://127.0.0.1:3000/mcp", builder, HttpClientOptions::default())?;
//! let handle = client.handle();
//! let (tools, _report) = client.block_on(async move {
//!     handle.initialize().await?;
//!     handle.list_all_tools().await
//! })?;
//! println!("{} tools", tools.map_err(std::io::Error::other)?.len());
//! # Ok::<(), std::io::Error>(())
//! ```

mod auth_http;
mod authorize;
mod auto;
mod doorbell;
mod endpoint_url;
mod exchange;
mod fields;
mod frames;
mod inflight;
mod modern;
mod pool;
mod repoll;
mod tcp;
mod wake;
mod wire;

pub use authorize::{AuthorizeFuture, ClientAuthorization, CodeStep};
pub use auto::{connect_auto_client, AutoRunReport, McpAutoClient, TransportChoice};
pub use modern::{block_on_modern_http, HttpListenStream, ModernHttpTransport, MAX_MODERN_BODY};

use std::future::Future;
use std::io;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::HeaderMap;
use mcp_sansio::app::client::{Client, ClientBuilder, ClientEvent, ClientHandle};
use mcp_sansio::http::client::HttpClientStats;
use mcp_sansio::http::{HttpClient, HttpClientConfig, TransportEvent};
use mcp_sansio::outgoing::{Action, ExchangeId};
use mcp_sansio::session::Stats;
use smol::{LocalExecutor, Timer};

use doorbell::Doorbell;
use endpoint_url::HttpUrl;
use exchange::{Input, Streamed, Target};
use frames::Frames;
use inflight::InFlight;
use pool::Pool;
use repoll::Repoll;
use wake::{next_wake, Wake};

/// Options of the HTTP client. `Debug` never prints the bearer token.
#[derive(Clone)]
pub struct HttpClientOptions {
    /// The core transport's limits and switches.
    pub transport: HttpClientConfig,
    /// Sent as `Authorization: Bearer <token>` on every request.
    pub bearer_token: Option<String>,
    /// OAuth: obtain the bearer token when the server challenges (401, 403
    /// `insufficient_scope`), then retry; replaces `bearer_token`. See `docs/auth.md`.
    pub authorization: Option<ClientAuthorization>,
    /// Idle keep-alive connections kept at most. Default 64.
    pub max_idle_connections: usize,
    /// How long `run` waits for the DELETE of the session after the application finished.
    /// Default 2 s.
    pub close_timeout: Duration,
}

impl Default for HttpClientOptions {
    fn default() -> Self {
        HttpClientOptions {
            transport: HttpClientConfig::default(),
            bearer_token: None,
            authorization: None,
            max_idle_connections: 64,
            close_timeout: Duration::from_secs(2),
        }
    }
}

impl std::fmt::Debug for HttpClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientOptions")
            .field("transport", &self.transport)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "[redacted]"),
            )
            .field("authorization", &self.authorization)
            .field("max_idle_connections", &self.max_idle_connections)
            .field("close_timeout", &self.close_timeout)
            .finish()
    }
}

/// How [`McpHttpClient::run`] ended, besides the application's output.
#[derive(Clone, Debug)]
pub struct HttpRunReport {
    /// The transport's counters.
    pub stats: HttpClientStats,
    /// TCP connections opened.
    pub connections_opened: u64,
    /// Whether the session was closed cleanly (DELETE answered, or no session to delete).
    pub closed: bool,
    /// The client session's counters (responses that matched no request, came late, ...).
    pub session: Stats,
}

type ClientSink = Box<dyn FnMut(ClientEvent)>;
type TransportSink = Box<dyn FnMut(TransportEvent)>;

/// An MCP client for one Streamable HTTP endpoint, ready to run.
pub struct McpHttpClient {
    target: Target,
    addr: String,
    client: Client,
    options: HttpClientOptions,
    on_event: ClientSink,
    on_transport_event: TransportSink,
}

/// Prepares a client for the endpoint at `url` (`http://host:port/path`; no TLS). Nothing is
/// sent before [`McpHttpClient::run`].
pub fn connect_http_client(
    url: &str,
    builder: ClientBuilder,
    options: HttpClientOptions,
) -> io::Result<McpHttpClient> {
    let HttpUrl {
        addr,
        authority,
        path,
    } = HttpUrl::parse(url)?;
    let target = Target::new(authority, path, &options);
    Ok(McpHttpClient {
        target,
        addr,
        client: builder.build(Instant::now()),
        options,
        on_event: Box::new(|_| {}),
        on_transport_event: Box::new(|_| {}),
    })
}

impl McpHttpClient {
    /// A handle for typed calls (Clone + Send): use it inside the future given to `run`.
    pub fn handle(&self) -> ClientHandle {
        self.client.handle()
    }

    /// Delivers server notifications and lifecycle events to `sink` (inside the loop).
    pub fn on_event(mut self, sink: impl FnMut(ClientEvent) + 'static) -> Self {
        self.on_event = Box::new(sink);
        self
    }

    /// Delivers transport events (session expired, re-initialized, no GET stream, closed).
    pub fn on_transport_event(mut self, sink: impl FnMut(TransportEvent) + 'static) -> Self {
        self.on_transport_event = Box::new(sink);
        self
    }

    /// Drives the client while `app` runs; when `app` finishes, closes the session (DELETE,
    /// bounded by `close_timeout`) and returns `app`'s output.
    pub async fn run<F: Future>(self, app: F) -> io::Result<(F::Output, HttpRunReport)> {
        let executor = Rc::new(LocalExecutor::new());
        let ex = executor.clone();
        // Self-wakes (answers, the next call, hyper's tasks) polled again at once.
        Repoll::new(executor.run(drive(self, ex, app))).await
    }

    /// [`McpHttpClient::run`], blocking the calling thread.
    pub fn block_on<F: Future>(self, app: F) -> io::Result<(F::Output, HttpRunReport)> {
        smol::block_on(self.run(app))
    }
}

/// The loop's state: the machine, the transport and the exchanges in flight.
struct Loop {
    client: Client,
    transport: HttpClient,
    pool: Rc<Pool>,
    target: Rc<Target>,
    executor: Rc<LocalExecutor<'static>>,
    inflight: InFlight,
    on_event: ClientSink,
    on_transport_event: TransportSink,
    buf: Vec<u8>,
    /// Where outgoing frames are copied to (no allocation per frame).
    frames: Frames,
}

impl Loop {
    /// Moves everything that can move now (the drive-loop contract), bounded per call.
    fn pump(&mut self, now: Instant) {
        for _ in 0..1_000_000 {
            let mut moved = false;
            while let Some(t) = self.client.poll_transmit(&mut self.buf) {
                moved = true;
                let frame = self.frames.frame(&self.buf);
                self.buf.clear();
                self.transport.handle_transmit(now, frame, t.kind);
            }
            while let Some(job) = self.client.poll_job() {
                self.executor.spawn(job).detach();
            }
            while let Some(action) = self.transport.poll_action() {
                moved = true;
                self.act(action);
            }
            // The transport decoded the answers to see which requests they end: the machine
            // takes that decoding instead of decoding each frame again.
            while let Some((frame, decoded)) = self.transport.poll_frame() {
                moved = true;
                match decoded {
                    Some(incoming) => self.client.handle_decoded(now, &frame, incoming),
                    None => self.client.handle_input(now, frame),
                }
            }
            while let Some(event) = self.transport.poll_event() {
                (self.on_transport_event)(event);
            }
            while let Some(event) = self.client.poll_event() {
                (self.on_event)(event);
            }
            if !moved && !self.client.session().has_transmit() {
                return;
            }
        }
    }

    fn act(&mut self, action: Action) {
        match action {
            Action::Send(request) => {
                let id = request.id;
                let exchange = exchange::run(
                    self.pool.clone(),
                    self.target.clone(),
                    request,
                    self.inflight.inputs(),
                );
                self.inflight.start(id.0, exchange);
            }
            // Dropping the exchange drops its connection and body.
            Action::Abort(id) => self.inflight.abort(id.0),
        }
    }

    fn input(&mut self, now: Instant, input: Input) {
        match input {
            Input::Whole {
                id,
                status,
                headers,
                body,
            } => self.whole(now, id, status, headers, body),
            Input::Streamed(streamed) => self.streamed_input(now, streamed),
        }
    }

    /// A whole response: head, body and end.
    fn whole(
        &mut self,
        now: Instant,
        id: ExchangeId,
        status: u16,
        headers: HeaderMap,
        body: Bytes,
    ) {
        self.transport
            .handle_response_head(now, id, status, header_pairs(&headers));
        if !body.is_empty() {
            // Handed over as shared bytes: a JSON answer is not copied again.
            self.transport.handle_response_body(now, id, body);
        }
        self.transport.handle_response_end(now, id);
    }

    /// The inputs of a streamed response (an SSE stream, a body of unknown length) and
    /// failures: out of line, so the common whole answer's code stays small.
    #[cold]
    #[inline(never)]
    fn streamed_input(&mut self, now: Instant, input: Streamed) {
        match input {
            Streamed::Head {
                id,
                status,
                headers,
            } => {
                self.transport
                    .handle_response_head(now, id, status, header_pairs(&headers));
            }
            Streamed::Body { id, chunk } => self.transport.handle_response_body(now, id, chunk),
            Streamed::End { id } => self.transport.handle_response_end(now, id),
            Streamed::Failed { id, reason } => {
                self.transport.handle_response_failed(now, id, &reason)
            }
        }
    }

    fn deadline(&self) -> Option<Instant> {
        match (self.client.poll_timeout(), self.transport.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn timeout(&mut self, now: Instant) {
        self.client.handle_timeout(now);
        self.transport.handle_timeout(now);
    }
}

/// hyper's response headers as the core takes them (values that are not text are skipped,
/// as before).
pub(crate) fn header_pairs(headers: &hyper::HeaderMap) -> impl Iterator<Item = (&str, &str)> {
    headers
        .iter()
        .filter_map(|(n, v)| Some((n.as_str(), v.to_str().ok()?)))
}

async fn drive<F: Future>(
    this: McpHttpClient,
    executor: Rc<LocalExecutor<'static>>,
    app: F,
) -> io::Result<(F::Output, HttpRunReport)> {
    let McpHttpClient {
        target,
        addr,
        mut client,
        options,
        on_event,
        on_transport_event,
    } = this;
    let doorbell = Arc::new(Doorbell::default());
    let ring = doorbell.clone();
    client.set_waker(Arc::new(move || ring.ring()));
    let pool = Rc::new(Pool::new(
        addr,
        options.max_idle_connections,
        executor.clone(),
    ));
    let mut state = Loop {
        client,
        transport: HttpClient::new(options.transport.clone()),
        pool: pool.clone(),
        target: Rc::new(target),
        executor,
        inflight: InFlight::new(),
        on_event,
        on_transport_event,
        buf: Vec::new(),
        frames: Frames::default(),
    };
    let mut app = std::pin::pin!(app);
    let mut output = None;
    let mut close_by = None;
    // One timer for the whole loop: arming an async-io timer wakes the reactor (an eventfd
    // write and an extra epoll round), and every request moves the deadline later. So the
    // timer is re-armed only when the deadline moves earlier; when it fires early, the
    // machines find nothing due and the loop arms it for the real deadline.
    let mut timer = Timer::never();
    let mut armed: Option<Instant> = None;
    loop {
        let now = Instant::now();
        state.pump(now);
        if let Some(by) = close_by {
            if state.transport.is_closed() || now >= by {
                break;
            }
        }
        let deadline = match (state.deadline(), close_by) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(at) = deadline {
            if armed.is_none_or(|armed_at| at < armed_at) {
                timer.set_at(at);
                armed = Some(at);
            }
        }
        let app_running = output.is_none().then_some(app.as_mut());
        let woke = next_wake(
            app_running,
            &mut state.inflight,
            &doorbell,
            armed.is_some().then_some(&mut timer),
        )
        .await;
        let now = Instant::now();
        match woke {
            Wake::App(out) => {
                output = Some(out);
                state.pump(now);
                state.client.close(now);
                state.pump(now);
                state.transport.close(now);
                close_by = Some(now + options.close_timeout);
            }
            Wake::Input(input) => {
                state.input(now, input);
                // Take whatever else already arrived before pumping (fewer wake-ups).
                while let Some(more) = state.inflight.try_input() {
                    state.input(now, more);
                }
            }
            Wake::Woken => state.client.handle_wake(now),
            Wake::Timer => {
                armed = None;
                state.timeout(now);
            }
        }
    }
    let report = HttpRunReport {
        stats: state.transport.stats().clone(),
        connections_opened: pool.opened(),
        closed: state.transport.is_closed(),
        session: state.client.session().stats().clone(),
    };
    state.inflight.clear();
    match output {
        Some(out) => Ok((out, report)),
        None => Err(io::Error::other(
            "the client loop ended before the application",
        )),
    }
}
