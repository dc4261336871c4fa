//! Runs the application-layer MCP [`Client`] on the adapter's loop: [`ClientDriven`] feeds it
//! frames and time, spawns its pending handler jobs (sampling, elicitation) on the loop's
//! executor, wakes the loop when a [`ClientHandle`] call or a finished job pushed work into the
//! client's outbox, and hands server notifications ([`ClientEvent`]) to a callback.
//!
//! [`connect_stdio_client`] spawns a server as a child process and returns a [`StdioClient`]:
//! take its [`ClientHandle`], write the application as an async block, and
//! [`StdioClient::run`] drives the loop while that block runs, then closes the session and shuts
//! the child down with the spec's sequence (close stdin, wait; `SIGTERM`, wait; `SIGKILL`).
//!
//! ```no_run
//! use std::time::Instant;
//! use mcp_sansio::app::client::Client;
//! use mcp_sansio::model::Implementation;
//! use mcp_sansio_stdio::{connect_stdio_client, StderrMode};
//!
//! let builder = Client::builder(Implementation::new("demo", "0.1.0"));
//! let client = connect_stdio_client("my-server", ["--flag"], StderrMode::Inherit, builder)?;
//! let handle = client.handle();
//! let (tools, report) = client.block_on(async move {
//!     handle.initialize().await?;
//!     handle.list_all_tools().await
//! })?;
//! println!("{} tools; child ended at {:?}", tools.map_err(std::io::Error::other)?.len(), report.shutdown.map(|s| s.stage));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::ffi::OsStr;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::app::client::{Client, ClientBuilder, ClientEvent, ClientHandle};
use mcp_sansio::session::State;
use mcp_sansio::trace::{Direction, FrameTrace, TraceSink};

use crate::child::{connect_child, ChildProcess, ShutdownReport, ShutdownTimeouts, StderrMode};
use crate::driven::{Driven, FrameError};
use crate::driver::{DriveOptions, Driver, EndReason, Finished};
use crate::handle::{LoopHandle, Remote};
#[cfg(unix)]
use crate::poll::PollDriver;

/// Where [`ClientDriven`] delivers the client's events (server logs, list changes, close).
pub type EventSink = Box<dyn FnMut(ClientEvent)>;

/// The application-layer [`Client`] made drivable by the adapter's loop.
///
/// Build it with [`ClientDriven::new`] from the [`Driver`] that will run it (or
/// [`ClientDriven::for_poll`] from a [`PollDriver`]): that sets the
/// client's wake hook to a no-op [`Remote`] command (any push into the client's outbox makes
/// the loop run once and drain it) and keeps the driver's [`LoopHandle`] to spawn jobs.
pub struct ClientDriven {
    client: Client,
    jobs: LoopHandle<ClientDriven>,
    on_event: EventSink,
    /// Where frames are reported, with the latest instant the loop gave: `None` costs nothing.
    trace: Option<(Box<dyn TraceSink>, Instant)>,
}

impl ClientDriven {
    /// Wraps `client` for `driver`; events are dropped until [`ClientDriven::on_event`].
    pub fn new(client: Client, driver: &Driver<ClientDriven>) -> Self {
        Self::on_loop(client, driver.remote(), driver.handle())
    }

    /// Wraps `client` for a [`PollDriver`]; otherwise as [`ClientDriven::new`].
    #[cfg(unix)]
    pub fn for_poll(client: Client, driver: &PollDriver<ClientDriven>) -> Self {
        Self::on_loop(client, driver.remote(), driver.handle())
    }

    fn on_loop(mut client: Client, remote: Remote<ClientDriven>, jobs: LoopHandle<Self>) -> Self {
        // The command runs inside the loop with a fresh `now`, so calls made since the last
        // input get deadlines from the time they were made. `Full` means a wake-up is already
        // queued (it drains everything pushed so far); `Closed` means the loop is gone.
        client.set_waker(Arc::new(move || {
            let _ = remote.try_send(|d: &mut ClientDriven, now| d.handle_wake(now));
        }));
        Self {
            client,
            jobs,
            on_event: Box::new(|_| {}),
            trace: None,
        }
    }

    /// Reports every frame read and written to `sink` (docs/trace.md).
    pub fn on_trace(mut self, sink: impl TraceSink + 'static) -> Self {
        self.trace = Some((Box::new(sink), Instant::now()));
        self
    }

    /// Remembers `now` as the time of frames handed out next.
    fn seen(&mut self, now: Instant) {
        if let Some((_, at)) = &mut self.trace {
            *at = now;
        }
    }

    /// Delivers every [`ClientEvent`] to `sink`, inside the loop, in arrival order.
    pub fn on_event(mut self, sink: impl FnMut(ClientEvent) + 'static) -> Self {
        self.on_event = Box::new(sink);
        self
    }

    /// A handle for typed calls (Clone + Send).
    pub fn handle(&self) -> ClientHandle {
        self.client.handle()
    }

    /// The wrapped state machine (session state, negotiated version, stats).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Closes the session: pending calls fail with `ClientError::Closed`; the loop then
    /// flushes what is pending and returns.
    pub fn close(&mut self, now: Instant) {
        self.seen(now);
        self.client.close(now);
        self.after_input();
    }

    /// Drains what handles and jobs pushed into the client's outbox, at `now`.
    fn handle_wake(&mut self, now: Instant) {
        self.seen(now);
        self.client.handle_wake(now);
        self.after_input();
    }

    /// Spawns the handler jobs still pending after their inline first poll and delivers the
    /// events the last input produced.
    fn after_input(&mut self) {
        while let Some(job) = self.client.poll_job() {
            // Detached: the job pushes its reply into the outbox and the wake hook runs us.
            self.jobs.spawn(job).detach();
        }
        while let Some(event) = self.client.poll_event() {
            (self.on_event)(event);
        }
    }
}

impl Driven for ClientDriven {
    fn handle_frame(&mut self, now: Instant, frame: Bytes) {
        if let Some((sink, at)) = &mut self.trace {
            *at = now;
            sink.frame(&FrameTrace::new(Direction::Recv, now, &frame), &frame);
        }
        self.client.handle_input(now, frame);
        self.after_input();
    }

    fn handle_frame_error(&mut self, now: Instant, error: FrameError) {
        // An over-long line from the server, already discarded: the call whose id its first
        // bytes showed fails now, with an error naming the limit.
        self.client.handle_decode_error(now, error);
        self.after_input();
    }

    fn handle_eof(&mut self, now: Instant) {
        // The server's stdout ended (it exited or closed it): nothing more can answer us.
        self.seen(now);
        self.client.handle_peer_closed(now);
        self.after_input();
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.seen(now);
        self.client.handle_timeout(now);
        self.after_input();
    }

    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        let start = buf.len();
        match self.client.poll_transmit(buf) {
            Some(_) => {
                if let (Some((sink, at)), Some(raw)) = (&mut self.trace, buf.get(start..)) {
                    let frame = Bytes::copy_from_slice(raw);
                    sink.frame(&FrameTrace::new(Direction::Send, *at, &frame), &frame);
                }
                Some(buf.len() - start)
            }
            None => {
                // Draining the outbox may have completed calls or produced events.
                self.after_input();
                None
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.client.poll_timeout()
    }

    fn is_closed(&self) -> bool {
        self.client.session().state() == State::Closed
    }
}

/// How a [`StdioClient::run`] ended, besides the application's own output.
#[derive(Debug)]
pub struct ClientRunReport {
    /// Why the loop returned.
    pub reason: EndReason,
    /// A read error on the child's stdout, if any.
    pub input_error: Option<io::Error>,
    /// A write error on the child's stdin (e.g. it exited early), if any.
    pub output_error: Option<io::Error>,
    /// How the child was shut down (`None` if the shutdown itself failed).
    pub shutdown: Option<ShutdownReport>,
    /// The child's stderr tail when it was captured ([`StderrMode::Capture`]).
    pub stderr_tail: Option<String>,
}

/// An MCP server running as a child process, with a client ready to drive it.
pub struct StdioClient {
    child: ChildProcess,
    driver: ClientLoop,
    driven: ClientDriven,
    shutdown: ShutdownTimeouts,
}

/// The loop a [`StdioClient`] runs on.
enum ClientLoop {
    Smol(Driver<ClientDriven>),
    #[cfg(unix)]
    Poll(PollDriver<ClientDriven>),
}

/// Spawns `program args` as an MCP server on stdio and prepares a client for it (`builder`
/// declares its capabilities and handlers). Nothing is sent before [`StdioClient::run`].
pub fn connect_stdio_client<I, S>(
    program: impl AsRef<OsStr>,
    args: I,
    stderr: StderrMode,
    builder: ClientBuilder,
) -> io::Result<StdioClient>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let child = connect_child(program, args, stderr)?;
    Ok(StdioClient::new(child, builder, DriveOptions::default()))
}

/// [`connect_stdio_client`] with the client on a [`PollDriver`] (see [`StdioClient::new_poll`]).
#[cfg(unix)]
pub fn connect_stdio_client_poll<I, S>(
    program: impl AsRef<OsStr>,
    args: I,
    stderr: StderrMode,
    builder: ClientBuilder,
) -> io::Result<StdioClient>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let child = connect_child(program, args, stderr)?;
    StdioClient::new_poll(child, builder, DriveOptions::default())
}

impl StdioClient {
    /// A client for an already spawned `child`, with the loop's `options`.
    pub fn new(child: ChildProcess, builder: ClientBuilder, options: DriveOptions) -> Self {
        let driver = Driver::new(options);
        let driven = ClientDriven::new(builder.build(Instant::now()), &driver);
        Self {
            child,
            driver: ClientLoop::Smol(driver),
            driven,
            shutdown: ShutdownTimeouts::default(),
        }
    }

    /// A client for `child` on a [`PollDriver`]: the loop and the application future given to
    /// [`StdioClient::block_on`] share the calling thread, with no async runtime in between
    /// (fewer system calls per message, see docs/benchmarks.md). Fails only if the driver's
    /// wake-up cannot be made.
    #[cfg(unix)]
    pub fn new_poll(
        child: ChildProcess,
        builder: ClientBuilder,
        options: DriveOptions,
    ) -> io::Result<Self> {
        let driver = PollDriver::new(options)?;
        let driven = ClientDriven::for_poll(builder.build(Instant::now()), &driver);
        Ok(Self {
            child,
            driver: ClientLoop::Poll(driver),
            driven,
            shutdown: ShutdownTimeouts::default(),
        })
    }

    /// A handle for typed calls (Clone + Send): use it inside the future given to `run`, or
    /// from other threads while `run` runs.
    pub fn handle(&self) -> ClientHandle {
        self.driven.handle()
    }

    /// Sends commands into the loop from any thread (e.g. `|d, now| d.close(now)`).
    pub fn remote(&self) -> Remote<ClientDriven> {
        match &self.driver {
            ClientLoop::Smol(driver) => driver.remote(),
            #[cfg(unix)]
            ClientLoop::Poll(driver) => driver.remote(),
        }
    }

    /// The child's process id.
    pub fn child_id(&self) -> u32 {
        self.child.id()
    }

    /// Delivers server notifications and lifecycle events to `sink` (inside the loop).
    pub fn on_event(mut self, sink: impl FnMut(ClientEvent) + 'static) -> Self {
        self.driven = self.driven.on_event(sink);
        self
    }

    /// Reports every frame read from and written to the child to `sink` (docs/trace.md).
    pub fn on_trace(mut self, sink: impl TraceSink + 'static) -> Self {
        self.driven = self.driven.on_trace(sink);
        self
    }

    /// The waits of the shutdown sequence after the session closes.
    pub fn shutdown_timeouts(mut self, timeouts: ShutdownTimeouts) -> Self {
        self.shutdown = timeouts;
        self
    }

    /// Drives the loop while `app` runs. When `app` finishes, closes the session, flushes,
    /// closes the child's stdin and shuts the child down; returns `app`'s output.
    ///
    /// If the server goes away first, pending and later calls fail with `Closed`/`NotSent`, so
    /// `app` still finishes.
    ///
    /// A client made with [`StdioClient::new_poll`] runs its loop and `app` on the calling
    /// thread: this future then blocks that thread until it returns (use
    /// [`StdioClient::block_on`]).
    pub async fn run<F: Future>(self, app: F) -> io::Result<(F::Output, ClientRunReport)> {
        let StdioClient {
            mut child,
            driver,
            driven,
            shutdown,
        } = self;
        let driver = match driver {
            ClientLoop::Smol(driver) => driver,
            #[cfg(unix)]
            ClientLoop::Poll(driver) => return run_poll(child, driver, driven, shutdown, app),
        };
        let remote = driver.remote();
        let mut app = std::pin::pin!(app);
        let (output, finished) = {
            let drive = child.drive(driver, driven);
            let mut drive = std::pin::pin!(drive);
            // Whichever ends first: the app (then close the session and let the loop finish)
            // or the loop (the server went away; then keep the machine answering the app).
            let first = smol::future::or(async { Ok(app.as_mut().await) }, async {
                Err(drive.as_mut().await)
            })
            .await;
            match first {
                Ok(output) => {
                    let _ = remote.send(|d: &mut ClientDriven, now| d.close(now)).await;
                    (output, drive.await?)
                }
                Err(finished) => {
                    let mut finished = finished?;
                    let output = finish_app(&mut finished.driven, app).await;
                    (output, finished)
                }
            }
        };
        let report = child.shutdown(shutdown).await.ok();
        Ok((output, run_report(&child, finished, report)))
    }

    /// [`StdioClient::run`], blocking the calling thread.
    pub fn block_on<F: Future>(self, app: F) -> io::Result<(F::Output, ClientRunReport)> {
        smol::block_on(self.run(app))
    }
}

fn run_report(
    child: &ChildProcess,
    finished: Finished<ClientDriven>,
    shutdown: Option<ShutdownReport>,
) -> ClientRunReport {
    ClientRunReport {
        reason: finished.reason,
        input_error: finished.input_error,
        output_error: finished.output_error,
        shutdown,
        stderr_tail: child.stderr_tail(),
    }
}

/// [`StdioClient::run`] on a [`PollDriver`]: `app` is the loop's foreground future, polled on
/// this thread between reads; when it finishes it closes the session, and the loop returns
/// once the close is flushed. If the loop ends first, `app` is finished against the closed
/// client as on the smol driver.
#[cfg(unix)]
fn run_poll<F: Future>(
    mut child: ChildProcess,
    driver: PollDriver<ClientDriven>,
    driven: ClientDriven,
    shutdown: ShutdownTimeouts,
    app: F,
) -> io::Result<(F::Output, ClientRunReport)> {
    let remote = driver.remote();
    let mut app = std::pin::pin!(app);
    let mut output = None;
    let finished = {
        let foreground = async {
            output = Some(app.as_mut().await);
            let _ = remote.send(|d: &mut ClientDriven, now| d.close(now)).await;
        };
        let mut foreground = std::pin::pin!(foreground);
        child.drive_poll_with(driver, driven, Some(foreground.as_mut()))
    };
    drop(remote);
    let mut finished = finished?;
    let output = match output {
        Some(output) => output,
        None => smol::block_on(finish_app(&mut finished.driven, app.as_mut())),
    };
    let report = smol::block_on(child.shutdown(shutdown)).ok();
    Ok((output, run_report(&child, finished, report)))
}

/// Runs `app` to completion against a client whose loop has ended: every wake-up drains the
/// outbox, and the closed session refuses each new call (`NotSent`), so `app` cannot hang.
async fn finish_app<F: Future>(driven: &mut ClientDriven, app: F) -> F::Output {
    let (tx, rx) = smol::channel::bounded::<()>(1);
    driven.client.set_waker(Arc::new(move || {
        let _ = tx.try_send(());
    }));
    let mut app = std::pin::pin!(app);
    loop {
        let mut scratch = Vec::new();
        while driven.poll_transmit(&mut scratch).is_some() {
            scratch.clear();
        }
        let woke = smol::future::or(async { Err(app.as_mut().await) }, async {
            let _ = rx.recv().await;
            Ok(())
        })
        .await;
        if let Err(output) = woke {
            return output;
        }
    }
}
