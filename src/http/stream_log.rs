//! The stream log: what the SSE response streams of a shared session write, handed to the
//! driver to append to a store (one log per stream, see [`StreamLogEntry`]), and read back on
//! another instance to resume a stream there ([`RemoteResume`]). The entries are encoded and
//! read here, so both sides agree on them:
//!
//! - `O` then the ids of the requests the stream answers, one JSON value per line: the stream
//!   opened;
//! - `E`, the event's sequence number (8 bytes, big-endian), then the encoded SSE event;
//! - `A` then one request id: that request's response was written;
//! - `Z`: the stream ended (every request answered or cancelled).

use std::collections::VecDeque;

use bytes::Bytes;

use super::event_id::Signed;
use super::streams::STANDALONE;
use super::types::HttpResponse;
use crate::framing::write_event;
use crate::jsonrpc::{encode_error, ErrorObject, MissingId, RequestId};

/// Entries one session keeps for the driver at most; past it the oldest is dropped and
/// counted (`EndpointStats::stream_log_dropped`).
const MAX_PENDING: usize = 4096;

/// Request ids a [`RemoteResume`] remembers at most (a batch's stream names several).
const MAX_IDS: usize = 1024;

/// One entry to append to the store's log of stream `stream` of session `session`, in the
/// order [`Endpoint::poll_stream_log`](super::Endpoint::poll_stream_log) hands them out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamLogEntry {
    /// The session id.
    pub session: String,
    /// The stream's name in the store: `<origin>-<stream>` (see docs/scale-out.md).
    pub stream: String,
    /// The entry's bytes.
    pub data: Bytes,
}

/// The store's name of stream `key` of the session copy `origin`.
pub(crate) fn stream_name(origin: &str, key: u64) -> String {
    format!("{origin}-{key}")
}

/// One session's entries waiting for the driver: (stream key, entry).
#[derive(Debug, Default)]
pub(crate) struct PendingLog {
    entries: VecDeque<(u64, Bytes)>,
    /// Entries dropped at the bound since the endpoint last looked.
    pub(crate) dropped: u64,
}

impl PendingLog {
    /// Whether entries wait to be taken.
    pub(crate) fn has_entries(&self) -> bool {
        !self.entries.is_empty()
    }

    fn push(&mut self, key: u64, data: Vec<u8>) {
        if self.entries.len() >= MAX_PENDING {
            self.entries.pop_front();
            self.dropped += 1;
        }
        self.entries.push_back((key, Bytes::from(data)));
    }

    /// Stream `key` opened, answering `ids`.
    pub(crate) fn opened<'a>(&mut self, key: u64, ids: impl Iterator<Item = &'a RequestId>) {
        let mut data = vec![b'O'];
        for id in ids {
            id.write_json(&mut data);
            data.push(b'\n');
        }
        self.push(key, data);
    }

    /// Event `seq` (encoded as `event`) was written on stream `key`.
    pub(crate) fn event(&mut self, key: u64, seq: u64, event: &[u8]) {
        let mut data = Vec::with_capacity(9 + event.len());
        data.push(b'E');
        data.extend_from_slice(&seq.to_be_bytes());
        data.extend_from_slice(event);
        self.push(key, data);
    }

    /// The response to `id` was written on stream `key`.
    pub(crate) fn answered(&mut self, key: u64, id: &RequestId) {
        let mut data = vec![b'A'];
        id.write_json(&mut data);
        self.push(key, data);
    }

    /// Stream `key` ended.
    pub(crate) fn ended(&mut self, key: u64) {
        self.push(key, vec![b'Z']);
    }

    /// Takes the entries, oldest first.
    pub(crate) fn take(&mut self) -> VecDeque<(u64, Bytes)> {
        std::mem::take(&mut self.entries)
    }
}

/// A `Last-Event-ID` naming a stream another instance wrote: the driver serves it from the
/// store (see `Endpoint::resume_elsewhere` and docs/scale-out.md).
///
/// A POST's stream ([`RemoteResume::is_listen`] false): the driver answers with
/// [`RemoteResume::head`], reads the stream's log from its start, hands each entry to
/// [`RemoteResume::handle_entry`] and writes what that returns, follows the log until
/// [`RemoteResume::is_ended`], and, when the instance that owns the stream is gone with the
/// stream not ended, writes [`RemoteResume::owner_gone`] and ends.
///
/// The GET stream of another copy of the session ([`RemoteResume::is_listen`]): the driver
/// reads the stream's log from its start once, hands each entry to
/// [`RemoteResume::handle_entry`] (which keeps the events the client missed), and hands the
/// resume to [`Endpoint::resume_listen`](super::Endpoint::resume_listen), which opens this
/// instance's GET stream with those events first.
#[derive(Debug)]
pub struct RemoteResume {
    session: String,
    stream: String,
    instance: String,
    /// The copy of the session that wrote the stream (`<instance>.<n>`).
    origin: String,
    /// Events up to this sequence number were seen by the client.
    after: u64,
    /// The highest sequence number of the stream known here (the client's, or read from the
    /// log).
    seen: u64,
    /// The requests the stream answers, and those answered so far.
    open: Vec<RequestId>,
    answered: Vec<RequestId>,
    ended: bool,
    /// The GET stream: the events after `after`, kept for `Endpoint::resume_listen`.
    listen: Option<VecDeque<Bytes>>,
    /// The log held an event at or before the client's (nothing after it was trimmed).
    reached: bool,
    /// More events followed the client's than a GET stream's resume keeps.
    overflowed: bool,
}

impl RemoteResume {
    pub(crate) fn new(session: &str, signed: &Signed<'_>) -> Self {
        RemoteResume {
            session: session.to_owned(),
            stream: stream_name(signed.origin, signed.id.stream),
            instance: signed.instance().to_owned(),
            origin: signed.origin.to_owned(),
            after: signed.id.seq,
            seen: signed.id.seq,
            open: Vec::new(),
            answered: Vec::new(),
            ended: false,
            listen: (signed.id.stream == STANDALONE).then(VecDeque::new),
            reached: false,
            overflowed: false,
        }
    }

    /// Whether the stream is another copy's GET stream (served by
    /// [`Endpoint::resume_listen`](super::Endpoint::resume_listen) once its log was read).
    pub fn is_listen(&self) -> bool {
        self.listen.is_some()
    }

    /// Whether events the client missed may be gone: the log lost its first entries
    /// (`trimmed`) and holds none at or before the client's id, or more followed it than
    /// are kept.
    pub(crate) fn lost_events(&self, trimmed: bool) -> bool {
        (trimmed && !self.reached) || self.overflowed
    }

    /// The events after the client's id, read from the GET stream's log.
    pub(crate) fn take_missed(&mut self) -> VecDeque<Bytes> {
        self.listen.take().unwrap_or_default()
    }

    /// The copy of the session that wrote the stream, and the last event of it known here.
    pub(crate) fn seen(&self) -> (&str, u64) {
        (&self.origin, self.seen)
    }

    /// The session id.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// The stream's name in the store.
    pub fn stream(&self) -> &str {
        &self.stream
    }

    /// The instance that wrote the stream (its bus name).
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// The most events a GET stream's resume keeps (a log holds fewer entries).
    pub const MAX_MISSED: usize = 4096;

    /// A comment line the driver writes when the response was silent for the SSE
    /// keep-alive interval (not an event: it carries no id).
    pub const KEEP_ALIVE: &'static [u8] = b": keep-alive\n\n";

    /// The response head: 200, `text/event-stream`; the driver supplies the body.
    pub fn head(&self) -> HttpResponse {
        HttpResponse::status(200)
            .with_header("Content-Type", "text/event-stream")
            .with_header("Cache-Control", "no-cache")
    }

    /// The answer when the log no longer holds the stream's first entries (it keeps a bounded
    /// number): what followed the client's id may be lost, so the resume is refused.
    pub fn trimmed(&self) -> HttpResponse {
        super::reply::error(
            409,
            "Conflict: Last-Event-ID is older than the stream log holds",
        )
    }

    /// One entry of the stream's log, in order: the bytes to write (an event the client has
    /// not seen), or `None`. A GET stream's events are kept instead (at most
    /// [`RemoteResume::MAX_MISSED`]), and `None` returned.
    pub fn handle_entry(&mut self, data: &[u8]) -> Option<Bytes> {
        let (&tag, rest) = data.split_first()?;
        match tag {
            b'E' if rest.len() >= 8 => {
                let (seq, event) = rest.split_at(8);
                let seq = u64::from_be_bytes(seq.try_into().ok()?);
                self.reached |= seq <= self.after;
                self.seen = self.seen.max(seq);
                let event = (seq > self.after).then(|| Bytes::copy_from_slice(event))?;
                let Some(missed) = &mut self.listen else {
                    return Some(event);
                };
                if missed.len() < Self::MAX_MISSED {
                    missed.push_back(event);
                } else {
                    self.overflowed = true;
                }
                None
            }
            b'O' => {
                let ids = rest.split(|&b| b == b'\n').filter(|line| !line.is_empty());
                for id in ids.filter_map(|line| serde_json::from_slice(line).ok()) {
                    if self.open.len() < MAX_IDS {
                        self.open.push(id);
                    }
                }
                None
            }
            b'A' => {
                if let Ok(id) = serde_json::from_slice(rest) {
                    if self.answered.len() < MAX_IDS {
                        self.answered.push(id);
                    }
                }
                None
            }
            b'Z' => {
                self.ended = true;
                None
            }
            _ => None,
        }
    }

    /// Whether the stream ended (the response ends once what was handed out is written).
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// The instance serving the stream is gone before it ended: one error response (-32603)
    /// for each request of the stream not answered, to write before ending the response.
    pub fn owner_gone(&mut self) -> Bytes {
        self.ended = true;
        let error = ErrorObject::new(
            -32603,
            "Internal error: the server instance serving this request is gone",
        );
        let mut out = Vec::new();
        let mut message = Vec::new();
        for id in self.open.iter().filter(|id| !self.answered.contains(id)) {
            message.clear();
            encode_error(&mut message, Some(id), &error, MissingId::Null);
            write_event(&mut out, None, Some("message"), &message, None);
        }
        Bytes::from(out)
    }
}
