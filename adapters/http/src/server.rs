//! The HTTP server: hyper 1 (HTTP/1.1, keep-alive) on smol, running the core [`Router`] for
//! the application [`Server`] of each session: Streamable HTTP on `path` (default `/mcp`) and,
//! beside it, the HTTP+SSE pair of 2024-11-05 (default GET `/sse`, POST `/messages`).
//!
//! Everything runs on one thread: an accept loop (paused while `max_connections` are open:
//! connections that arrive then wait in the kernel's backlog, and the connection idle longest
//! is closed to make room, see `roster`), one task per connection (its
//! head, body, idle and write waits each bounded, see [`HttpServerOptions`]), the handler jobs
//! the sessions hand out, and a driver task that fires the endpoints' timers
//! ([`Router::poll_timeout`]) and reacts to handler wake-ups. Requests that arrive together are
//! handed to the endpoint in batches (see `staging`: each task parks its request and yields
//! once), so the code of each step stays in the instruction cache across a batch. Response
//! bodies are pulled from [`Router::poll_stream`] only when hyper can write more
//! (backpressure); after an event only those on a stream it can have changed
//! (`Router::touched_streams`) and not quiet (`Router::stream_quiet`) are woken (see
//! `shared`). They report [`Router::stream_closed`] when the client goes away. Session ids
//! come from the OS random source. Every protocol decision (paths, status codes, sessions,
//! SSE, resumption) is the core's; this module moves bytes and time and applies the optional
//! bearer guard (the core's protected-resource decision, see [`BearerAuth::protect`]).
//!
//! [`Router`]: mcp_sansio::http::sse_transport::Router
//! [`Router::poll_timeout`]: mcp_sansio::http::sse_transport::Router::poll_timeout
//! [`Router::poll_stream`]: mcp_sansio::http::sse_transport::Router::poll_stream
//! [`Router::stream_closed`]: mcp_sansio::http::sse_transport::Router::stream_closed
//!
//! ```no_run
//! use std::net::SocketAddr;
//! use mcp_sansio::app::server::Server;
//! use mcp_sansio::model::Implementation;
//! use mcp_sansio_http::server::{HttpServer, HttpServerOptions};
//!
//! let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
//! let server = HttpServer::bind(addr, HttpServerOptions::default(), |now| {
//!     Server::builder(Implementation::new("demo", "1")).build(now)
//! })
//! .unwrap();
//! eprintln!("listening on {}", server.url());
//! let stop = server.shutdown_handle(); // stop.shutdown() from any thread ends `run`
//! server.run().unwrap();
//! ```

mod alarm;
mod auth;
mod body;
mod clock;
mod idle;
mod io;
mod mount;
mod peers;
mod refusal;
mod resume;
mod roster;
mod service;
mod shared;
mod sharing;
mod staging;
mod startup;
mod store;
mod task_answers;
mod traced;

use std::convert::Infallible;
use std::future::{poll_fn, Future};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use hyper::server::conn::http1;
use hyper::service::service_fn;
use mcp_sansio::app::server::{Server, Tasks};
use mcp_sansio::http::EndpointConfig;
use mcp_sansio::stateless::ListenChange;
use smol::channel::{self, Receiver, Recv, Sender};
use smol::{Async, LocalExecutor, Timer};

use crate::tcp_io::TcpIo;
pub use auth::BearerAuth;
use idle::{Busy, IdleWatch, TrackedBody};
use io::ConnTimer;
pub use mcp_sansio_store::StoreError;
pub use mount::SseTransportMount;
use peers::{PeerConnections, PeerPlace};
use roster::{Place, Roster};
use service::{BodyLimits, Route};
use shared::Shared;
use sharing::Sharing;
pub use store::SessionStore;

/// How the server is mounted and bounded.
///
/// Every wait a client can impose on the server has a limit here: a connection slot
/// (`max_connections`), the request head (`header_read_timeout`), the request body
/// (`body_timeout`, `body_min_rate`), a connection between requests (`keep_alive_timeout`),
/// and a response the client does not read (`write_timeout`). A `None` turns that limit off.
#[derive(Clone, Debug)]
pub struct HttpServerOptions {
    /// The path the endpoint answers on; other paths get 404. Default `/mcp`.
    pub path: String,
    /// The core endpoint's limits and switches (body size, sessions, Host/Origin policy, SSE
    /// keep-alive comments...), for both transports.
    pub endpoint: EndpointConfig,
    /// The HTTP+SSE transport (2024-11-05) served beside Streamable HTTP (`None`: not
    /// served, its paths get 404). Default `/sse` + `/messages`.
    pub sse_transport: Option<SseTransportMount>,
    /// Require `Authorization: Bearer` checked by this hook. Default none.
    pub auth: Option<BearerAuth>,
    /// Where every request and response head, JSON body and server-sent event goes
    /// (docs/trace.md). Default none: nothing is traced.
    pub trace: Option<crate::HttpTrace>,
    /// Open connections at most. At the cap the server stops accepting until one closes: new
    /// connections wait in the kernel's listen backlog (never accepted and closed). While one
    /// waits there, the open connection idle longest (no request in flight: between requests,
    /// or still sending its first head) is closed to make room, so idle connections cannot
    /// keep clients out; one with a request in flight is never closed for this. Each
    /// connection holds a file descriptor, so the process's descriptor limit must allow this
    /// many plus a few. Default 10,000.
    pub max_connections: usize,
    /// Open connections one client address may hold at most; one more is answered
    /// `429 Too Many Requests` (with `Retry-After: 1`) and closed before any request is read,
    /// so one address cannot take every slot of `max_connections` (with streams open, which
    /// are never idle and so never reclaimed). Clients behind one proxy or NAT share an
    /// address: size it for them. Default `None`: no per-address cap.
    pub max_connections_per_peer: Option<usize>,
    /// The listen backlog asked of the kernel (connections waiting to be accepted, capped by
    /// the system, e.g. `net.core.somaxconn` on Linux). Default 1024.
    pub listen_backlog: u32,
    /// A request head (request line and header fields) must arrive whole within this. hyper
    /// starts this clock when it begins waiting for a head, which on a keep-alive connection is
    /// when the previous response ended: an idle connection closes after the shorter of this
    /// and `keep_alive_timeout`. Default 30 s.
    pub header_read_timeout: Option<Duration>,
    /// A request body must arrive whole within this, from when the server starts reading it;
    /// past it the request gets 408 and the connection closes. Default 60 s.
    pub body_timeout: Option<Duration>,
    /// The slowest request body accepted: after the grace period it must have averaged at
    /// least this many bytes per second since its start, or it gets 408 and the connection
    /// closes. Default 1 KiB/s after 10 s.
    pub body_min_rate: Option<MinRate>,
    /// A connection with no request in flight (between keep-alive requests) closes after this
    /// long. Default 30 s.
    pub keep_alive_timeout: Option<Duration>,
    /// A response write that makes no progress for this long (the client stopped reading and
    /// the socket's buffers are full) cuts the connection; an SSE stream's client resumes
    /// from the replay buffer. Default 30 s.
    pub write_timeout: Option<Duration>,
    /// TCP keepalive probes on accepted connections after this long without traffic (finds
    /// peers that vanished without a FIN). Default 60 s.
    pub tcp_keepalive: Option<Duration>,
    /// How long shutdown waits for open connections to finish. Default 5 s.
    pub drain_timeout: Duration,
    /// Sessions shared with the other instances using the same store, so any of them serves
    /// any request (see docs/scale-out.md). `endpoint.instance_id` names this instance (its
    /// letters and digits, at most 32; a random name when unset or empty). Default `None`:
    /// sessions live in this process.
    pub store: Option<SessionStore>,
    /// The task table of the servers (the one handed to `ServerBuilder::tasks`), shared
    /// through `store` with the other instances: each task's state is written there as it
    /// changes, `tasks/get` for a task another instance runs is answered from it, and
    /// `tasks/update` / `tasks/cancel` are forwarded to that instance. Only with a `store`.
    /// Default `None`.
    pub tasks: Option<Tasks>,
}

/// The slowest request body the server waits for (see [`HttpServerOptions::body_min_rate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MinRate {
    /// Bytes per second, averaged from the start of the body.
    pub bytes_per_sec: u64,
    /// How long a body may be slower than that before the rate is enforced.
    pub grace: Duration,
}

impl Default for MinRate {
    fn default() -> Self {
        MinRate {
            bytes_per_sec: 1024,
            grace: Duration::from_secs(10),
        }
    }
}

impl Default for HttpServerOptions {
    fn default() -> Self {
        HttpServerOptions {
            path: "/mcp".to_owned(),
            endpoint: EndpointConfig::default(),
            sse_transport: Some(SseTransportMount::default()),
            auth: None,
            trace: None,
            max_connections: 10_000,
            max_connections_per_peer: None,
            listen_backlog: 1024,
            header_read_timeout: Some(Duration::from_secs(30)),
            body_timeout: Some(Duration::from_secs(60)),
            body_min_rate: Some(MinRate::default()),
            keep_alive_timeout: Some(Duration::from_secs(30)),
            write_timeout: Some(Duration::from_secs(30)),
            tcp_keepalive: Some(Duration::from_secs(60)),
            drain_timeout: Duration::from_secs(5),
            store: None,
            tasks: None,
        }
    }
}

/// Stops a running [`HttpServer`] from any thread: it stops accepting, ends open response
/// streams, waits up to `drain_timeout` for connections to finish, and `run` returns.
#[derive(Clone, Debug)]
pub struct ShutdownHandle {
    stop: Sender<()>,
    requested: Arc<AtomicBool>,
}

impl ShutdownHandle {
    /// Starts the graceful shutdown (idempotent).
    pub fn shutdown(&self) {
        self.requested.store(true, Ordering::Release);
        self.stop.close();
    }

    /// Whether shutdown was asked for.
    pub fn is_requested(&self) -> bool {
        self.requested.load(Ordering::Acquire)
    }
}

/// Events an [`Announcer`] may have queued before the server takes them (past it,
/// [`Announcer::announce`] refuses).
pub const MAX_QUEUED_ANNOUNCEMENTS: usize = 256;

/// Announces list changes and resource updates to every open 2026-07-28 listen stream of a
/// running [`HttpServer`], from any thread and outside any exchange (a timer, a file watcher):
/// each stream gets the event if its filter asked for it, tagged with its subscription id.
/// With a store (`HttpServerOptions::store`) the event is also published to the other
/// instances sharing it, for their listen streams.
#[derive(Clone, Debug)]
pub struct Announcer {
    events: Sender<ListenChange>,
}

impl Announcer {
    /// Queues `event` for the server; `false` when the server stopped or
    /// [`MAX_QUEUED_ANNOUNCEMENTS`] wait already.
    pub fn announce(&self, event: ListenChange) -> bool {
        self.events.try_send(event).is_ok()
    }
}

/// A bound, not yet running Streamable HTTP server.
pub struct HttpServer {
    listener: Async<TcpListener>,
    local_addr: SocketAddr,
    options: HttpServerOptions,
    factory: mount::Factory,
    stop_tx: Sender<()>,
    stop_rx: Receiver<()>,
    requested: Arc<AtomicBool>,
    announce_tx: Sender<ListenChange>,
    announce_rx: Receiver<ListenChange>,
    store_ready: Option<StoreReady>,
}

/// What the application reads from the store before the server serves (see
/// [`HttpServer::on_store_ready`]).
pub type StoreReady = Arc<
    dyn Fn(SessionStore) -> Pin<Box<dyn Future<Output = Result<(), StoreError>>>> + Send + Sync,
>;

/// What a finished run saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    /// Connections accepted.
    pub connections: u64,
    /// How often the server stopped accepting because `max_connections` were open (it
    /// resumed when one closed; the connections waiting meanwhile were served, not refused).
    pub cap_reached: u64,
    /// Idle connections asked to close at the cap to make room for one waiting (see
    /// [`HttpServerOptions::max_connections`]).
    pub idle_reclaimed: u64,
    /// Connections answered 429 and closed because their address held
    /// [`HttpServerOptions::max_connections_per_peer`] already.
    pub peer_connections_refused: u64,
    /// Connections still open when the drain timeout expired (dropped).
    pub abandoned_connections: u64,
    /// With a store: relays of GET streams moved between instances that the bus
    /// publisher's full queue refused. A message was held here for the session's next GET
    /// stream instead, in its place among the session's messages; a notice (a GET stream
    /// moved or opened here) was kept and sent again once the queue had room (at most 1,024
    /// wait; past it one is lost, `EndpointStats::listen_relays_lost`). Each counted once.
    pub relays_refused: u64,
}

impl HttpServer {
    /// Binds `addr` (use `127.0.0.1:0` for an ephemeral loopback port). `factory(now)` builds
    /// the application server of each new session.
    pub fn bind(
        addr: SocketAddr,
        options: HttpServerOptions,
        factory: impl FnMut(Instant) -> Server + Send + 'static,
    ) -> std::io::Result<HttpServer> {
        let listener = Async::new(listen(addr, options.listen_backlog)?)?;
        let local_addr = listener.get_ref().local_addr()?;
        let (stop_tx, stop_rx) = channel::bounded(1);
        let (announce_tx, announce_rx) = channel::bounded(MAX_QUEUED_ANNOUNCEMENTS);
        Ok(HttpServer {
            listener,
            local_addr,
            options,
            factory: Box::new(factory),
            stop_tx,
            stop_rx,
            requested: Arc::new(AtomicBool::new(false)),
            announce_tx,
            announce_rx,
            store_ready: None,
        })
    }

    /// Runs `ready` with `HttpServerOptions::store` before serving, for what the application
    /// reads from the store at start (e.g. [`SessionStore::shared_secret`]). While it fails
    /// (or reading the event key does), the store does not answer: every request gets `503`
    /// with `Retry-After`, and both are tried again after 100 ms, doubling up to 5 s.
    pub fn on_store_ready(&mut self, ready: StoreReady) {
        self.store_ready = Some(ready);
    }

    /// A handle that announces list changes and resource updates to every open listen stream
    /// of this server once it runs.
    pub fn announcer(&self) -> Announcer {
        Announcer {
            events: self.announce_tx.clone(),
        }
    }

    /// Sets the bearer guard after binding, when it needs the bound URL (a protected
    /// resource's identifier on an ephemeral port): replaces `HttpServerOptions::auth`.
    pub fn set_auth(&mut self, auth: Option<BearerAuth>) {
        self.options.auth = auth;
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint's URL, e.g. `http://127.0.0.1:41234/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.options.path)
    }

    /// The HTTP+SSE endpoint's URL (e.g. `http://127.0.0.1:41234/sse`), when it is served.
    pub fn sse_url(&self) -> Option<String> {
        let mount = self.options.sse_transport.as_ref()?;
        Some(format!("http://{}{}", self.local_addr, mount.sse_path))
    }

    /// A handle that stops [`run`](Self::run) from anywhere.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            stop: self.stop_tx.clone(),
            requested: self.requested.clone(),
        }
    }

    /// Serves until shut down, on the calling thread (a single-threaded smol executor).
    pub fn run(self) -> std::io::Result<RunReport> {
        let executor = Rc::new(LocalExecutor::new());
        // A task of its own rather than the executor's main future: the main future is polled
        // on every wake-up of the thread, and the accept loop would try `accept` each time.
        let main = executor.spawn(self.run_on(executor.clone()));
        // One clock reading per wake-up of the thread serves every task it runs.
        let serving = pin!(executor.run(main));
        smol::block_on(clock::PerWake(serving))
    }

    /// Serves until shut down, spawning connection tasks and jobs on `executor`; the caller
    /// drives the executor (e.g. `smol::block_on(executor.run(executor.spawn(server.run_on(
    /// executor.clone()))))`: spawned, the accept loop is polled only when it has work).
    pub async fn run_on(
        mut self,
        executor: Rc<LocalExecutor<'static>>,
    ) -> std::io::Result<RunReport> {
        let (kick_tx, kick_rx) = channel::bounded::<()>(1);
        let hook_tx = kick_tx.clone();
        let wake: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
            let _ = hook_tx.try_send(());
        });
        let sharing = self.options.store.clone().map(|store| {
            // The name request ids and bus channels carry: letters and digits only.
            let given = self.options.endpoint.instance_id.take().unwrap_or_default();
            let mut id: String = given
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .take(32)
                .collect();
            if id.is_empty() {
                id = instance_id();
            }
            self.options.endpoint.instance_id = Some(id.clone());
            let endpoint = &self.options.endpoint;
            Rc::new(Sharing::new(
                store,
                endpoint.idle_timeout,
                id,
                endpoint.sse_keep_alive,
                self.options.tasks.clone(),
            ))
        });
        let limits = Rc::new(ConnLimits::from(&self.options));
        if let Some(sharing) = &sharing {
            let door = startup::Door {
                listener: &self.listener,
                stop: &self.stop_rx,
                executor: &executor,
                limits: limits.clone(),
                max_connections: self.options.max_connections.max(1),
                max_body: self.options.endpoint.max_body,
            };
            let given = self.options.endpoint.event_key.clone();
            let ready = self.store_ready.clone();
            let store = sharing.store();
            let load = || {
                let (given, ready) = (given.clone(), ready.clone());
                async move {
                    let key = match given {
                        Some(key) => key,
                        None => sharing::event_key(store).await?,
                    };
                    if let Some(ready) = ready {
                        ready(store.clone()).await?;
                    }
                    sharing.subscribe().await?;
                    Ok(key)
                }
            };
            let Some(key) = startup::until_ready(&door, load).await else {
                return Ok(RunReport::default()); // shut down before the store answered
            };
            self.options.endpoint.event_key = Some(key);
        }
        // A trace hears when each session ends.
        self.options.endpoint.report_ended_sessions = self.options.trace.is_some();
        let router = mount::router(&self.options, self.factory, wake);
        let shared = Shared::new(router, &executor, kick_tx);
        if let Some(sharing) = &sharing {
            shared.with(|core| {
                core.stream_log = Some(sharing.log_sender());
                core.listen_changes = Some(sharing.listen_sender());
                core.listen_relays = Some(sharing.relay_sender());
            });
        }
        let route = Rc::new(Route {
            auth: self.options.auth.clone(),
            trace: self.options.trace.clone(),
            max_body: self.options.endpoint.max_body,
            body_limits: BodyLimits {
                whole: self.options.body_timeout,
                min_rate: self.options.body_min_rate,
            },
            random: Default::default(),
            staging: Default::default(),
            sharing: sharing.clone(),
        });
        if let Some(sharing) = sharing {
            let listen = sharing.listen(shared.clone(), self.stop_rx.clone());
            executor.spawn(listen).detach();
        }
        executor
            .spawn(drive(
                shared.clone(),
                kick_rx,
                self.stop_rx.clone(),
                self.options.trace.clone(),
            ))
            .detach();
        executor
            .spawn(announce(
                shared.clone(),
                self.announce_rx.clone(),
                self.stop_rx.clone(),
            ))
            .detach();
        // Each connection task holds a clone; `recv` on `live_rx` fails once all are gone.
        let (live_tx, live_rx) = channel::bounded::<()>(1);
        // A connection task that ends says so here, so a paused accept loop resumes.
        let (freed_tx, freed_rx) = channel::bounded::<()>(1);
        let mut report = RunReport::default();
        let stop = self.stop_rx.clone();
        let listener = &mut self.listener;
        let max = self.options.max_connections.max(1);
        // `live_tx` itself is one sender: the open connections are the others.
        let at_cap = || live_tx.sender_count() > max;
        let roster = Roster::default();
        let peers = PeerConnections::default();
        'serve: loop {
            if at_cap() {
                // At the cap: accept nothing until a slot frees; the kernel's backlog holds
                // the connections that arrive meanwhile. One waiting there makes room: the
                // connection idle longest is asked to close (see `roster`).
                report.cap_reached += 1;
                while at_cap() {
                    match at_the_cap(listener, &freed_rx, &stop).await {
                        Room::Stop => break 'serve,
                        Room::Freed => {}
                        Room::Waiting => {
                            if roster.reclaim_idlest() {
                                report.idle_reclaimed += 1;
                            }
                            // Freed at once when it was idle; look again after a while when
                            // every connection is busy (or the asked one took a request).
                            let go_on = smol::future::or(
                                async {
                                    let _ = freed_rx.recv().await;
                                    true
                                },
                                async {
                                    smol::future::or(
                                        async {
                                            Timer::after(RECLAIM_PAUSE).await;
                                            true
                                        },
                                        async {
                                            let _ = stop.recv().await;
                                            false
                                        },
                                    )
                                    .await
                                },
                            )
                            .await;
                            if !go_on {
                                break 'serve;
                            }
                        }
                    }
                }
            }
            let accepted = smol::future::or(async { Some(listener.accept().await) }, async {
                let _ = stop.recv().await;
                None
            })
            .await;
            let Some(accepted) = accepted else {
                break;
            };
            let (stream, peer) = match accepted {
                Ok((stream, peer)) => (stream, peer.ip()),
                Err(_) => {
                    // Out of descriptors or a reset before accept: back off a little.
                    Timer::after(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let peer_place = match self.options.max_connections_per_peer {
                None => None,
                Some(max) => match peers.join(peer, max.max(1)) {
                    Ok(place) => Some(place),
                    Err(open) => {
                        report.peer_connections_refused += 1;
                        executor.spawn(peers::refuse(stream, open)).detach();
                        continue;
                    }
                },
            };
            report.connections += 1;
            let _ = stream.get_ref().set_nodelay(true);
            if let Some(idle) = self.options.tcp_keepalive {
                let probes = socket2::TcpKeepalive::new().with_time(idle);
                let _ = socket2::SockRef::from(stream.get_ref()).set_tcp_keepalive(&probes);
            }
            let conn = serve_connection(
                shared.clone(),
                route.clone(),
                limits.clone(),
                stream,
                peer,
                self.stop_rx.clone(),
                Slot {
                    _live: live_tx.clone(),
                    freed: freed_tx.clone(),
                    place: roster.join(Busy::new(clock::now())),
                    _peer: peer_place,
                },
            );
            executor.spawn(conn).detach();
        }
        drop(self.listener);
        drop(live_tx);
        shared.with(|core| {
            core.closing = true;
            // The core answers the requests still being handled and ends every stream; the
            // bodies are pulled as usual until they end.
            core.endpoint.begin_shutdown(clock::now());
        });
        let drained = smol::future::or(
            async {
                let _ = live_rx.recv().await;
                true
            },
            async {
                Timer::after(self.options.drain_timeout).await;
                false
            },
        )
        .await;
        if !drained {
            report.abandoned_connections = live_rx.sender_count() as u64;
        }
        if let Some(trace) = &route.trace {
            // Shut down: every session the trace follows ends here.
            traced::ended_sessions(trace, &shared);
            trace.ended(None);
        }
        report.relays_refused = shared.with(|core| core.relays_refused);
        Ok(report)
    }
}

/// A name for this instance among those sharing a store: 16 random hex digits.
fn instance_id() -> String {
    let mut bytes = [0u8; 8];
    // Without OS randomness, the process id and the time still tell instances apart.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        bytes[..4].copy_from_slice(&std::process::id().to_le_bytes());
        bytes[4..].copy_from_slice(&nanos.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The per-connection limits, taken from the options once.
struct ConnLimits {
    header_read: Option<Duration>,
    keep_alive: Option<Duration>,
    write: Option<Duration>,
}

impl From<&HttpServerOptions> for ConnLimits {
    fn from(options: &HttpServerOptions) -> Self {
        ConnLimits {
            header_read: options.header_read_timeout,
            keep_alive: options.keep_alive_timeout,
            write: options.write_timeout,
        }
    }
}

/// Hands each announced event to the endpoint's listen streams (and settles, waking their
/// bodies), and, with a store, to the bus publisher for the other instances' listen streams
/// (a full queue drops it there), until shutdown.
async fn announce(shared: Shared, events: Receiver<ListenChange>, stop: Receiver<()>) {
    loop {
        let next = smol::future::or(async { events.recv().await.ok() }, async {
            let _ = stop.recv().await;
            None
        })
        .await;
        let Some(event) = next else {
            return;
        };
        shared.with(|core| {
            core.endpoint.announce_listen_change(&event);
            if let Some(out) = &core.listen_changes {
                let _ = out.try_send(event);
            }
        });
    }
}

/// Fires the endpoint's timers and settles after handler wake-ups, until shutdown.
///
/// One timer for the whole run, re-armed only when the endpoint's deadline moves earlier
/// than the armed one (see [`Shared::settle`]); a timer that fires early finds nothing due
/// and is armed again for the real deadline.
async fn drive(
    shared: Shared,
    kick: Receiver<()>,
    stop: Receiver<()>,
    trace: Option<crate::HttpTrace>,
) {
    let mut timer = Timer::never();
    loop {
        let rearm = shared
            .try_with(|core| {
                let next = core.endpoint.poll_timeout()?;
                let earlier = core.armed.is_none_or(|at| next < at);
                earlier.then(|| {
                    core.armed = Some(next);
                    next
                })
            })
            .flatten();
        if let Some(at) = rearm {
            timer.set_at(at);
        }
        let armed = shared.try_with(|core| core.armed).flatten().is_some();
        let timer = &mut timer;
        let woke = smol::future::or(
            async { kick.recv().await.is_ok().then_some(false) },
            smol::future::or(
                async {
                    if armed {
                        timer.await;
                        Some(true)
                    } else {
                        std::future::pending().await
                    }
                },
                async {
                    let _ = stop.recv().await;
                    None
                },
            ),
        )
        .await;
        let Some(fired) = woke else {
            return;
        };
        let now = clock::now();
        shared.with(|core| {
            // A kick comes from a machine woken from outside the endpoint (see the shared
            // module's header); a timer may touch sessions too. Either way: every body.
            core.check_every = true;
            if fired {
                core.armed = None;
            }
            if core.endpoint.poll_timeout().is_some_and(|at| at <= now) {
                core.endpoint.handle_timeout(now);
            }
        });
        if let Some(trace) = &trace {
            // Sessions that expired.
            traced::ended_sessions(trace, &shared);
        }
        // `with` may have kicked us again: drop that kick unless it came from outside meanwhile.
        let _ = kick.try_recv();
    }
}

/// Binds a listening TCP socket on `addr` with the given backlog (address reuse on, as the
/// standard library's `TcpListener::bind` does on Unix).
fn listen(addr: SocketAddr, backlog: u32) -> std::io::Result<TcpListener> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
    Ok(socket.into())
}

/// One open connection's place under `max_connections`: held by its task, released (and the
/// accept loop told) when the task ends or is dropped.
struct Slot {
    _live: Sender<()>,
    freed: Sender<()>,
    /// Its place on the roster, with its requests in flight.
    place: Place,
    /// Its count under its address, with a per-address cap.
    _peer: Option<PeerPlace>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        // Runs before `_live` is dropped, but the accept loop runs on this thread only after
        // this task finished dropping: it counts the slot as free by then.
        let _ = self.freed.try_send(());
    }
}

/// Serves one connection (HTTP/1.1, keep-alive) until it closes, its keep-alive timeout
/// passes with no request in flight, or (once shutdown starts) its current response ends.
///
/// Both reasons to end it early are looked at only when hyper waits (for the client or for a
/// response), not on every wake-up of the task: a wake-up serves the exchange first.
async fn serve_connection(
    shared: Shared,
    route: Rc<Route>,
    limits: Rc<ConnLimits>,
    stream: Async<TcpStream>,
    peer: IpAddr,
    stop: Receiver<()>,
    slot: Slot,
) {
    let busy = slot.place.busy().clone();
    let in_flight = busy.clone();
    let io = TcpIo::accepted(stream, limits.write);
    let service = service_fn(move |req| {
        let shared = shared.clone();
        let route = route.clone();
        let guard = in_flight.enter();
        async move {
            let resp = service::handle(shared, &route, peer, req).await?;
            Ok::<_, Infallible>(resp.map(|body| TrackedBody::new(body, guard)))
        }
    });
    let conn = http1::Builder::new()
        .timer(ConnTimer::default())
        .header_read_timeout(limits.header_read)
        // Head and body written from one buffer, not queued for a vectored write: for the
        // small bodies of MCP messages the copy costs less than hyper's queue and its flush
        // (about 0.5 K instructions per echo exchange less on the server thread); hyper still
        // bounds that buffer, so a streamed body keeps its backpressure.
        .writev(false)
        .keep_alive(true)
        .serve_connection(io, service);
    let mut conn = pin!(conn);
    let mut stopping = StopWatch::new(&stop);
    let mut idle = limits.keep_alive.map(|after| IdleWatch::new(after, busy));
    let mut shutting_down = false;
    let _ = poll_fn(|cx| {
        // Twice at most: a connection told to shut down is polled again at once (hyper
        // closes an idle one then).
        for _ in 0..2 {
            let polled = conn.as_mut().poll(cx);
            if polled.is_ready() || shutting_down {
                return polled;
            }
            // No request in flight for the keep-alive timeout, shutdown asked for, or room
            // needed at the connection cap.
            let expired = idle.as_mut().is_some_and(|w| w.poll_expired(cx).is_ready());
            if !expired && !stopping.poll_asked(cx) && !slot.place.poll_asked(cx) {
                return Poll::Pending;
            }
            shutting_down = true;
            conn.as_mut().graceful_shutdown();
        }
        Poll::Pending
    })
    .await;
    drop(slot);
}

/// How long the accept loop waits at the cap, with a connection waiting and none idle, before
/// it looks for an idle one again.
const RECLAIM_PAUSE: Duration = Duration::from_millis(50);

/// What happened while the accept loop waited at the cap.
enum Room {
    /// A connection closed.
    Freed,
    /// A connection waits in the listen backlog.
    Waiting,
    /// Shutdown was asked for.
    Stop,
}

/// Waits at the cap for a slot to free, a connection to wait in the backlog, or shutdown.
async fn at_the_cap(
    listener: &Async<TcpListener>,
    freed: &Receiver<()>,
    stop: &Receiver<()>,
) -> Room {
    let freed = async {
        match freed.recv().await {
            Ok(()) => Room::Freed,
            Err(_) => Room::Stop,
        }
    };
    let waiting = async {
        match listener.readable().await {
            Ok(()) => Room::Waiting,
            // The listener failed: only a freed slot or shutdown can end the wait.
            Err(_) => std::future::pending().await,
        }
    };
    let stopped = async {
        let _ = stop.recv().await;
        Room::Stop
    };
    smol::future::or(freed, smol::future::or(waiting, stopped)).await
}

/// Whether shutdown was asked for: the stop channel is closed then (nothing is ever sent on
/// it). Its receive future is polled only to register the task's waker (on the first poll,
/// and again if the waker changes): closing the channel wakes every registered receiver, and
/// after that a look is one atomic load, not a poll of the channel.
struct StopWatch<'a> {
    stop: &'a Receiver<()>,
    recv: Pin<Box<Recv<'a, ()>>>,
    registered: Option<Waker>,
}

impl<'a> StopWatch<'a> {
    fn new(stop: &'a Receiver<()>) -> Self {
        StopWatch {
            stop,
            recv: Box::pin(stop.recv()),
            registered: None,
        }
    }

    fn poll_asked(&mut self, cx: &mut Context<'_>) -> bool {
        if self.stop.is_closed() {
            return true;
        }
        if self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            return false;
        }
        self.registered = Some(cx.waker().clone());
        self.recv.as_mut().poll(cx).is_ready()
    }
}
