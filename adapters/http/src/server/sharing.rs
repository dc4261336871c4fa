//! Sessions shared with other instances through a [`SessionStore`]: the IO around the core
//! endpoint's session changes (see `mcp_sansio::http::Endpoint::poll_session_change`).
//!
//! Per request naming a session (`Mcp-Session-Id`), before the endpoint sees it:
//! - the session's record is loaded (one round trip). An absent record means the session
//!   ended elsewhere (a DELETE, or expiry): the endpoint drops its copy and answers 404. A
//!   session this instance does not hold is restored from it, and one it holds at an older
//!   version (another instance changed it since) is brought up to it;
//! - the record gets its time to live back (`touch`), at most once per quarter of it per
//!   instance (writes reset it too): the store's expiry is the sessions' idle expiry across
//!   instances.
//!
//! After the endpoint answered, before the response goes out: its session changes are
//! written (create, compare-and-swap, or delete plus a bus message to the other instances),
//! one writer at a time, so a response leaves only once what it changed is stored.
//!
//! A POST whose messages all reply to requests another instance sent (sampling, elicitation,
//! roots: their ids name that instance) is published on that instance's bus channel and
//! answered 202 here; the owner hands it to its session. With no owner listening (it
//! stopped), the body is served here, where its replies find no request.
//!
//! A `notifications/cancelled` for a request this instance is not serving is also published
//! to every instance; the one serving it cancels its handler and ends its stream.
//!
//! Event ids are signed with a key the instances share through the store (created once
//! under `mcp:{event-key}:record`, see [`event_key`]). What the SSE response streams of the
//! sessions write is appended to the store's stream logs (`mcp:{<session>}:stream:<origin>-<n>`)
//! by one task, in order; a GET whose `Last-Event-ID` names a stream another instance wrote
//! is served from there (see `resume`): a POST's stream is followed in the log, the GET
//! stream opens here with the events the log holds after that id first.
//!
//! A change a 2026-07-28 exchange made (a tool added, a resource updated), or the
//! application announced (`HttpServer::announcer`), is published to every instance
//! (`listen`); the others hand it to their listen streams.
//!
//! With a task table (`HttpServerOptions::tasks`), each task's state is written to its
//! record (`mcp:task:{<task>}:record`: the running instance's name, a newline, the
//! `DetailedTask`) as it changes, by one task, in order. A `tasks/get` for a task this
//! instance does not hold is answered from the record (or, when the instance running a task
//! not yet finished is gone, with an error); `tasks/update` and `tasks/cancel` are published
//! to that instance (`tasks.<instance>`), which serves them and publishes its answer back
//! (see `task_answers`); the request is answered with it.
//!
//! A store that fails (unreachable, timed out) makes the request a 503.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::app::server::{TaskRecord, Tasks};
use mcp_sansio::http::{
    EventKey, HttpRequestHead, HttpResponse, ListenRelay, SessionChange, StreamLogEntry,
    TaskRequest,
};
use mcp_sansio::stateless::ListenChange;
use mcp_sansio_store::{RecordKey, StoreError, StreamKey, Version, Versioned};
use smol::channel::{self, Receiver, Sender};
use smol::lock::Mutex;
use smol::Timer;

use super::refusal::unavailable;
use super::shared::Shared;
use super::store::{AnySubscription, SessionStore};
use super::task_answers::{self, answer_channel, TaskAnswers};

/// The bus channel that carries the ids of sessions ended by a DELETE.
const ENDED_CHANNEL: &str = "session-ended";

/// The bus channel that carries cancellations to every instance (sender, session, frame).
const CANCEL_CHANNEL: &str = "cancelled";

/// The bus channel that carries the changes 2026-07-28 exchanges made (sender, change).
const LISTEN_CHANNEL: &str = "listen";

/// Listen changes waiting for the publisher at most (past it they are dropped).
const MAX_LISTEN_QUEUE: usize = 1024;

/// GET-stream relays waiting for the publisher at most (past it messages go back to the
/// endpoint, which holds them, and notices wait to be sent again, see
/// `Core::hand_out_listen_relays`).
const MAX_RELAY_QUEUE: usize = 16 * 1024;

/// The bus channel of the GET streams opened without `Last-Event-ID` (every instance
/// follows it; see `mcp_sansio::http::ListenRelay::to_every_instance`).
const OPENED_CHANNEL: &str = "listeners";

/// The record holding the key event ids are signed with (a name no session id takes).
const EVENT_KEY_RECORD: &str = "event-key";

/// What the records of shared secrets are named with (no session id starts so).
const SECRET_PREFIX: &str = "secret.";

/// How long the event key's record lives; each instance that starts resets it.
const EVENT_KEY_TTL: Duration = Duration::from_secs(365 * 24 * 3600);

/// Stream log entries waiting for the appender at most (past it they are dropped).
const MAX_LOG_QUEUE: usize = 16 * 1024;

/// Session versions remembered at most; past it the table is cleared (a write then costs
/// one more round trip, see [`Sharing::save`]).
const MAX_VERSIONS: usize = 100_000;

/// A resume of another instance's stream, as served here.
pub(crate) enum Resumed {
    /// A POST's stream: the head, and the body fed from the store.
    Fed(HttpResponse, Receiver<Bytes>),
    /// The endpoint's answer (this instance's GET stream), or a refusal.
    Answer(HttpResponse),
}

/// What this instance knows of one session record.
struct Known {
    /// The version it last read or wrote.
    version: Version,
    /// When it last reset the record's time to live (`None`: never).
    touched: Option<Instant>,
}

/// The store and what this instance knows of its records.
pub(crate) struct Sharing {
    store: SessionStore,
    /// This instance's id (`EndpointConfig::instance_id`).
    instance: String,
    /// Time to live of a session record (the endpoint's idle timeout).
    ttl: Duration,
    /// What this instance knows of each session record it read or wrote.
    versions: RefCell<HashMap<String, Known>>,
    /// One writer of session changes at a time.
    writes: Mutex<()>,
    /// SSE keep-alive interval of the endpoint, for streams resumed from the store.
    keep_alive: Option<Duration>,
    /// The stream log entries the endpoint handed out, for the appender.
    log_tx: Sender<StreamLogEntry>,
    log_rx: Receiver<StreamLogEntry>,
    /// The listen changes the endpoint handed out, for the publisher.
    listen_tx: Sender<ListenChange>,
    listen_rx: Receiver<ListenChange>,
    /// The relays of GET streams that moved between instances, for the publisher.
    relay_tx: Sender<ListenRelay>,
    relay_rx: Receiver<ListenRelay>,
    /// The servers' task table, shared through the store (see the module docs).
    tasks: Option<Tasks>,
    /// Set when a task changed (capacity 1: coalesced), for the task writer.
    task_kick: Receiver<()>,
    /// One writer of task records at a time.
    task_writes: Mutex<()>,
    /// The task requests forwarded from here waiting for their answers, and the answers
    /// owed to the others.
    task_answers: TaskAnswers,
    /// The bus subscriptions made before the instance serves (see `subscribe`), taken by
    /// `listen`.
    subscribed: RefCell<HashMap<String, AnySubscription>>,
}

impl Sharing {
    pub(crate) fn new(
        store: SessionStore,
        ttl: Duration,
        instance: String,
        keep_alive: Option<Duration>,
        tasks: Option<Tasks>,
    ) -> Self {
        let (log_tx, log_rx) = channel::bounded(MAX_LOG_QUEUE);
        let (listen_tx, listen_rx) = channel::bounded(MAX_LISTEN_QUEUE);
        let (relay_tx, relay_rx) = channel::bounded(MAX_RELAY_QUEUE);
        let (kick_tx, task_kick) = channel::bounded(1);
        if let Some(tasks) = &tasks {
            tasks.share(std::sync::Arc::new(move || {
                let _ = kick_tx.try_send(());
            }));
        }
        Sharing {
            store,
            instance,
            ttl,
            versions: RefCell::default(),
            writes: Mutex::new(()),
            keep_alive,
            log_tx,
            log_rx,
            listen_tx,
            listen_rx,
            relay_tx,
            relay_rx,
            tasks,
            task_kick,
            task_writes: Mutex::new(()),
            task_answers: TaskAnswers::new(),
            subscribed: RefCell::default(),
        }
    }

    /// The bus channels this instance follows while it runs.
    fn channels(&self) -> [String; 8] {
        [
            ENDED_CHANNEL.to_owned(),
            reply_channel(&self.instance),
            relay_channel(&self.instance),
            OPENED_CHANNEL.to_owned(),
            CANCEL_CHANNEL.to_owned(),
            task_channel(&self.instance),
            answer_channel(&self.instance),
            LISTEN_CHANNEL.to_owned(),
        ]
    }

    /// Subscribes to every channel this instance follows (keeping the subscriptions made on
    /// an earlier, failed try). Done before the instance serves: the others take a channel
    /// without subscribers for an instance that is gone, so an instance that answered a
    /// request is already listening on its channels.
    pub(crate) async fn subscribe(&self) -> Result<(), StoreError> {
        for channel in self.channels() {
            if self.subscribed.borrow().contains_key(&channel) {
                continue;
            }
            let subscription = self.store.subscribe(&channel).await?;
            self.subscribed.borrow_mut().insert(channel, subscription);
        }
        Ok(())
    }

    pub(crate) fn store(&self) -> &SessionStore {
        &self.store
    }

    /// Where the stream log entries go (see `Core::stream_log`).
    pub(crate) fn log_sender(&self) -> Sender<StreamLogEntry> {
        self.log_tx.clone()
    }

    /// Where the listen changes go (see `Core::listen_changes`).
    pub(crate) fn listen_sender(&self) -> Sender<ListenChange> {
        self.listen_tx.clone()
    }

    /// Publishes the listen changes to every instance, in order, until the queue closes; a
    /// failed publish is dropped (the other instances' listen streams miss that change).
    async fn publish_listen_changes(&self) {
        while let Ok(change) = self.listen_rx.recv().await {
            let Ok(json) = serde_json::to_vec(&change) else {
                continue;
            };
            let payload = [self.instance.as_bytes(), &json].join(&b'\n');
            let _ = self.store.publish(LISTEN_CHANNEL, &payload).await;
        }
    }

    /// Where the GET-stream relays go (see `Core::listen_relays`).
    pub(crate) fn relay_sender(&self) -> Sender<ListenRelay> {
        self.relay_tx.clone()
    }

    /// Publishes the GET-stream relays, in order, each on the channel of the instance it
    /// names, until the queue closes, and tells the endpoint how each message went: received,
    /// or not (no instance received it, that instance is gone, or the publish failed: it goes
    /// back to the endpoint, which holds it for the session's next GET stream here). A failed
    /// notice is dropped. Each relay taken makes room in the queue: notices it refused before
    /// are handed to it again.
    async fn publish_relays(&self, shared: &Shared) {
        while let Ok(relay) = self.relay_rx.recv().await {
            if shared.try_with(|core| !core.notices_waiting.is_empty()) == Some(true) {
                shared.settle();
            }
            let channel = if relay.to_every_instance() {
                OPENED_CHANNEL.to_owned()
            } else {
                relay_channel(relay.instance())
            };
            let published = self.store.publish(&channel, &relay.payload()).await;
            if !relay.is_message() {
                continue;
            }
            shared.with(|core| {
                let endpoint = core.endpoint.streamable();
                match published {
                    Ok(0) | Err(_) => endpoint.handle_listen_relay_lost(relay),
                    Ok(_) => endpoint.handle_listen_relay_received(&relay),
                }
            });
        }
    }

    /// A GET the endpoint says names another instance's stream (after [`Sharing::before`]
    /// restored the session): a POST's stream is served from the store, the GET stream is
    /// opened here with what the store's log holds after the client's id first. `None`: hand
    /// it to the endpoint.
    pub(crate) async fn resume_elsewhere(
        &self,
        shared: &Shared,
        head: &HttpRequestHead,
    ) -> Option<Resumed> {
        let resume = shared
            .try_with(|core| {
                let endpoint = core.endpoint.streamable();
                endpoint.resume_elsewhere(Instant::now(), head)
            })
            .flatten()?;
        if resume.is_listen() {
            let answer = super::resume::serve_listen(self, shared, resume).await;
            return Some(Resumed::Answer(answer));
        }
        Some(
            match super::resume::serve(self, shared, resume, self.keep_alive).await {
                Ok((head, feed)) => Resumed::Fed(head, feed),
                Err(refusal) => Resumed::Answer(refusal),
            },
        )
    }

    /// Appends the stream log entries, in order, until the queue closes; a failed append is
    /// dropped (a resume elsewhere then misses that event).
    async fn append_log(&self) {
        while let Ok(entry) = self.log_rx.recv().await {
            let key = StreamKey::new(entry.session, entry.stream);
            let _ = self.store.append(&key, &entry.data).await;
        }
    }

    /// Before the endpoint sees `head` and `body` (see the module docs); `Err`: the answer,
    /// given here (the store failed, or the body went to the instance that owns it).
    pub(crate) async fn before(
        &self,
        shared: &Shared,
        head: &HttpRequestHead,
        body: &Bytes,
    ) -> Result<(), HttpResponse> {
        let Some(sid) = head.get("mcp-session-id") else {
            self.claim_state(shared, head, body).await?;
            return self.route_task(shared, head, body).await;
        };
        if sid == EVENT_KEY_RECORD || sid.starts_with(SECRET_PREFIX) {
            return Ok(());
        }
        let key = RecordKey::Session(sid.to_owned());
        let record = match self.store.load(&key).await {
            Ok(record) => record,
            // An id the store cannot name is not a session: the endpoint answers it.
            Err(StoreError::InvalidKey(_)) => None,
            Err(_) => return Err(unavailable(body)),
        };
        let Some(record) = record else {
            // Ended elsewhere (a DELETE, or expiry): the endpoint answers 404.
            self.forget(shared, sid);
            return Ok(());
        };
        self.adopt(shared, sid, record);
        if self.touch_due(sid) {
            match self.store.touch(&key, self.ttl).await {
                Ok(true) => self.touched(sid),
                Ok(false) => self.forget(shared, sid),
                Err(_) => return Err(unavailable(body)),
            }
        }
        self.forward(shared, head, sid, body).await?;
        self.spread_cancellations(shared, head, sid, body).await;
        Ok(())
    }

    /// Claims in the store the `requestState` a 2026-07-28 request carries, when the endpoint
    /// names a claim (a shared single-use guard): `Err` with the endpoint's refusal when
    /// another redemption claimed it first.
    async fn claim_state(
        &self,
        shared: &Shared,
        head: &HttpRequestHead,
        body: &Bytes,
    ) -> Result<(), HttpResponse> {
        let now_ms = unix_ms();
        let claim = shared
            .try_with(|core| {
                let endpoint = core.endpoint.streamable();
                endpoint.request_state_claim(head, body, now_ms)
            })
            .flatten();
        let Some(claim) = claim else {
            return Ok(());
        };
        match self.store.claim(claim.token.as_bytes(), claim.ttl).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(claim.refusal()),
            Err(_) => Err(unavailable(body)),
        }
    }

    /// Serves from the store a task request for a task another instance runs (`Err`: the
    /// answer); one for a task this instance holds, or that no instance stored, is the
    /// endpoint's.
    async fn route_task(
        &self,
        shared: &Shared,
        head: &HttpRequestHead,
        body: &Bytes,
    ) -> Result<(), HttpResponse> {
        let Some(tasks) = &self.tasks else {
            return Ok(());
        };
        let request = shared
            .try_with(|core| core.endpoint.streamable().task_request(head, body))
            .flatten();
        let Some(request) = request else {
            return Ok(());
        };
        if tasks.holds(&request.task_id, unix_ms()) {
            return Ok(());
        }
        let record = match self.store.load(&task_key(&request)).await {
            Ok(Some(record)) => record,
            Ok(None) | Err(StoreError::InvalidKey(_)) => return Ok(()),
            Err(_) => return Err(unavailable(body)),
        };
        let Some((owner, detailed)) = split_task_record(&record.bytes) else {
            return Ok(());
        };
        let channel = task_channel(owner);
        if request.is_get {
            let finished = matches!(
                detailed["status"].as_str(),
                Some("completed" | "failed" | "cancelled")
            );
            // A task still running needs its instance: an empty message finds out.
            if !finished && matches!(self.store.publish(&channel, b"").await, Ok(0)) {
                return Err(request.gone());
            }
            return Err(request.answer(&detailed));
        }
        let publish =
            |payload: Vec<u8>| async move { self.store.publish(&channel, &payload).await };
        Err(self
            .task_answers
            .forward(&self.instance, &request, body, publish)
            .await)
    }

    /// Publishes the answers to the task requests other instances forwarded here, in order,
    /// forever (a failed publish is dropped: that instance answers that none came).
    async fn publish_task_answers(&self) {
        while let Some((channel, payload)) = self.task_answers.next_outgoing().await {
            let _ = self.store.publish(&channel, &payload).await;
        }
    }

    /// Writes the changed tasks' records, in order, each time the table says some changed,
    /// forever (a failed write is dropped: other instances see the task's earlier state).
    async fn write_tasks(&self) {
        let Some(tasks) = &self.tasks else {
            return std::future::pending().await;
        };
        while self.task_kick.recv().await.is_ok() {
            self.flush_tasks(tasks).await;
        }
    }

    /// Writes the records of the tasks changed so far, one writer at a time (so an older
    /// state never overwrites a newer one).
    async fn flush_tasks(&self, tasks: &Tasks) {
        let _writer = self.task_writes.lock().await;
        while let Some(record) = tasks.poll_change(unix_ms()) {
            let _ = self.write_task(&record).await;
        }
    }

    /// Stores one task's record: created, or swapped at the version read (only the running
    /// instance writes it).
    async fn write_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        let key = RecordKey::Task(task.id.clone());
        let json =
            serde_json::to_vec(&task.detailed).map_err(|e| StoreError::Backend(e.to_string()))?;
        let bytes = [self.instance.as_bytes(), &json].join(&b'\n');
        match self.store.create(&key, &bytes, task.ttl).await {
            Err(StoreError::Exists) => {}
            other => return other.map(drop),
        }
        let mut expected = match self.store.load(&key).await? {
            Some(stored) => stored.version,
            None => Version(0),
        };
        // Bounded: the first try, then once at the version the store reported.
        for _ in 0..2 {
            match self
                .store
                .compare_and_swap(&key, expected, &bytes, task.ttl)
                .await
            {
                Err(StoreError::Conflict { current }) => expected = current,
                other => return other.map(drop),
            }
        }
        Ok(())
    }

    /// Publishes to every instance the cancellations of requests this one is not serving
    /// (best effort: the body is served here in any case).
    async fn spread_cancellations(
        &self,
        shared: &Shared,
        head: &HttpRequestHead,
        sid: &str,
        body: &Bytes,
    ) {
        let frames = shared
            .try_with(|core| {
                core.endpoint
                    .streamable()
                    .cancellations_elsewhere(head, body)
            })
            .unwrap_or_default();
        for frame in frames {
            let payload = [self.instance.as_bytes(), sid.as_bytes(), &frame].join(&b'\n');
            let _ = self.store.publish(CANCEL_CHANNEL, &payload).await;
        }
    }

    /// Publishes a body of replies to the instance that sent the requests (`Err(202)`).
    async fn forward(
        &self,
        shared: &Shared,
        head: &HttpRequestHead,
        sid: &str,
        body: &Bytes,
    ) -> Result<(), HttpResponse> {
        let owner = shared
            .try_with(|core| core.endpoint.streamable().reply_owner(head, body))
            .flatten();
        let Some(owner) = owner else {
            return Ok(());
        };
        let mut payload = Vec::with_capacity(sid.len() + 1 + body.len());
        payload.extend_from_slice(sid.as_bytes());
        payload.push(b'\n');
        payload.extend_from_slice(body);
        match self.store.publish(&reply_channel(&owner), &payload).await {
            Ok(0) => Ok(()),
            Ok(_) => Err(HttpResponse::status(202)),
            Err(_) => Err(unavailable(body)),
        }
    }

    /// Hands the endpoint the stored state of session `sid` when it does not hold the
    /// session or holds an older state (synchronous: no other request runs in between, so
    /// concurrent requests restore a session once and never go back to an older version).
    fn adopt(&self, shared: &Shared, sid: &str, record: Versioned) {
        let known = self.versions.borrow().get(sid).map(|k| k.version);
        let held = shared
            .try_with(|core| core.endpoint.streamable().holds_session(sid))
            .unwrap_or(false);
        if held && known.is_some_and(|v| v >= record.version) {
            return;
        }
        let restored = shared.with(|core| {
            let endpoint = core.endpoint.streamable();
            endpoint.handle_restore(Instant::now(), sid, &record.bytes)
        });
        // A refused restore (a full table, a snapshot this build cannot read) leaves the
        // session unknown here: the endpoint answers 404, as for any session it cannot serve.
        if restored.is_ok() {
            self.remember(sid, record.version, None);
        }
    }

    /// Whether this instance last reset session `sid`'s time to live a quarter of it ago or
    /// more (or never).
    fn touch_due(&self, sid: &str) -> bool {
        let versions = self.versions.borrow();
        let last = versions.get(sid).and_then(|k| k.touched);
        last.is_none_or(|at| at.elapsed() >= self.ttl / 4)
    }

    fn touched(&self, sid: &str) {
        if let Some(known) = self.versions.borrow_mut().get_mut(sid) {
            known.touched = Some(Instant::now());
        }
    }

    /// After the endpoint answered: writes every task and session change it handed out.
    pub(crate) async fn after(&self, shared: &Shared, body: &[u8]) -> Result<(), HttpResponse> {
        if let Some(tasks) = &self.tasks {
            // A task this request created or changed is stored before its answer leaves.
            self.flush_tasks(tasks).await;
        }
        let _writer = self.writes.lock().await;
        let mut failed = false;
        loop {
            let change = shared
                .try_with(|core| core.endpoint.streamable().poll_session_change())
                .flatten();
            let Some(change) = change else {
                break;
            };
            failed |= self.write(shared, change).await.is_err();
        }
        if failed {
            return Err(unavailable(body));
        }
        Ok(())
    }

    async fn write(&self, shared: &Shared, change: SessionChange) -> Result<(), StoreError> {
        match change {
            SessionChange::Saved {
                id,
                created,
                snapshot,
            } => self.save(shared, &id, created, &snapshot).await,
            SessionChange::Ended { id } => {
                self.versions.borrow_mut().remove(&id);
                self.store.delete(&RecordKey::Session(id.clone())).await?;
                self.store.publish(ENDED_CHANNEL, id.as_bytes()).await?;
                Ok(())
            }
        }
    }

    /// Stores a session's snapshot: created if new, else swapped at the version this
    /// instance knows (the latest version when another instance wrote since: the latest
    /// change wins). A record gone meanwhile means the session ended elsewhere.
    async fn save(
        &self,
        shared: &Shared,
        id: &str,
        created: bool,
        snapshot: &[u8],
    ) -> Result<(), StoreError> {
        let key = RecordKey::Session(id.to_owned());
        if created {
            match self.store.create(&key, snapshot, self.ttl).await {
                Ok(version) => {
                    self.remember(id, version, Some(Instant::now()));
                    return Ok(());
                }
                Err(StoreError::Exists) => {}
                Err(e) => return Err(e),
            }
        }
        let known = self.versions.borrow().get(id).map(|k| k.version);
        let mut expected = known.unwrap_or(Version(0));
        // Bounded: the first try, then once at the version the store reported.
        for _ in 0..2 {
            match self
                .store
                .compare_and_swap(&key, expected, snapshot, self.ttl)
                .await
            {
                Ok(version) => {
                    self.remember(id, version, Some(Instant::now()));
                    return Ok(());
                }
                Err(StoreError::Conflict { current }) => expected = current,
                Err(StoreError::NotFound) => {
                    self.forget(shared, id);
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        Err(StoreError::Backend(
            "session record kept changing".to_owned(),
        ))
    }

    /// Notes the version of session `id`'s record, and when its time to live was reset.
    fn remember(&self, id: &str, version: Version, touched: Option<Instant>) {
        let mut versions = self.versions.borrow_mut();
        if versions.len() >= MAX_VERSIONS && !versions.contains_key(id) {
            versions.clear();
        }
        versions.insert(id.to_owned(), Known { version, touched });
    }

    /// Session `id` ended elsewhere: dropped here.
    fn forget(&self, shared: &Shared, id: &str) {
        self.versions.borrow_mut().remove(id);
        shared.with(|core| {
            let endpoint = core.endpoint.streamable();
            endpoint.handle_session_ended(Instant::now(), id)
        });
    }

    /// Until `stop`: ends here the sessions other instances end, as their DELETEs are
    /// announced, and hands this instance's sessions the replies other instances received.
    pub(crate) async fn listen(self: Rc<Self>, shared: Shared, stop: Receiver<()>) {
        let ended = self.follow(ENDED_CHANNEL.to_owned(), |id| {
            if let Ok(id) = std::str::from_utf8(id) {
                self.forget(&shared, id);
            }
        });
        let replies = self.follow(reply_channel(&self.instance), |payload| {
            let Some(split) = payload.iter().position(|&b| b == b'\n') else {
                return;
            };
            let Ok(sid) = std::str::from_utf8(&payload[..split]) else {
                return;
            };
            let body = Bytes::copy_from_slice(&payload[split + 1..]);
            shared.with(|core| {
                let endpoint = core.endpoint.streamable();
                endpoint.handle_forwarded(Instant::now(), sid, body)
            });
        });
        let relays = self.follow(relay_channel(&self.instance), |payload| {
            shared.with(|core| {
                let endpoint = core.endpoint.streamable();
                endpoint.handle_listen_relay(Instant::now(), payload)
            });
        });
        let opened = self.follow(OPENED_CHANNEL.to_owned(), |payload| {
            shared.with(|core| {
                let endpoint = core.endpoint.streamable();
                endpoint.handle_listen_relay(Instant::now(), payload)
            });
        });
        let cancels = self.follow(CANCEL_CHANNEL.to_owned(), |payload| {
            let mut parts = payload.splitn(3, |&b| b == b'\n');
            let (Some(from), Some(sid), Some(frame)) = (parts.next(), parts.next(), parts.next())
            else {
                return;
            };
            let (Ok(sid), true) = (std::str::from_utf8(sid), from != self.instance.as_bytes())
            else {
                return;
            };
            let frame = Bytes::copy_from_slice(frame);
            shared.with(|core| {
                let endpoint = core.endpoint.streamable();
                endpoint.handle_forwarded(Instant::now(), sid, frame)
            });
        });
        let task_requests = self.follow(task_channel(&self.instance), |payload| {
            let (Some(tasks), Some((from, token, body))) =
                (&self.tasks, task_answers::split_request(payload))
            else {
                return;
            };
            let body = Bytes::copy_from_slice(body);
            if let Some(answer) = tasks.handle_forwarded(&body, unix_ms()) {
                self.task_answers.queue_answer(from, token, &answer);
            }
        });
        let task_answers = self.follow(answer_channel(&self.instance), |payload| {
            self.task_answers.handle_answer(payload);
        });
        let changes = self.follow(LISTEN_CHANNEL.to_owned(), |payload| {
            let Some(split) = payload.iter().position(|&b| b == b'\n') else {
                return;
            };
            if &payload[..split] == self.instance.as_bytes() {
                return; // this instance's own listen streams had it already
            }
            if let Ok(change) = serde_json::from_slice::<ListenChange>(&payload[split + 1..]) {
                shared.with(|core| core.endpoint.announce_listen_change(&change));
            }
        });
        let stopped = async {
            let _ = stop.recv().await;
        };
        let kept = self.keep_listeners(&shared);
        let listening = smol::future::or(
            smol::future::or(ended, kept),
            smol::future::or(replies, cancels),
        );
        let listening = smol::future::or(listening, self.append_log());
        let listening = smol::future::or(
            listening,
            smol::future::or(
                smol::future::or(relays, opened),
                self.publish_relays(&shared),
            ),
        );
        let listening = smol::future::or(
            listening,
            smol::future::or(changes, self.publish_listen_changes()),
        );
        let listening = smol::future::or(
            listening,
            smol::future::or(task_requests, self.write_tasks()),
        );
        let listening = smol::future::or(
            listening,
            smol::future::or(task_answers, self.publish_task_answers()),
        );
        smol::future::or(listening, stopped).await;
    }

    /// Every quarter of the time to live, resets it for the sessions whose clients hold a
    /// response stream open here (they may send no request for longer), forever.
    async fn keep_listeners(&self, shared: &Shared) {
        loop {
            Timer::after(self.ttl / 4).await;
            let listening = shared
                .try_with(|core| core.endpoint.streamable().listening_sessions())
                .unwrap_or_default();
            for sid in listening {
                if !self.touch_due(&sid) {
                    continue;
                }
                match self
                    .store
                    .touch(&RecordKey::Session(sid.clone()), self.ttl)
                    .await
                {
                    Ok(true) => self.touched(&sid),
                    Ok(false) => self.forget(shared, &sid),
                    Err(_) => {}
                }
            }
        }
    }

    /// Hands every message of `channel` to `on`, forever; resubscribes (after a pause) when
    /// the subscription fails.
    async fn follow(&self, channel: String, on: impl Fn(&[u8])) {
        let mut prepared = self.subscribed.borrow_mut().remove(&channel);
        loop {
            let subscription = match prepared.take() {
                Some(subscription) => Ok(subscription),
                None => self.store.subscribe(&channel).await,
            };
            let Ok(mut subscription) = subscription else {
                Timer::after(Duration::from_secs(1)).await;
                continue;
            };
            loop {
                match subscription.next().await {
                    Ok(message) => on(&message),
                    Err(StoreError::Lagged) => continue,
                    Err(_) => break,
                }
            }
            Timer::after(Duration::from_secs(1)).await;
        }
    }
}

/// The key every instance sharing `store` signs event ids with (see
/// [`SessionStore::shared_secret`]).
pub(crate) async fn event_key(store: &SessionStore) -> Result<EventKey, StoreError> {
    let secret = shared_secret(store, EVENT_KEY_RECORD).await?;
    EventKey::new(&secret)
        .ok_or_else(|| StoreError::Backend("the stored event key is too short".to_owned()))
}

/// The secret in record `record` that every instance sharing `store` uses: created (32
/// random bytes) by the first instance that asks, read by the others; each resets its time
/// to live (a year).
pub(crate) async fn shared_secret(
    store: &SessionStore,
    record: &str,
) -> Result<Vec<u8>, StoreError> {
    let key = RecordKey::Session(record.to_owned());
    let mut fresh = [0u8; 32];
    getrandom::fill(&mut fresh).map_err(|e| StoreError::Backend(e.to_string()))?;
    match store.create(&key, &fresh, EVENT_KEY_TTL).await {
        Ok(_) => return Ok(fresh.to_vec()),
        Err(StoreError::Exists) => {}
        Err(e) => return Err(e),
    }
    let stored = store.load(&key).await?.ok_or(StoreError::NotFound)?;
    store.touch(&key, EVENT_KEY_TTL).await?;
    if stored.bytes.len() < 32 {
        return Err(StoreError::Backend(format!(
            "the stored secret {record} is too short"
        )));
    }
    Ok(stored.bytes.to_vec())
}

/// The wall clock now, in Unix milliseconds.
fn unix_ms() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// The record of the task `request` names.
fn task_key(request: &TaskRequest) -> RecordKey {
    RecordKey::Task(request.task_id.clone())
}

/// The running instance's name and the `DetailedTask` of a stored task record.
fn split_task_record(bytes: &[u8]) -> Option<(&str, serde_json::Value)> {
    let split = bytes.iter().position(|&b| b == b'\n')?;
    let owner = std::str::from_utf8(&bytes[..split]).ok()?;
    let detailed = serde_json::from_slice(&bytes[split + 1..]).ok()?;
    Some((owner, detailed))
}

/// The bus channel of the task requests instance `instance` serves for the others.
fn task_channel(instance: &str) -> String {
    format!("tasks.{instance}")
}

/// The record of the shared secret `name` (see [`SessionStore::shared_secret`]).
pub(crate) fn secret_record(name: &str) -> String {
    format!("{SECRET_PREFIX}{name}")
}

/// The bus channel of the GET-stream relays for instance `instance` (see
/// `mcp_sansio::http::ListenRelay`).
fn relay_channel(instance: &str) -> String {
    format!("listeners.{instance}")
}

/// The bus channel of the replies instance `instance` owns (an instance listens there while
/// it runs: its subscriber count says whether it is alive).
pub(crate) fn reply_channel(instance: &str) -> String {
    format!("replies.{instance}")
}
