//! The one client loop: runs the app [`Client`] over any core HTTP client machine that follows
//! the client contract ([`ClientTransport`]: the Streamable `HttpClient`, or the
//! auto-detecting / HTTP+SSE transports behind `Wire`), performs the requests it asks for on the
//! pool and moves bytes and time. Every protocol decision is the machine's.

use std::future::Future;
use std::io;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use hyper::HeaderMap;
use mcp_sansio::app::client::{Client, ClientEvent};
use mcp_sansio::outgoing::{Action, ClientTransport, ExchangeId};
use smol::{LocalExecutor, Timer};

use super::doorbell::Doorbell;
use super::exchange::{self, Input, Streamed, Target};
use super::frames::Frames;
use super::header_pairs;
use super::inflight::InFlight;
use super::pool::Pool;
use super::wake::{next_wake, Wake};
use super::HttpClientOptions;

/// Where the loop's events go. `on_transport_event` answers why, when the transport is gone
/// for good (the app client is then closed, so calls in flight fail at once, and the reason
/// becomes the run's `last_failure`).
pub(crate) struct Sinks<E> {
    pub(crate) on_event: Box<dyn FnMut(ClientEvent)>,
    pub(crate) on_transport_event: Box<dyn FnMut(E) -> Option<String>>,
}

/// What is left when the loop ends, for the report.
pub(crate) struct End<T> {
    pub(crate) transport: T,
    pub(crate) client: Client,
    pub(crate) connections_opened: u64,
    /// Why the last failed HTTP request failed, if one did.
    pub(crate) last_failure: Option<String>,
}

/// The loop's state: the machine, the transport and the exchanges in flight.
struct Loop<T: ClientTransport> {
    client: Client,
    transport: T,
    pool: Rc<Pool>,
    target: Rc<Target>,
    executor: Rc<LocalExecutor<'static>>,
    inflight: InFlight,
    sinks: Sinks<T::Event>,
    last_failure: Option<String>,
    buf: Vec<u8>,
    /// Where outgoing frames are copied to (no allocation per frame).
    frames: Frames,
}

impl<T: ClientTransport> Loop<T> {
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
                if let Some(why) = (self.sinks.on_transport_event)(event) {
                    moved = true;
                    // A request that failed under it (no connection, say) is the detail.
                    self.last_failure = Some(match self.last_failure.take() {
                        Some(under) => format!("{why}: {under}"),
                        None => why,
                    });
                    self.client.close(now);
                }
            }
            while let Some(event) = self.client.poll_event() {
                (self.sinks.on_event)(event);
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
                self.transport.handle_response_failed(now, id, &reason);
                self.last_failure = Some(reason);
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

/// Drives `client` over `transport` while `app` runs; when `app` finishes, closes both
/// (bounded by `close_timeout`) and returns `app`'s output and what is left.
#[allow(clippy::too_many_arguments)] // reason: the parts of one client, taken apart once
pub(crate) async fn drive<T: ClientTransport, F: Future>(
    transport: T,
    mut client: Client,
    target: Target,
    addrs: Vec<String>,
    options: &HttpClientOptions,
    sinks: Sinks<T::Event>,
    executor: Rc<LocalExecutor<'static>>,
    app: F,
) -> io::Result<(F::Output, End<T>)> {
    let doorbell = Arc::new(Doorbell::default());
    let ring = doorbell.clone();
    client.set_waker(Arc::new(move || ring.ring()));
    let pool = Rc::new(Pool::rotating(
        addrs,
        options.max_idle_connections,
        executor.clone(),
    ));
    let mut state = Loop {
        client,
        transport,
        pool: pool.clone(),
        target: Rc::new(target),
        executor,
        inflight: InFlight::new(),
        sinks,
        last_failure: None,
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
    state.inflight.clear();
    let end = End {
        transport: state.transport,
        client: state.client,
        connections_opened: pool.opened(),
        last_failure: state.last_failure,
    };
    match output {
        Some(out) => Ok((out, end)),
        None => Err(io::Error::other(
            "the client loop ended before the application",
        )),
    }
}
