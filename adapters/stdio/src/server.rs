//! [`ServerDriven`]: the application-layer [`Server`] on the adapter's loop. Frames go in,
//! handler jobs run on the loop's executor, and the server's wake hook makes the loop run when
//! a job finished elsewhere in time (a coalesced [`Remote`] command running
//! `Server::handle_wake(now)`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use mcp_sansio::app::server::Server;
use mcp_sansio::session::{CloseReason, Event, State};
use mcp_sansio::trace::{Direction, FrameTrace, TraceSink};

use crate::driven::{Driven, FrameError};
use crate::driver::{Driver, Finished};
use crate::handle::{LoopHandle, Remote};
#[cfg(unix)]
use crate::poll::PollDriver;

/// Drives a [`Server`]: feeds it frames, reports refused lines to its session (the peer gets an
/// error response), spawns its pending jobs on the loop's executor, and tells the server when the
/// input ends (it then closes once every in-flight request was answered, or at its drain
/// deadline: `Config::drain_timeout`).
pub struct ServerDriven {
    server: Server,
    spawner: LoopHandle<ServerDriven>,
    /// Where frames are reported: `None` costs one branch per frame.
    trace: Option<Box<dyn TraceSink>>,
}

impl ServerDriven {
    /// Wraps `server` for `driver`: takes its [`LoopHandle`] for jobs and sets the server's
    /// wake hook to a `Server::handle_wake` command through its [`Remote`].
    pub fn new(server: Server, driver: &Driver<ServerDriven>) -> Self {
        Self::with(server, driver.handle(), driver.remote())
    }

    /// Wraps `server` for a [`PollDriver`] (jobs run on its loop thread), as [`ServerDriven::new`].
    #[cfg(unix)]
    pub fn for_poll(server: Server, driver: &PollDriver<ServerDriven>) -> Self {
        Self::with(server, driver.handle(), driver.remote())
    }

    fn with(mut server: Server, spawner: LoopHandle<Self>, remote: Remote<Self>) -> Self {
        server.set_waker(wake_hook(remote));
        Self {
            server,
            spawner,
            trace: None,
        }
    }

    /// Reports every frame read and written to `sink` (docs/trace.md).
    pub fn on_trace(mut self, sink: impl TraceSink + 'static) -> Self {
        self.trace = Some(Box::new(sink));
        self
    }

    /// The server (state, counters).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Runs every job the server has pending after an input, and drains its events.
    fn after_input(&mut self) {
        while let Some(job) = self.server.poll_job() {
            // Detached: a job the loop drops unfinished answers -32603 through its drop guard.
            self.spawner.spawn(job).detach();
        }
        while let Some(event) = self.server.poll_event() {
            if let Event::Closed { reason } = event {
                if reason == CloseReason::Local {
                    continue;
                }
                eprintln!("mcp-sansio: session closed: {reason:?}");
            }
        }
    }
}

/// A wake hook that queues at most one command at a time; the command drains the server's
/// outbox with the loop's fresh `now` (`Server::handle_wake`), and the loop then drains the
/// transmits.
fn wake_hook(remote: Remote<ServerDriven>) -> Arc<dyn Fn() + Send + Sync> {
    let queued = Arc::new(AtomicBool::new(false));
    Arc::new(move || {
        if queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let flag = Arc::clone(&queued);
        let sent = remote.try_send(move |driven: &mut ServerDriven, now| {
            flag.store(false, Ordering::Release);
            driven.server.handle_wake(now);
            driven.after_input();
        });
        if sent.is_err() {
            // Full: the loop is about to run anyway. Closed: nobody is left to wake.
            queued.store(false, Ordering::Release);
        }
    })
}

impl Driven for ServerDriven {
    fn handle_frame(&mut self, now: Instant, frame: Bytes) {
        if let Some(sink) = &mut self.trace {
            sink.frame(&FrameTrace::new(Direction::Recv, now, &frame), &frame);
        }
        self.server.handle_input(now, frame);
        self.after_input();
    }

    fn handle_frame_error(&mut self, now: Instant, error: FrameError) {
        self.server.handle_decode_error(now, error);
        self.after_input();
    }

    fn handle_eof(&mut self, now: Instant) {
        self.server.handle_input_end(now);
        self.after_input();
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.server.handle_timeout(now);
        self.after_input();
    }

    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        let start = buf.len();
        let sent = self.server.poll_transmit(buf).map(|t| t.len);
        if let (Some(sink), Some(_), Some(raw)) = (&mut self.trace, sent, buf.get(start..)) {
            // `poll_transmit` has no `now`; an adapter may read the clock.
            let frame = Bytes::copy_from_slice(raw);
            sink.frame(
                &FrameTrace::new(Direction::Send, Instant::now(), &frame),
                &frame,
            );
        }
        // Draining the outbox inside poll_transmit may have started jobs or answered the last
        // request.
        self.after_input();
        sent
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.server.poll_timeout()
    }

    fn is_closed(&self) -> bool {
        self.server.session().state() == State::Closed && !self.server.session().has_transmit()
    }
}

/// Serves `server` on this process's stdin/stdout with `driver` until the input ends and
/// in-flight requests are answered (or the session closes). Blocks the calling thread.
pub fn serve_server_stdio(driver: Driver<ServerDriven>, server: Server) -> Finished<ServerDriven> {
    let driven = ServerDriven::new(server, &driver);
    driver.serve_stdio(driven)
}

/// [`serve_server_stdio`] on a [`PollDriver`]: no async runtime in the loop, fewer system calls
/// per message (see docs/runtimes.md).
#[cfg(unix)]
pub fn serve_server_stdio_poll(
    driver: PollDriver<ServerDriven>,
    server: Server,
) -> Finished<ServerDriven> {
    let driven = ServerDriven::for_poll(server, &driver);
    driver.serve_stdio(driven)
}
