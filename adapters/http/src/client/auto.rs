//! The HTTP client that finds out which transport a server speaks (or is told): the app
//! [`Client`] runs over the core's [`AutoClient`] (POST `initialize`; on 400, 404 or 405 the
//! HTTP+SSE GET + `endpoint` event, per the 2025-03-26 backwards-compatibility section), over
//! the HTTP+SSE [`SseTransportClient`], or over the Streamable [`HttpClient`], which also takes over a
//! session detection found to be Streamable. Thin like the rest: the core decides, and the
//! one client loop (`driver.rs`, shared with [`McpHttpClient`](super::McpHttpClient)) performs
//! requests and moves bytes and time.
//!
//! ```no_run
//! use mcp_sansio::app::client::Client;
//! use mcp_sansio::model::Implementation;
//! use mcp_sansio_http::client::{connect_auto_client, HttpClientOptions, TransportChoice};
//!
//! let builder = Client::builder(Implementation::new("demo", "0.1.0"));
//! let url = "http://127.0.0.1:3000/sse";
//! let client = connect_auto_client(url, builder, HttpClientOptions::default(), TransportChoice::Auto)?
//!     .on_wire_event(|e| eprintln!("transport: {e:?}"));
//! let handle = client.handle();
//! let (_, report) = client.block_on(async move { handle.initialize().await })?;
//! eprintln!("spoke {:?}", report.transport);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::cell::Cell;
use std::future::Future;
use std::io;
use std::rc::Rc;
use std::time::Instant;

use mcp_sansio::app::client::{Client, ClientBuilder, ClientEvent, ClientHandle};
use mcp_sansio::http::sse_transport::{
    AutoClient, SseTransportClient, TransportCloseReason, TransportKind,
};
use mcp_sansio::http::{HttpClient, TransportEvent};
use smol::LocalExecutor;

use super::driver::{drive, Sinks};
use super::endpoint_url::{endpoint_parts, parse_endpoint};
use super::exchange::Target;
use super::repoll::Repoll;
use super::wire::{AnyEvent, Transport, Wire};
use super::HttpClientOptions;
use mcp_sansio::url::HttpUrl;

/// Which transport to speak.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TransportChoice {
    /// Find out: Streamable HTTP first, the HTTP+SSE transport on 400/404/405.
    #[default]
    Auto,
    /// Streamable HTTP only (the URL is the MCP endpoint).
    Streamable,
    /// The HTTP+SSE transport only (the URL is the SSE endpoint).
    Sse,
}

/// How [`McpAutoClient::run`] ended, besides the application's output.
#[derive(Clone, Debug, Default)]
pub struct AutoRunReport {
    /// The transport spoken: detected, or forced (`None`: detection never concluded).
    pub transport: Option<TransportKind>,
    /// TCP connections opened.
    pub connections_opened: u64,
    /// Why the last failed HTTP request failed (no connection, broken body), or why the
    /// HTTP+SSE transport closed under the client (`the HTTP transport closed: ...`), if one
    /// did.
    pub last_failure: Option<String>,
}

type Sink<T> = Box<dyn FnMut(T)>;

/// An MCP client for one HTTP URL, any transport, ready to run.
pub struct McpAutoClient {
    url: String,
    endpoint: HttpUrl,
    client: Client,
    options: HttpClientOptions,
    choice: TransportChoice,
    on_event: Sink<ClientEvent>,
    on_wire_event: Sink<TransportEvent>,
    on_transport_event: Sink<TransportEvent>,
}

/// Prepares a client for `url` (`http://host:port/path`; no TLS) speaking `choice`. Nothing
/// is sent before [`McpAutoClient::run`].
pub fn connect_auto_client(
    url: &str,
    builder: ClientBuilder,
    options: HttpClientOptions,
    choice: TransportChoice,
) -> io::Result<McpAutoClient> {
    let endpoint = parse_endpoint(url)?;
    Ok(McpAutoClient {
        url: url.to_owned(),
        endpoint,
        client: builder.build(Instant::now()),
        options,
        choice,
        on_event: Box::new(|_| {}),
        on_wire_event: Box::new(|_| {}),
        on_transport_event: Box::new(|_| {}),
    })
}

impl McpAutoClient {
    /// A handle for typed calls (Clone + Send): use it inside the future given to `run`.
    pub fn handle(&self) -> ClientHandle {
        self.client.handle()
    }

    /// Delivers server notifications and lifecycle events to `sink`.
    pub fn on_event(mut self, sink: impl FnMut(ClientEvent) + 'static) -> Self {
        self.on_event = Box::new(sink);
        self
    }

    /// Delivers detection and HTTP+SSE transport events (`Detected`, `Ready`, `PostFailed`,
    /// `Closed`) to `sink`.
    pub fn on_wire_event(mut self, sink: impl FnMut(TransportEvent) + 'static) -> Self {
        self.on_wire_event = Box::new(sink);
        self
    }

    /// Delivers the Streamable transport's events to `sink`.
    pub fn on_transport_event(mut self, sink: impl FnMut(TransportEvent) + 'static) -> Self {
        self.on_transport_event = Box::new(sink);
        self
    }

    /// Drives the client while `app` runs; when `app` finishes, closes the transport (bounded
    /// by `close_timeout`) and returns `app`'s output.
    pub async fn run<F: Future>(self, app: F) -> io::Result<(F::Output, AutoRunReport)> {
        let executor = Rc::new(LocalExecutor::new());
        let ex = executor.clone();
        // Self-wakes polled again at once (see `repoll`).
        Repoll::new(executor.run(run_auto(self, ex, app))).await
    }

    /// [`McpAutoClient::run`], blocking the calling thread.
    pub fn block_on<F: Future>(self, app: F) -> io::Result<(F::Output, AutoRunReport)> {
        smol::block_on(self.run(app))
    }
}

fn initial_transport(
    choice: TransportChoice,
    url: &str,
    options: &HttpClientOptions,
) -> io::Result<Transport> {
    let config = options.transport.clone();
    let bad = |e| io::Error::new(io::ErrorKind::InvalidInput, format!("bad URL {url}: {e:?}"));
    Ok(match choice {
        TransportChoice::Auto => {
            Transport::Auto(Box::new(AutoClient::new(url, config).map_err(bad)?))
        }
        TransportChoice::Sse => Transport::Sse(Box::new(
            SseTransportClient::new(url, config, Instant::now(), 0).map_err(bad)?,
        )),
        TransportChoice::Streamable => Transport::Streamable(Box::new(HttpClient::new(config))),
    })
}

async fn run_auto<F: Future>(
    this: McpAutoClient,
    executor: Rc<LocalExecutor<'static>>,
    app: F,
) -> io::Result<(F::Output, AutoRunReport)> {
    let McpAutoClient {
        url,
        endpoint,
        client,
        options,
        choice,
        on_event,
        mut on_wire_event,
        mut on_transport_event,
    } = this;
    let wire = Wire::new(
        initial_transport(choice, &url, &options)?,
        options.transport.clone(),
        Instant::now(),
    );
    let (addr, authority, path) = endpoint_parts(&endpoint);
    let detected = Rc::new(Cell::new(match choice {
        TransportChoice::Auto => None,
        TransportChoice::Streamable => Some(TransportKind::StreamableHttp),
        TransportChoice::Sse => Some(TransportKind::SseTransport),
    }));
    let seen = detected.clone();
    let sinks = Sinks {
        on_event,
        on_transport_event: Box::new(move |event| match event {
            AnyEvent::Wire(event) => {
                if let TransportEvent::Detected(kind) = &event {
                    seen.set(Some(*kind));
                }
                // The transport is gone: calls in flight fail now instead of timing out, and
                // the run's report says why.
                let gone = match &event {
                    TransportEvent::Closed(r) if *r != TransportCloseReason::Local => {
                        Some(format!("the HTTP transport closed: {r}"))
                    }
                    _ => None,
                };
                on_wire_event(event);
                gone
            }
            AnyEvent::Streamable(event) => {
                on_transport_event(event);
                None
            }
        }),
    };
    let target = Target::new(authority, path, &options);
    let (output, end) = drive(
        wire,
        client,
        target,
        vec![addr],
        &options,
        sinks,
        executor,
        app,
    )
    .await?;
    let report = AutoRunReport {
        transport: detected.get(),
        connections_opened: end.connections_opened,
        last_failure: end.last_failure,
    };
    Ok((output, report))
}
