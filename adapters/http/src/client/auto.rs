//! The HTTP client that finds out which transport a server speaks (or is told): the app
//! [`Client`] runs over the core's [`AutoClient`] (POST `initialize`; on 400, 404 or 405 the
//! legacy GET + `endpoint` event, per the 2025-03-26 backwards-compatibility section), over
//! the legacy [`LegacyClient`], or over the Streamable [`HttpClient`], which also takes over a
//! session detection found to be Streamable. Thin like the rest: the core decides, this
//! module performs requests and moves bytes and time.
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

use std::future::Future;
use std::io;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::app::client::{Client, ClientBuilder, ClientEvent, ClientHandle};
use mcp_sansio::http::legacy::{
    AutoClient, ClientConfig, ClientEvent as WireEvent, CloseReason, LegacyClient, TransportKind,
};
use mcp_sansio::http::{HttpClient, TransportEvent};
use smol::{LocalExecutor, Timer};

use super::doorbell::Doorbell;
use super::endpoint_url::HttpUrl;
use super::exchange::{self, Input, Streamed, Target};
use super::inflight::InFlight;
use super::pool::Pool;
use super::repoll::Repoll;
use super::wake::{next_wake, Wake};
use super::wire::{Step, Wire};
use super::header_pairs;
use super::HttpClientOptions;

/// Which transport to speak.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TransportChoice {
    /// Find out: Streamable HTTP first, the legacy HTTP+SSE transport on 400/404/405.
    #[default]
    Auto,
    /// Streamable HTTP only (the URL is the MCP endpoint).
    Streamable,
    /// The legacy HTTP+SSE transport only (the URL is the SSE endpoint).
    Sse,
}

/// How [`McpAutoClient::run`] ended, besides the application's output.
#[derive(Clone, Debug, Default)]
pub struct AutoRunReport {
    /// The transport spoken: detected, or forced (`None`: detection never concluded).
    pub transport: Option<TransportKind>,
    /// TCP connections opened.
    pub connections_opened: u64,
    /// Why the last failed HTTP request failed (no connection, broken body), if one did.
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
    on_wire_event: Sink<WireEvent>,
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
    let endpoint = HttpUrl::parse(url)?;
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

    /// Delivers detection and legacy transport events (`Detected`, `Ready`, `PostFailed`,
    /// `Closed`) to `sink`.
    pub fn on_wire_event(mut self, sink: impl FnMut(WireEvent) + 'static) -> Self {
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
        Repoll::new(executor.run(drive(self, ex, app))).await
    }

    /// [`McpAutoClient::run`], blocking the calling thread.
    pub fn block_on<F: Future>(self, app: F) -> io::Result<(F::Output, AutoRunReport)> {
        smol::block_on(self.run(app))
    }
}

/// The loop's state.
struct Loop {
    client: Client,
    wire: Wire,
    transport: Option<TransportKind>,
    last_failure: Option<String>,
    pool: Rc<Pool>,
    target: Rc<Target>,
    options: HttpClientOptions,
    executor: Rc<LocalExecutor<'static>>,
    inflight: InFlight,
    on_event: Sink<ClientEvent>,
    on_wire_event: Sink<WireEvent>,
    on_transport_event: Sink<TransportEvent>,
    buf: Vec<u8>,
}

impl Loop {
    /// Moves everything that can move now, bounded per call.
    fn pump(&mut self, now: Instant) {
        for _ in 0..1_000_000 {
            let mut moved = false;
            while let Some(t) = self.client.poll_transmit(&mut self.buf) {
                moved = true;
                let frame = Bytes::copy_from_slice(&self.buf);
                self.buf.clear();
                self.wire.send(now, frame, t.kind);
            }
            while let Some(job) = self.client.poll_job() {
                self.executor.spawn(job).detach();
            }
            while let Some(step) = self.wire.poll() {
                moved = true;
                self.step(now, step);
            }
            if self.wire.hand_off(now, &self.options.transport) {
                moved = true;
            }
            while let Some(event) = self.client.poll_event() {
                (self.on_event)(event);
            }
            if !moved && !self.client.session().has_transmit() {
                return;
            }
        }
    }

    fn step(&mut self, now: Instant, step: Step) {
        match step {
            Step::Send(request) => {
                let key = request.id.0;
                let exchange = exchange::run(
                    self.pool.clone(),
                    self.target.clone(),
                    request,
                    self.inflight.inputs(),
                );
                self.inflight.start(key, exchange);
            }
            Step::Abort(key) => self.inflight.abort(key),
            // A decoding the transport made is handed on, not made again.
            Step::Frame(frame, Some(decoded)) => self.client.handle_decoded(now, &frame, decoded),
            Step::Frame(frame, None) => self.client.handle_input(now, frame),
            Step::Event(event) => {
                match &event {
                    WireEvent::Detected(kind) => self.transport = Some(*kind),
                    // The transport is gone: calls in flight fail now instead of timing out.
                    WireEvent::Closed(reason) if *reason != CloseReason::Local => {
                        self.client.close(now)
                    }
                    _ => {}
                }
                (self.on_wire_event)(event);
            }
            Step::Transport(event) => (self.on_transport_event)(event),
        }
    }

    fn input(&mut self, now: Instant, input: Input) {
        match input {
            Input::Streamed(Streamed::Head {
                id,
                status,
                headers,
            }) => self.wire.head(now, id.0, status, header_pairs(&headers)),
            Input::Whole {
                id,
                status,
                headers,
                body,
            } => {
                self.wire.head(now, id.0, status, header_pairs(&headers));
                if !body.is_empty() {
                    self.wire.body(now, id.0, body);
                }
                self.wire.end(now, id.0, None);
            }
            Input::Streamed(Streamed::Body { id, chunk }) => self.wire.body(now, id.0, chunk),
            Input::Streamed(Streamed::End { id }) => self.wire.end(now, id.0, None),
            Input::Streamed(Streamed::Failed { id, reason }) => {
                self.wire.end(now, id.0, Some(&reason));
                self.last_failure = Some(reason);
            }
        }
    }

    fn deadline(&self) -> Option<Instant> {
        [self.client.poll_timeout(), self.wire.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }
}

fn initial_wire(
    choice: TransportChoice,
    url: &str,
    options: &HttpClientOptions,
) -> io::Result<Wire> {
    let legacy = ClientConfig {
        max_event_size: options.transport.max_event_size,
        ..ClientConfig::default()
    };
    let bad = |e| io::Error::new(io::ErrorKind::InvalidInput, format!("bad URL {url}: {e:?}"));
    Ok(match choice {
        TransportChoice::Auto => Wire::Auto(Box::new(AutoClient::new(url, legacy).map_err(bad)?)),
        TransportChoice::Sse => Wire::Legacy(Box::new(
            LegacyClient::new(url, legacy, Instant::now(), 0).map_err(bad)?,
        )),
        TransportChoice::Streamable => {
            Wire::Streamable(Box::new(HttpClient::new(options.transport.clone())))
        }
    })
}

async fn drive<F: Future>(
    this: McpAutoClient,
    executor: Rc<LocalExecutor<'static>>,
    app: F,
) -> io::Result<(F::Output, AutoRunReport)> {
    let McpAutoClient {
        url,
        endpoint,
        mut client,
        options,
        choice,
        on_event,
        on_wire_event,
        on_transport_event,
    } = this;
    let wire = initial_wire(choice, &url, &options)?;
    let doorbell = Arc::new(Doorbell::default());
    let ring = doorbell.clone();
    client.set_waker(Arc::new(move || ring.ring()));
    let HttpUrl {
        addr,
        authority,
        path,
    } = endpoint;
    let pool = Rc::new(Pool::new(
        addr,
        options.max_idle_connections,
        executor.clone(),
    ));
    let transport = match choice {
        TransportChoice::Auto => None,
        TransportChoice::Streamable => Some(TransportKind::StreamableHttp),
        TransportChoice::Sse => Some(TransportKind::LegacySse),
    };
    let close_timeout = options.close_timeout;
    let mut state = Loop {
        client,
        wire,
        transport,
        last_failure: None,
        pool: pool.clone(),
        target: Rc::new(Target::new(authority, path, &options)),
        options,
        executor,
        inflight: InFlight::new(),
        on_event,
        on_wire_event,
        on_transport_event,
        buf: Vec::new(),
    };
    let mut app = std::pin::pin!(app);
    let mut output = None;
    let mut close_by = None;
    loop {
        let now = Instant::now();
        state.pump(now);
        if let Some(by) = close_by {
            if state.wire.is_closed() || now >= by {
                break;
            }
        }
        let deadline = [state.deadline(), close_by].into_iter().flatten().min();
        // A timer of its own per wait: this loop runs the detection and the legacy
        // transport, whose deadlines are few.
        let mut timer = deadline.map(Timer::at);
        let app_running = output.is_none().then_some(app.as_mut());
        let woke = next_wake(app_running, &mut state.inflight, &doorbell, timer.as_mut()).await;
        let now = Instant::now();
        match woke {
            Wake::App(out) => {
                output = Some(out);
                state.pump(now);
                state.client.close(now);
                state.pump(now);
                state.wire.close(now);
                close_by = Some(now + close_timeout);
            }
            Wake::Input(input) => {
                state.input(now, input);
                while let Some(more) = state.inflight.try_input() {
                    state.input(now, more);
                }
            }
            Wake::Woken => state.client.handle_wake(now),
            Wake::Timer => {
                state.client.handle_timeout(now);
                state.wire.handle_timeout(now);
            }
        }
    }
    let report = AutoRunReport {
        transport: state.transport,
        connections_opened: pool.opened(),
        last_failure: state.last_failure.take(),
    };
    state.inflight.clear();
    match output {
        Some(out) => Ok((out, report)),
        None => Err(io::Error::other(
            "the client loop ended before the application",
        )),
    }
}
