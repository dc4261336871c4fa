//! The GET stream of a shared session that moved to another instance: when a client resumes
//! on instance B the GET stream it had on instance A, B tells A (a [`ListenRelay`] "moved",
//! with the last event of A's stream B read from the log), and A ends its GET stream there
//! and hands every message for that stream to B from then on (the events it wrote after the
//! ones B read, the messages it held, then what arises): B writes them on its own GET stream,
//! with its own event ids, each once and in order. A GET without `Last-Event-ID` on B tells
//! every instance ("opened": B does not know which one holds messages for the session), and
//! each one holding the session does the same, with no events to add. The payloads are
//! encoded and read here, so both sides agree on them:
//!
//! - `M`, then the session id, the origin of the resumed stream (`<instance>.<n>`), the last
//!   sequence number read and the new holder's instance name, separated by newlines;
//! - `O`, then the session id, a newline, and the new holder's instance name;
//! - `R`, then the session id, a newline, and one JSON-RPC message.
//!
//! Each message relayed carries its place among the session's messages for the GET stream
//! (not published): one that comes back (no instance received it) is held in that place.

use std::collections::VecDeque;

use bytes::Bytes;

use crate::framing::{SseDecoder, SseItem};

/// Messages waiting to be relayed for one session at most; past it they are dropped and
/// counted (as held messages are).
pub(crate) const MAX_RELAYED: usize = 1024;

/// One message for the driver to publish to instance [`ListenRelay::instance`] (on its bus
/// channel), which takes it with `Endpoint::handle_listen_relay`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenRelay {
    instance: String,
    pub(crate) session: String,
    pub(crate) kind: Kind,
    /// The message's place among the session's messages for the GET stream (0 for the
    /// notices and for what another instance published).
    pub(crate) seq: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The session's GET stream, written by copy `origin` up to event `after`, is now held
    /// by instance `to`.
    Moved {
        origin: String,
        after: u64,
        to: String,
    },
    /// A GET stream of the session opened on instance `to` (no `Last-Event-ID`): told to
    /// every instance.
    Opened { to: String },
    /// One message for the session's GET stream.
    Message(Bytes),
}

impl ListenRelay {
    pub(crate) fn moved(instance: &str, session: &str, origin: &str, after: u64, to: &str) -> Self {
        ListenRelay {
            instance: instance.to_owned(),
            session: session.to_owned(),
            kind: Kind::Moved {
                origin: origin.to_owned(),
                after,
                to: to.to_owned(),
            },
            seq: 0,
        }
    }

    /// A notice for every instance: the session's GET stream opened on instance `to`.
    pub(crate) fn opened(session: &str, to: &str) -> Self {
        ListenRelay {
            instance: String::new(),
            session: session.to_owned(),
            kind: Kind::Opened { to: to.to_owned() },
            seq: 0,
        }
    }

    pub(crate) fn message(instance: &str, session: &str, data: Bytes, seq: u64) -> Self {
        ListenRelay {
            instance: instance.to_owned(),
            session: session.to_owned(),
            kind: Kind::Message(data),
            seq,
        }
    }

    /// The instance to publish to (its bus name); empty for a notice to every instance
    /// ([`ListenRelay::to_every_instance`]).
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// Whether this is a notice for every instance (published on the channel all of them
    /// follow, rather than on one instance's).
    pub fn to_every_instance(&self) -> bool {
        matches!(self.kind, Kind::Opened { .. })
    }

    /// The session id.
    pub fn session(&self) -> &str {
        &self.session
    }

    pub(crate) fn kind(&self) -> &Kind {
        &self.kind
    }

    /// Whether this is one message for the GET stream (a relay the driver hands back with
    /// `Endpoint::handle_listen_relay_lost` when no instance received it).
    pub fn is_message(&self) -> bool {
        matches!(self.kind, Kind::Message(_))
    }

    /// The bytes to publish.
    pub fn payload(&self) -> Bytes {
        let mut out = Vec::new();
        match &self.kind {
            Kind::Moved { origin, after, to } => {
                out.push(b'M');
                for part in [self.session.as_str(), origin, &after.to_string(), to] {
                    out.extend_from_slice(part.as_bytes());
                    out.push(b'\n');
                }
                out.pop();
            }
            Kind::Opened { to } => {
                out.push(b'O');
                out.extend_from_slice(self.session.as_bytes());
                out.push(b'\n');
                out.extend_from_slice(to.as_bytes());
            }
            Kind::Message(data) => {
                out.push(b'R');
                out.extend_from_slice(self.session.as_bytes());
                out.push(b'\n');
                out.extend_from_slice(data);
            }
        }
        Bytes::from(out)
    }

    /// Reads a payload another instance published to `instance` (this one); `None` for bytes
    /// that are not one.
    pub(crate) fn parse(instance: &str, payload: &[u8]) -> Option<Self> {
        let (&tag, rest) = payload.split_first()?;
        match tag {
            b'M' => {
                let text = std::str::from_utf8(rest).ok()?;
                let mut parts = text.split('\n');
                let (session, origin, after, to) =
                    (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
                if parts.next().is_some() || to.is_empty() {
                    return None;
                }
                Some(Self::moved(
                    instance,
                    session,
                    origin,
                    after.parse().ok()?,
                    to,
                ))
            }
            b'O' => {
                let text = std::str::from_utf8(rest).ok()?;
                let (session, to) = text.split_once('\n')?;
                if to.is_empty() || to.contains('\n') {
                    return None;
                }
                let mut opened = Self::opened(session, to);
                opened.instance = instance.to_owned();
                Some(opened)
            }
            b'R' => {
                let mut parts = rest.splitn(2, |&b| b == b'\n');
                let (session, data) = (parts.next()?, parts.next()?);
                let session = std::str::from_utf8(session).ok()?;
                let data = Bytes::copy_from_slice(data);
                Some(Self::message(instance, session, data, 0))
            }
            _ => None,
        }
    }
}

/// A session whose GET stream another instance holds: the messages for it (each with its
/// place among the session's messages for the GET stream), for the driver.
#[derive(Debug)]
pub(crate) struct Relay {
    /// The instance holding the GET stream.
    pub(crate) to: String,
    pub(crate) out: VecDeque<(u64, Bytes)>,
}

impl Relay {
    pub(crate) fn new(to: String) -> Self {
        Relay {
            to,
            out: VecDeque::new(),
        }
    }

    /// Queues one message; `false` when it was dropped at the bound.
    pub(crate) fn push(&mut self, seq: u64, data: Bytes) -> bool {
        if self.out.len() >= MAX_RELAYED {
            return false;
        }
        self.out.push_back((seq, data));
        true
    }
}

/// The message an SSE event this endpoint encoded carries (its data), or `None` (no data).
pub(crate) fn event_data(event: &[u8]) -> Option<Bytes> {
    let mut decoder = SseDecoder::new(event.len().max(1));
    decoder.push(event);
    decoder.finish();
    while let Some(item) = decoder.poll_item() {
        if let Ok(SseItem::Event(e)) = item {
            return (!e.data.is_empty()).then_some(e.data);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::write_event;

    /// Both payloads read back as they were made; other bytes are refused.
    #[test]
    fn payloads_round_trip() {
        let moved = ListenRelay::moved("a", "sid", "a.3", 42, "b");
        assert_eq!(ListenRelay::parse("a", &moved.payload()), Some(moved));
        let message = ListenRelay::message("b", "sid", Bytes::from_static(b"{\"x\":\n1}"), 0);
        assert!(message.is_message());
        assert_eq!(ListenRelay::parse("b", &message.payload()), Some(message));
        let opened = ListenRelay::opened("sid", "b");
        assert!(opened.to_every_instance() && !opened.is_message());
        let read = ListenRelay::parse("a", &opened.payload()).expect("an opened notice");
        assert_eq!((read.session(), read.instance()), ("sid", "a"));
        assert_eq!(read.kind, opened.kind);
        for bad in [
            &b""[..],
            b"Msid\na.1\nx\nb",
            b"Rsid",
            b"Osid",
            b"Osid\n",
            b"Os\nb\nc",
        ] {
            assert_eq!(ListenRelay::parse("a", bad), None, "{bad:?}");
        }
    }

    /// The message is taken back out of an encoded event; a priming event has none.
    #[test]
    fn event_data_reads_the_message() {
        let mut event = Vec::new();
        write_event(
            &mut event,
            Some("a.1-0-7-mac"),
            Some("message"),
            b"{\"m\":1}",
            None,
        );
        assert_eq!(event_data(&event).as_deref(), Some(&b"{\"m\":1}"[..]));
        event.clear();
        write_event(&mut event, Some("a.1-0-1-mac"), None, b"", Some(1000));
        assert_eq!(event_data(&event), None);
    }
}
