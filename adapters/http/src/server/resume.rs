//! A response stream another instance wrote, resumed here from the store's stream log (see
//! `mcp_sansio::http::Endpoint::resume_elsewhere`): the log is read from its start (a log
//! that lost its first entries is refused with 409 before anything is sent), every entry is
//! handed to the core's `RemoteResume`, and what it returns is written; then the log is
//! polled for what the owner still writes, until the stream ends, the client goes away, the
//! session ends, or the owner is gone (no subscriber on its bus channel), when the requests
//! still open end with the core's error. Another instance's GET stream is read from the
//! log once, and opened here by the endpoint with the events the client missed first.

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_sansio::http::{HttpResponse, RemoteResume};
use mcp_sansio_store::{EventId, RecordKey, StreamKey};
use smol::channel::{self, Receiver, Sender};
use smol::Timer;

use super::refusal::unavailable;
use super::shared::Shared;
use super::sharing::{reply_channel, Sharing};
use super::store::SessionStore;

/// Entries read per round trip at most.
const PAGE: usize = 256;
/// How often the log is read again while the owner still writes.
const POLL: Duration = Duration::from_millis(100);
/// How often the owner's liveness and the session's record are checked.
const CHECK: Duration = Duration::from_secs(1);
/// Chunks waiting for a slow client at most (the task then waits too).
const QUEUED: usize = 64;

/// Serves `resume` from the store: the response head and the body's feed (a task spawned on
/// `shared`'s executor), or the refusal.
pub(crate) async fn serve(
    sharing: &Sharing,
    shared: &Shared,
    resume: RemoteResume,
    keep_alive: Option<Duration>,
) -> Result<(HttpResponse, Receiver<Bytes>), HttpResponse> {
    let store = sharing.store().clone();
    let key = StreamKey::new(resume.session(), resume.stream());
    let first = match store.replay(&key, None, PAGE).await {
        Ok(first) => first,
        Err(_) => return Err(unavailable(&[])),
    };
    if first.first().is_some_and(|e| e.id > EventId(1)) {
        return Err(resume.trimmed());
    }
    let head = resume.head();
    let (tx, rx) = channel::bounded(QUEUED);
    let follow = Follow {
        store,
        key,
        resume,
        tx,
        keep_alive,
    };
    shared.spawn(follow.run(first));
    Ok((head, rx))
}

/// Serves a resume of another instance's GET stream: its log is read to its end (a few
/// pages: a log keeps a bounded number of entries), each entry handed to the core, and the
/// endpoint opens this instance's GET stream with the events the client missed first (409
/// when the log lost some of them, 503 when the store fails).
pub(crate) async fn serve_listen(
    sharing: &Sharing,
    shared: &Shared,
    mut resume: RemoteResume,
) -> HttpResponse {
    let key = StreamKey::new(resume.session(), resume.stream());
    let mut after = None;
    let mut trimmed = false;
    for _ in 0..=RemoteResume::MAX_MISSED / PAGE {
        let page = match sharing.store().replay(&key, after, PAGE).await {
            Ok(page) => page,
            Err(_) => return unavailable(&[]),
        };
        if after.is_none() {
            trimmed = page.first().is_some_and(|e| e.id > EventId(1));
        }
        let more = page.len() == PAGE;
        for event in page {
            after = Some(event.id);
            // A GET stream's events are kept by the resume, for the endpoint.
            let _ = resume.handle_entry(&event.data);
        }
        if !more {
            break;
        }
    }
    shared.with(|core| {
        let endpoint = core.endpoint.streamable();
        endpoint.resume_listen(Instant::now(), resume, trimmed)
    })
}

/// The task that feeds one resumed response.
struct Follow {
    store: SessionStore,
    key: StreamKey,
    resume: RemoteResume,
    tx: Sender<Bytes>,
    keep_alive: Option<Duration>,
}

impl Follow {
    async fn run(mut self, first: Vec<mcp_sansio_store::Event>) {
        let mut page = first;
        let mut last = None;
        let mut checked = Instant::now();
        let mut wrote = Instant::now();
        loop {
            for event in page.drain(..) {
                last = Some(event.id);
                if let Some(bytes) = self.resume.handle_entry(&event.data) {
                    if self.tx.send(bytes).await.is_err() {
                        return;
                    }
                    wrote = Instant::now();
                }
            }
            if self.resume.is_ended() || self.tx.is_closed() {
                return;
            }
            if checked.elapsed() >= CHECK {
                checked = Instant::now();
                if !self.session_lives().await {
                    return;
                }
                if self.owner_gone().await {
                    // What the owner appended before it died, then the error.
                    if let Ok(rest) = self.store.replay(&self.key, last, PAGE).await {
                        for event in rest {
                            if let Some(bytes) = self.resume.handle_entry(&event.data) {
                                let _ = self.tx.send(bytes).await;
                            }
                        }
                    }
                    if !self.resume.is_ended() {
                        let _ = self.tx.send(self.resume.owner_gone()).await;
                    }
                    return;
                }
            }
            if self
                .keep_alive
                .is_some_and(|every| wrote.elapsed() >= every)
            {
                let comment = Bytes::from_static(RemoteResume::KEEP_ALIVE);
                if self.tx.send(comment).await.is_err() {
                    return;
                }
                wrote = Instant::now();
            }
            Timer::after(POLL).await;
            page = match self.store.replay(&self.key, last, PAGE).await {
                Ok(page) => page,
                // Trimmed past what was read, or the store failing: the client resumes again.
                Err(_) => return,
            };
        }
    }

    /// Whether the session's record is still there (a store failure counts as yes).
    async fn session_lives(&self) -> bool {
        let record = RecordKey::Session(self.key.session.clone());
        !matches!(self.store.load(&record).await, Ok(None))
    }

    /// Whether no instance listens on the owner's bus channel (a store failure counts as
    /// no: it may still write).
    async fn owner_gone(&self) -> bool {
        let channel = reply_channel(self.resume.instance());
        matches!(self.store.publish(&channel, b"").await, Ok(0))
    }
}
