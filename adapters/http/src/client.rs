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
mod driver;
mod endpoint_url;
mod exchange;
mod fields;
mod frames;
mod inflight;
mod pool;
mod repoll;
mod stateless;
mod tcp;
mod wake;
mod wire;

pub use authorize::{AuthorizeFuture, ClientAuthorization, CodeStep};
pub use auto::{connect_auto_client, AutoRunReport, McpAutoClient, TransportChoice};
pub use stateless::{block_on_stateless_http, StatelessHttp};

use std::future::Future;
use std::io;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mcp_sansio::app::client::{Client, ClientBuilder, ClientEvent, ClientHandle};
use mcp_sansio::http::client::HttpClientStats;
use mcp_sansio::http::{HttpClient, HttpClientConfig, TransportEvent};
use mcp_sansio::session::Stats;
use smol::LocalExecutor;

use driver::{drive, Sinks};
use endpoint_url::{connect_addr, endpoint_parts, parse_endpoint};
use exchange::Target;
use repoll::Repoll;

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
    /// Where every request head and body, response status line and body, and server-sent
    /// event goes (docs/trace.md). Default none: nothing is traced.
    pub trace: Option<crate::HttpTrace>,
    /// More URLs of the same endpoint, served by other instances sharing the sessions
    /// (docs/scale-out.md): each request goes to the next of the URL given and these, in
    /// turn, as a load balancer without sticky sessions would send it. Only their host and
    /// port are used; the path and the `Host` header are the first URL's. Default none.
    pub rotate_urls: Vec<String>,
}

impl Default for HttpClientOptions {
    fn default() -> Self {
        HttpClientOptions {
            transport: HttpClientConfig::default(),
            bearer_token: None,
            authorization: None,
            max_idle_connections: 64,
            close_timeout: Duration::from_secs(2),
            trace: None,
            rotate_urls: Vec::new(),
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
            .field("trace", &self.trace)
            .field("rotate_urls", &self.rotate_urls)
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

/// hyper's response headers as the core takes them (values that are not text are skipped).
pub(crate) fn header_pairs(headers: &hyper::HeaderMap) -> impl Iterator<Item = (&str, &str)> {
    headers
        .iter()
        .filter_map(|(n, v)| Some((n.as_str(), v.to_str().ok()?)))
}

/// An MCP client for one Streamable HTTP endpoint, ready to run.
pub struct McpHttpClient {
    target: Target,
    addrs: Vec<String>,
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
    let (addr, authority, path) = endpoint_parts(&parse_endpoint(url)?);
    let mut addrs = vec![addr];
    for more in &options.rotate_urls {
        addrs.push(connect_addr(&parse_endpoint(more)?));
    }
    let target = Target::new(authority, path, &options);
    Ok(McpHttpClient {
        target,
        addrs,
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
        Repoll::new(executor.run(run_http(self, ex, app))).await
    }

    /// [`McpHttpClient::run`], blocking the calling thread.
    pub fn block_on<F: Future>(self, app: F) -> io::Result<(F::Output, HttpRunReport)> {
        smol::block_on(self.run(app))
    }
}

async fn run_http<F: Future>(
    this: McpHttpClient,
    executor: Rc<LocalExecutor<'static>>,
    app: F,
) -> io::Result<(F::Output, HttpRunReport)> {
    let McpHttpClient {
        target,
        addrs,
        client,
        options,
        on_event,
        mut on_transport_event,
    } = this;
    let transport = HttpClient::new(options.transport.clone());
    let sinks = Sinks {
        on_event,
        // The Streamable transport ends the app client itself (every request fails once).
        on_transport_event: Box::new(move |event| {
            on_transport_event(event);
            None
        }),
    };
    let (output, end) = drive(
        transport, client, target, addrs, &options, sinks, executor, app,
    )
    .await?;
    let report = HttpRunReport {
        stats: end.transport.stats().clone(),
        connections_opened: end.connections_opened,
        closed: end.transport.is_closed(),
        session: end.client.session().stats().clone(),
    };
    Ok((output, report))
}
