//! The state every task of one server shares on its single thread: the core endpoint, the
//! wakers of response bodies waiting for bytes, and the executor handler jobs run on.
//!
//! Invariant that keeps bodies from missing data: every event that can make the machines
//! produce output (a request or a batch of them, a timer, a job's wake-up) is followed by
//! [`Shared::settle`], which starts the jobs it created and wakes every waiting body that may
//! have output now. A body's own poll only moves output that such an event already produced.
//!
//! Which bodies `settle` looks at: after an input through the endpoint (a request, a body's
//! pull, a listen event), the ones on the streams of the sessions that input touched
//! (`Router::touched_streams`), so a request costs the same with ten or ten thousand GET
//! streams held open; after a wake-up from outside the endpoint (a handler job finishing, a
//! handle on another thread) or a timer, every body, since no session was touched then; the
//! HTTP+SSE transport's bodies, which the endpoint does not track, every time.
//!
//! A job is first polled once right there, on the task that settles (usually the connection
//! task of the request): most handlers answer without waiting (a sync tool, a completion), and
//! then the answer is in the outbox before hyper polls the response body, with no task spawned
//! and no hop through the executor. Only a job that waits is spawned.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::{Rc, Weak};
use std::task::{Context, Waker};
use std::time::Instant;

use mcp_sansio::app::server::Server;
use mcp_sansio::http::sse_transport::Router;
use mcp_sansio::http::{Endpoint, ListenRelay, StreamId, StreamLogEntry};
use mcp_sansio::runtime::Job;
use mcp_sansio::stateless::ListenChange;
use smol::channel::{Sender, TrySendError};
use smol::LocalExecutor;

/// The mutable part, behind one `RefCell` (never borrowed across an `.await`).
pub(crate) struct Core {
    /// Both transports' endpoints behind the core router (Streamable HTTP, HTTP+SSE).
    pub(crate) endpoint: Router<Server>,
    /// Bodies waiting for bytes whose changes the endpoint tracks (`Router::stream_tracked`),
    /// woken (and forgotten) by `settle` once they may have some.
    wakers: HashMap<StreamId, Waker>,
    /// Bodies waiting for bytes whose changes the endpoint does not track (the HTTP+SSE
    /// transport's): woken by every `settle`.
    untracked: HashMap<StreamId, Waker>,
    /// Set after a wake-up from outside the endpoint: the next `settle` checks every body,
    /// not only the touched sessions' ones.
    pub(crate) check_every: bool,
    /// The touched sessions' streams, reused between settles.
    touched: Vec<StreamId>,
    /// Shutting down (the endpoint was told): every body is woken to pull what is left and
    /// end.
    pub(crate) closing: bool,
    /// The deadline the driver's timer is armed for (`None`: not armed). `settle` kicks the
    /// driver only when the endpoint's next deadline is earlier than this.
    pub(crate) armed: Option<Instant>,
    /// Where `settle` puts what the endpoint's logged streams wrote (sessions shared with an
    /// event key): the store appender's queue.
    pub(crate) stream_log: Option<Sender<StreamLogEntry>>,
    /// Where `settle` puts the changes 2026-07-28 exchanges made (with a store): the bus
    /// publisher's queue, for the listen streams of other instances.
    pub(crate) listen_changes: Option<Sender<ListenChange>>,
    /// Where `settle` puts the messages for GET streams that moved to another instance
    /// (with a store): the bus publisher's queue.
    pub(crate) listen_relays: Option<Sender<ListenRelay>>,
    /// Relays that queue refused (full): messages handed back to the endpoint, notices
    /// kept in `notices_waiting` (see `RunReport::relays_refused`).
    pub(crate) relays_refused: u64,
    /// Notices (a GET stream moved or opened here) that queue refused, sent again, first,
    /// when it has room (at most [`MAX_NOTICES_WAITING`]).
    pub(crate) notices_waiting: VecDeque<ListenRelay>,
}

/// Refused notices kept to be sent again at most; past it one is handed back to the endpoint
/// (which counts it lost).
const MAX_NOTICES_WAITING: usize = 1024;

/// Cloned into every task.
#[derive(Clone)]
pub(crate) struct Shared {
    core: Rc<RefCell<Core>>,
    /// Weak: tasks hold `Shared`, and the executor holds the tasks; a strong reference would
    /// keep both alive forever (and their sockets open) after `run` returns.
    executor: Weak<LocalExecutor<'static>>,
    /// Tells the driver to look at its deadline again (coalesced, capacity 1).
    kick: Sender<()>,
}

impl Shared {
    pub(crate) fn new(
        endpoint: Router<Server>,
        executor: &Rc<LocalExecutor<'static>>,
        kick: Sender<()>,
    ) -> Self {
        Shared {
            core: Rc::new(RefCell::new(Core {
                endpoint,
                wakers: HashMap::new(),
                untracked: HashMap::new(),
                check_every: false,
                touched: Vec::new(),
                closing: false,
                armed: None,
                stream_log: None,
                listen_changes: None,
                listen_relays: None,
                relays_refused: 0,
                notices_waiting: VecDeque::new(),
            })),
            executor: Rc::downgrade(executor),
            kick,
        }
    }

    /// Runs `f` on the core, then settles (jobs spawned, bodies woken, driver kicked).
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut Core) -> T) -> T {
        let out = f(&mut self.core.borrow_mut());
        self.settle();
        out
    }

    /// Runs `f` on the core and leaves the settling to the caller: a batch of requests
    /// settles once after its last one (see `staging`), so the jobs and bodies of all of them
    /// are looked at in one pass.
    pub(crate) fn unsettled<T>(&self, f: impl FnOnce(&mut Core) -> T) -> T {
        f(&mut self.core.borrow_mut())
    }

    /// Runs `f` on the core without settling (a body pulling its bytes); `None` when the core
    /// is already borrowed (only possible from a drop inside a borrow).
    pub(crate) fn try_with<T>(&self, f: impl FnOnce(&mut Core) -> T) -> Option<T> {
        let mut core = self.core.try_borrow_mut().ok()?;
        Some(f(&mut core))
    }

    /// Starts every pending handler job (see [`Shared::start`]), wakes every waiting body, and
    /// kicks the driver when the endpoint's next deadline is earlier than the one its timer is
    /// armed for.
    ///
    /// Not on every call: most requests move the next deadline later (idle expiry, request
    /// timeouts), and re-arming an async-io timer costs a reactor wake-up (an eventfd write
    /// and an extra epoll round) per request. A timer armed too early fires, finds nothing
    /// due and is re-armed.
    pub(crate) fn settle(&self) {
        let jobs = {
            let mut core = self.core.borrow_mut();
            let mut jobs = Vec::new();
            while let Some(job) = core.endpoint.poll_job() {
                jobs.push(job);
            }
            jobs
        };
        if !jobs.is_empty() {
            self.start(jobs);
        }
        let (wakers, earlier) = {
            let mut core = self.core.borrow_mut();
            core.hand_out_stream_log();
            core.hand_out_listen_changes();
            core.hand_out_listen_relays();
            let wakers = core.ready_bodies();
            let armed = core.armed;
            let earlier = core
                .endpoint
                .poll_timeout()
                .is_some_and(|next| armed.is_none_or(|at| next < at));
            (wakers, earlier)
        };
        wakers.into_iter().for_each(Waker::wake);
        if earlier {
            let _ = self.kick.try_send(());
        }
    }

    /// Runs `task` on the server's executor (dropped when the server is gone).
    pub(crate) fn spawn(&self, task: impl std::future::Future<Output = ()> + 'static) {
        if let Some(executor) = self.executor.upgrade() {
            executor.spawn(task).detach();
        }
    }

    /// Polls each job once here; spawns the ones that wait. A job that finished pushed its
    /// answer to the outbox (and called the wake hook: the driver settles once more, which
    /// costs nothing on this request's path). The first poll uses a no-op waker: a spawned
    /// job is polled again at once by the executor, with its task's waker.
    fn start(&self, jobs: Vec<Job>) {
        let Some(executor) = self.executor.upgrade() else {
            return; // shut down: dropped jobs answer -32603 through their drop guards
        };
        let mut cx = Context::from_waker(Waker::noop());
        for mut job in jobs {
            if job.as_mut().poll(&mut cx).is_pending() {
                // Detached: a job dropped unfinished answers -32603 through its drop guard.
                executor.spawn(job).detach();
            }
        }
    }
}

impl Core {
    /// Moves what the logged streams wrote to the store appender's queue (before the bodies
    /// are woken: taking it pumps the sessions whose streams may still write). An entry the
    /// full queue refuses is dropped, as the endpoint drops what is not taken.
    fn hand_out_stream_log(&mut self) {
        let Some(log) = &self.stream_log else {
            return;
        };
        let endpoint = self.endpoint.streamable();
        if !endpoint.logs_streams() {
            return;
        }
        while let Some(entry) = endpoint.poll_stream_log() {
            let _ = log.try_send(entry);
        }
    }

    /// Moves the changes 2026-07-28 exchanges made to the bus publisher's queue (none without
    /// a store). A change the full queue refuses is dropped: other instances' listen streams
    /// miss it, as a listen stream misses what happens while it is closed.
    fn hand_out_listen_changes(&mut self) {
        let Some(out) = &self.listen_changes else {
            return;
        };
        let endpoint = self.endpoint.streamable();
        while let Some(change) = endpoint.poll_listen_change() {
            let _ = out.try_send(change);
        }
    }

    /// Moves the relays of GET streams that moved between instances to the bus publisher's
    /// queue (none without a store): first the notices waiting, then the endpoint's. A
    /// message the full queue refuses goes back to the endpoint, as one no instance received
    /// does: it is held for the session's next GET stream here, in its place (and the
    /// session relays no more). A notice it refuses waits to be sent again. Counted.
    fn hand_out_listen_relays(&mut self) {
        let Some(out) = &self.listen_relays else {
            return;
        };
        let endpoint = self.endpoint.streamable();
        self.relays_refused += hand_out_relays(endpoint, out, &mut self.notices_waiting);
    }

    /// The wakers of the waiting bodies that may have bytes or an end to pull now, taken out
    /// of the tables. A body whose stream the endpoint reports quiet (a session's idle GET
    /// stream while its POSTs are answered) stays parked: waking it would only run its
    /// connection task to find nothing. Only the touched sessions' bodies are asked, unless
    /// `check_every` is set (see the module header).
    fn ready_bodies(&mut self) -> Vec<Waker> {
        let Core {
            wakers,
            untracked,
            endpoint,
            closing,
            check_every,
            touched,
            ..
        } = self;
        // The touched list is drained every time, so it never holds more than one entry per
        // session.
        touched.clear();
        let complete = endpoint.touched_streams(touched);
        let every = std::mem::take(check_every) || !complete;
        let mut ready: Vec<Waker> = untracked.drain().map(|(_, waker)| waker).collect();
        // Most requests answer in full at once: no body waits, nothing to collect.
        if wakers.is_empty() {
            return ready;
        }
        if *closing {
            // Shutting down: every body pulls what is left and ends.
            ready.extend(wakers.drain().map(|(_, waker)| waker));
        } else if every {
            wakers.retain(|&id, waker| {
                if endpoint.stream_quiet(id) {
                    return true;
                }
                ready.push(waker.clone());
                false
            });
        } else {
            for id in touched.iter() {
                if wakers.contains_key(id) && !endpoint.stream_quiet(*id) {
                    ready.extend(wakers.remove(id));
                }
            }
        }
        ready
    }

    /// Body `id` waits for bytes.
    pub(crate) fn park(&mut self, id: StreamId, waker: &Waker) {
        if self.endpoint.stream_tracked(id) {
            self.wakers.insert(id, waker.clone());
        } else {
            self.untracked.insert(id, waker.clone());
        }
    }

    /// Body `id` is gone.
    pub(crate) fn forget(&mut self, id: StreamId) {
        self.wakers.remove(&id);
        self.untracked.remove(&id);
    }
}

/// Moves the notices `waiting`, then `endpoint`'s GET-stream relays, to `out`. A message
/// `out` refuses (full) goes back to the endpoint (`handle_listen_relay_lost`); a notice it
/// refuses joins `waiting` (past its bound, it goes back too), to be sent again first.
/// Returns how many `out` refused that were not refused before.
fn hand_out_relays(
    endpoint: &mut Endpoint<Server>,
    out: &Sender<ListenRelay>,
    waiting: &mut VecDeque<ListenRelay>,
) -> u64 {
    while let Some(notice) = waiting.pop_front() {
        if let Err(TrySendError::Full(notice)) = out.try_send(notice) {
            waiting.push_front(notice);
            break;
        }
    }
    let mut refused = 0;
    while let Some(relay) = endpoint.poll_listen_relay() {
        if let Err(TrySendError::Full(relay)) = out.try_send(relay) {
            refused += 1;
            if relay.is_message() || waiting.len() >= MAX_NOTICES_WAITING {
                endpoint.handle_listen_relay_lost(relay);
            } else {
                waiting.push_back(relay);
            }
        }
    }
    refused
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use mcp_sansio::http::{Body, EndpointConfig, HttpMethod, HttpRequestHead, StreamChunk};
    use mcp_sansio::model::Implementation;

    use super::*;

    /// A request of `method` to `/mcp` with the headers a client sends.
    fn head(method: HttpMethod, sid: Option<&str>) -> HttpRequestHead {
        let head = HttpRequestHead::new(method, "/mcp")
            .header("Host", "localhost:3000")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        match sid {
            Some(sid) => head.header("Mcp-Session-Id", sid),
            None => head,
        }
    }

    /// The data of the events on stream `body` now.
    fn stream_data(endpoint: &mut Endpoint<Server>, body: &Body) -> String {
        let Body::Stream(id) = body else {
            panic!("not a stream: {body:?}")
        };
        let mut bytes = Vec::new();
        while let Some(chunk) = endpoint.poll_stream(*id, &mut bytes) {
            if chunk == StreamChunk::End || bytes.len() > 1 << 20 {
                break;
            }
        }
        String::from_utf8(bytes).expect("text")
    }

    /// An endpoint of instance `a` with one session, initialized.
    fn endpoint_with_a_session(now: Instant) -> (Endpoint<Server>, String) {
        let config = EndpointConfig {
            instance_id: Some("a".to_owned()),
            ..EndpointConfig::default()
        };
        let mut endpoint = Endpoint::new(config, |now: Instant| {
            Server::builder(Implementation::new("relay-queue-test", "1")).build(now)
        });
        let sid = open_session(&mut endpoint, now, 1);
        (endpoint, sid)
    }

    /// A session on `endpoint`, initialized (`seed`: the random bytes of its requests).
    fn open_session(endpoint: &mut Endpoint<Server>, now: Instant, seed: u8) -> String {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let resp =
            endpoint.handle_request(now, &head(HttpMethod::Post, None), init.into(), [seed; 16]);
        let sid = resp.get("mcp-session-id").expect("a session id").to_owned();
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let post = head(HttpMethod::Post, Some(&sid));
        let resp = endpoint.handle_request(now, &post, initialized.into(), [seed + 1; 16]);
        assert_eq!(resp.status, 202);
        sid
    }

    /// At the publisher's queue limit a relay is not dropped: it goes back to the endpoint,
    /// which holds it (and what follows) for the session's next GET stream here, in order,
    /// and it is counted.
    #[test]
    fn a_relay_the_full_queue_refuses_is_held_for_the_next_get_stream() {
        let now = Instant::now();
        let (mut endpoint, sid) = endpoint_with_a_session(now);
        // The session's GET stream opened on instance b: a holds no stream, and relays.
        let opened = format!("O{sid}\nb");
        assert!(endpoint.handle_listen_relay(now, opened.as_bytes()));
        for n in 1..=3 {
            let message = format!(
                r#"R{sid}
{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":{n}}}}}"#
            );
            assert!(endpoint.handle_listen_relay(now, message.as_bytes()));
        }
        // A queue with room for one: the first goes, the other two come back.
        let (out, queued) = smol::channel::bounded(1);
        let mut waiting = VecDeque::new();
        assert_eq!(hand_out_relays(&mut endpoint, &out, &mut waiting), 2);
        assert_eq!(endpoint.stats().listen_relays_lost, 2);
        assert_eq!(queued.len(), 1);
        let relays_no_more = hand_out_relays(&mut endpoint, &out, &mut waiting);
        assert_eq!(relays_no_more, 0);
        // The publisher takes the first; instance b receives it.
        let first = queued.try_recv().expect("the first relay");
        endpoint.handle_listen_relay_received(&first);

        let get = head(HttpMethod::Get, Some(&sid));
        let resp = endpoint.handle_request(now, &get, Bytes::new(), [3; 16]);
        assert_eq!(resp.status, 200);
        let text = stream_data(&mut endpoint, &resp.body);
        let (two, three) = (text.find(r#""data":2"#), text.find(r#""data":3"#));
        assert!(two.is_some() && two < three, "{text}");
        assert!(!text.contains(r#""data":1"#), "{text}");
    }

    /// A notice (here: the session's GET stream opened on this instance, for every instance)
    /// the full queue refuses is counted and kept, and sent once the queue has room again,
    /// before later relays; it is not lost.
    #[test]
    fn a_notice_the_full_queue_refuses_is_sent_once_it_has_room() {
        let now = Instant::now();
        let (mut endpoint, sid) = endpoint_with_a_session(now);
        let other_sid = open_session(&mut endpoint, now, 3);
        for (session, seed) in [(&sid, 5), (&other_sid, 6)] {
            let get = head(HttpMethod::Get, Some(session));
            let resp = endpoint.handle_request(now, &get, Bytes::new(), [seed; 16]);
            assert_eq!(resp.status, 200);
        }

        let (out, queued) = smol::channel::bounded(1);
        let mut waiting = VecDeque::new();
        assert_eq!(
            hand_out_relays(&mut endpoint, &out, &mut waiting),
            1,
            "counted"
        );
        assert_eq!(endpoint.stats().listen_relays_lost, 0, "not lost");
        let notice = |relay: ListenRelay| (relay.to_every_instance(), relay.session().to_owned());
        let first = queued.try_recv().expect("the first notice");
        assert_eq!(notice(first), (true, sid));
        assert!(queued.try_recv().is_err());
        // The queue has room again: the second notice goes, and is not counted twice.
        assert_eq!(hand_out_relays(&mut endpoint, &out, &mut waiting), 0);
        let second = queued.try_recv().expect("the second notice, sent again");
        assert_eq!(notice(second), (true, other_sid));
        assert!(waiting.is_empty());
    }
}
