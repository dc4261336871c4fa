//! The wire-level judge of SSE streams and their resumption (docs/fuzzing.md, invariant 4), for
//! the world that drives the real HTTP client transport: what the endpoint emitted on each
//! logical stream (decoded where it leaves the server) against what reached the client on each
//! connection (decoded where it enters the transport). A stream resumed with `Last-Event-ID`
//! must continue exactly after the client's last event: no duplicate, no gap, no event of
//! another stream, and no message that belongs to another request.

use std::collections::{BTreeSet, HashMap};

use bytes::Bytes;
use mcp_sansio::framing::{SseDecoder, SseItem};
use mcp_sansio::http::EventId;
use mcp_sansio::http::StreamId;
use mcp_sansio::jsonrpc::{self, Incoming, Message, RequestId};
use mcp_sansio::outgoing::ExchangeId;
use serde_json::Value;

/// A logical stream: the session it belongs to and its number in that session.
type StreamKey = (String, u64);

/// One response stream as the client receives it.
struct Tap {
    session: String,
    /// The request a POST carried (its stream must only carry that request's messages).
    request: Option<RequestId>,
    /// The `Last-Event-ID` the client sent (a resumption).
    resume_from: Option<EventId>,
    /// The logical stream seen on this connection.
    stream: Option<u64>,
    decoder: SseDecoder,
}

/// Both ends of every SSE stream of one run. See the module docs.
#[derive(Default)]
pub struct Judge {
    /// Endpoint connections being pulled: their session and a decoder.
    server: HashMap<StreamId, (String, SseDecoder)>,
    /// Sequence numbers the endpoint emitted, per logical stream.
    emitted: HashMap<StreamKey, BTreeSet<u64>>,
    /// The last sequence number the client received, per logical stream.
    received: HashMap<StreamKey, u64>,
    /// The request whose POST opened each logical stream.
    owner: HashMap<StreamKey, RequestId>,
    client: HashMap<ExchangeId, Tap>,
    /// SSE events with data that reached the client.
    pub events: u64,
}

impl Judge {
    /// The endpoint answered with SSE stream `conn` of session `session`.
    pub fn server_opened(&mut self, conn: StreamId, session: String) {
        self.server
            .insert(conn, (session, SseDecoder::new(1 << 20)));
    }

    /// Bytes the endpoint wrote on `conn` (whatever happens to them on the wire).
    pub fn server_chunk(&mut self, conn: StreamId, bytes: &[u8]) -> Result<(), String> {
        let Some((session, decoder)) = self.server.get_mut(&conn) else {
            return Ok(());
        };
        decoder.push(bytes);
        while let Some(item) = decoder.poll_item() {
            let text = match item.map_err(|e| format!("server SSE: {e:?}"))? {
                SseItem::Event(event) => event.id,
                SseItem::LastEventId(id) => id,
                SseItem::Retry(_) => continue,
            };
            if let Some(id) = EventId::parse(&text) {
                let key = (session.clone(), id.stream);
                self.emitted.entry(key).or_default().insert(id.seq);
            }
        }
        Ok(())
    }

    /// The endpoint connection `conn` ended or was cut.
    pub fn server_closed(&mut self, conn: StreamId) {
        self.server.remove(&conn);
    }

    /// The server process restarted: its connection numbers start over.
    pub fn server_restarted(&mut self) {
        self.server.clear();
    }

    /// The client got a 2xx SSE head for exchange `ex`.
    pub fn client_opened(
        &mut self,
        ex: ExchangeId,
        session: String,
        request: Option<RequestId>,
        resume_from: Option<EventId>,
    ) {
        let tap = Tap {
            session,
            request,
            resume_from,
            stream: None,
            decoder: SseDecoder::new(1 << 20),
        };
        self.client.insert(ex, tap);
    }

    /// Exchange `ex` is over for the client (ended, failed, aborted).
    pub fn client_closed(&mut self, ex: ExchangeId) {
        self.client.remove(&ex);
    }

    /// A new client transport: its exchange numbers start over.
    pub fn client_restarted(&mut self) {
        self.client.clear();
    }

    /// Body bytes reaching the client on exchange `ex`: every event id and message is judged.
    pub fn client_chunk(&mut self, ex: ExchangeId, bytes: &[u8]) -> Result<(), String> {
        let Some(mut tap) = self.client.remove(&ex) else {
            return Ok(()); // not an SSE stream
        };
        let outcome = self.judge_chunk(&mut tap, bytes);
        self.client.insert(ex, tap);
        outcome
    }

    fn judge_chunk(&mut self, tap: &mut Tap, bytes: &[u8]) -> Result<(), String> {
        tap.decoder.push(bytes);
        while let Some(item) = tap.decoder.poll_item() {
            let (text, data) = match item.map_err(|e| format!("client SSE: {e:?}"))? {
                SseItem::Event(event) => (event.id, event.data),
                SseItem::LastEventId(id) => (id, Bytes::new()),
                SseItem::Retry(_) => continue,
            };
            let stream = self.judge_event_id(tap, &text)?;
            if !data.is_empty() {
                self.events += 1;
                self.judge_message(tap, stream, &data)?;
            }
        }
        Ok(())
    }

    /// Checks one event id against the connection, the resumption and the stream's history;
    /// returns the logical stream.
    fn judge_event_id(&mut self, tap: &mut Tap, text: &str) -> Result<Option<u64>, String> {
        if text.is_empty() {
            return Ok(tap.stream);
        }
        let id = EventId::parse(text).ok_or_else(|| format!("bad event id {text:?}"))?;
        if let Some(stream) = tap.stream.filter(|s| *s != id.stream) {
            return Err(format!("event {text} on a connection of stream {stream}"));
        }
        if let Some(from) = tap.resume_from {
            if from.stream != id.stream {
                return Err(format!(
                    "resuming stream {} delivered event {text} of another stream",
                    from.stream
                ));
            }
            if id.seq <= from.seq {
                return Err(format!(
                    "resuming after {}-{} replayed event {text} (duplicate)",
                    from.stream, from.seq
                ));
            }
        }
        tap.stream = Some(id.stream);
        let key = (tap.session.clone(), id.stream);
        let last = self.received.get(&key).copied();
        if let Some(last) = last.filter(|last| id.seq <= *last) {
            return Err(format!(
                "event {text} after {}-{last} (duplicate or reordered)",
                id.stream
            ));
        }
        let base = last.or(tap.resume_from.map(|f| f.seq));
        if let Some(base) = base {
            let emitted = self.emitted.get(&key);
            if let Some(missed) = emitted.and_then(|e| e.range(base + 1..id.seq).next()) {
                return Err(format!(
                    "gap: event {}-{missed} was emitted but {text} came after {}-{base}",
                    id.stream, id.stream
                ));
            }
        }
        self.received.insert(key.clone(), id.seq);
        if let Some(request) = &tap.request {
            self.owner.entry(key).or_insert_with(|| request.clone());
        }
        Ok(Some(id.stream))
    }

    /// A message must belong to the request whose stream it came on; the standalone stream
    /// carries no response.
    fn judge_message(&self, tap: &Tap, stream: Option<u64>, data: &[u8]) -> Result<(), String> {
        let Some((what, id)) = related_request(data) else {
            return Ok(());
        };
        let owner = tap.request.as_ref().or_else(|| {
            let key = (tap.session.clone(), stream?);
            self.owner.get(&key)
        });
        match owner {
            Some(owner) if *owner != id => Err(format!(
                "the {what} of {id} arrived on the stream of {owner}"
            )),
            None if what == "response" && stream == Some(0) => Err(format!(
                "the response of {id} arrived on the standalone stream"
            )),
            _ => Ok(()),
        }
    }
}

/// The client request a server message belongs to: a response's id or a progress token.
pub fn related_request(data: &[u8]) -> Option<(&'static str, RequestId)> {
    match jsonrpc::decode(&Bytes::copy_from_slice(data)).ok()? {
        Incoming::Single(Message::Response(r)) => Some(("response", r.id?)),
        Incoming::Single(Message::Notification(n)) if n.method == "notifications/progress" => {
            let params: Value = serde_json::from_slice(n.params?.as_bytes()).ok()?;
            let token = serde_json::from_value(params.get("progressToken")?.clone()).ok()?;
            Some(("progress", token))
        }
        _ => None,
    }
}
