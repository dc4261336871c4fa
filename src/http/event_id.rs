//! SSE event ids that name their stream: `<stream>-<seq>`, where `seq` counts every event of a
//! session, so ids are unique across the session's streams and order its events.
//!
//! With an [`EventKey`] (`EndpointConfig::event_key`) the ids are portable and signed:
//! `<origin>-<stream>-<seq>-<mac>`, where `<origin>` names the copy of the session that wrote
//! the event (`<instance>.<serial>`, as in the ids of the requests it sends) and `<mac>` is a
//! truncated HMAC-SHA-256 over the session id and the rest of the id. Every instance holding
//! the key can tell a genuine id of the session from a forged or foreign one, and which
//! instance wrote it.

use std::fmt::Write;
use std::sync::Arc;

use crate::encoding::{base64url, base64url_decode, constant_time_eq, hmac_sha256};

/// Bytes of the HMAC kept in a signed id (128 bits).
const MAC_LEN: usize = 16;

/// The longest `Last-Event-ID` read as a signed id, in bytes.
const MAX_SIGNED_ID: usize = 160;

/// One event id: the logical stream it was sent on and its session-wide sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    /// The logical stream (0 is the standalone GET stream).
    pub stream: u64,
    /// The session-wide sequence number.
    pub seq: u64,
}

impl EventId {
    /// Writes the id as `<stream>-<seq>`.
    pub fn write(&self, out: &mut String) {
        out.clear();
        let _ = write!(out, "{}-{}", self.stream, self.seq);
    }

    /// Parses `<stream>-<seq>` (decimal, no sign, no spaces); `None` for anything else.
    pub fn parse(text: &str) -> Option<EventId> {
        let (stream, seq) = text.split_once('-')?;
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(stream) || !digits(seq) {
            return None;
        }
        Some(EventId {
            stream: stream.parse().ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

/// The secret that signs portable event ids: instances sharing sessions share it (with a
/// store, the HTTP adapter creates one there and every instance reads it).
#[derive(Clone)]
pub struct EventKey(Arc<[u8]>);

impl EventKey {
    /// The shortest key accepted, in bytes.
    pub const MIN_LEN: usize = 16;

    /// A key of `bytes` (random, at least [`EventKey::MIN_LEN`] bytes); `None` when shorter.
    #[must_use]
    pub fn new(bytes: &[u8]) -> Option<EventKey> {
        (bytes.len() >= Self::MIN_LEN).then(|| EventKey(bytes.into()))
    }

    /// The key's bytes (to share it with other instances).
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for EventKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventKey(..)")
    }
}

/// A signed id read back: the copy of the session that wrote it and its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Signed<'t> {
    /// `<instance>.<serial>`.
    pub(crate) origin: &'t str,
    pub(crate) id: EventId,
}

impl Signed<'_> {
    /// The instance part of the origin.
    pub(crate) fn instance(&self) -> &str {
        self.origin.split('.').next().unwrap_or_default()
    }
}

/// Writes and checks the signed ids of one copy of one session.
#[derive(Clone, Debug)]
pub(crate) struct EventSigner {
    key: EventKey,
    session: String,
    origin: String,
}

impl EventSigner {
    pub(crate) fn new(key: EventKey, session: &str, origin: String) -> Self {
        EventSigner {
            key,
            session: session.to_owned(),
            origin,
        }
    }

    /// This copy's origin (`<instance>.<serial>`).
    pub(crate) fn origin(&self) -> &str {
        &self.origin
    }

    /// The MAC of `body` (`<origin>-<stream>-<seq>`) for this session.
    fn mac(&self, body: &str) -> [u8; 32] {
        let mut message = Vec::with_capacity(self.session.len() + 1 + body.len());
        message.extend_from_slice(self.session.as_bytes());
        message.push(b'\n');
        message.extend_from_slice(body.as_bytes());
        hmac_sha256(self.key.as_bytes(), &message)
    }

    /// Writes `id` as `<origin>-<stream>-<seq>-<mac>`.
    pub(crate) fn write(&self, id: EventId, out: &mut String) {
        out.clear();
        let _ = write!(out, "{}-{}-{}", self.origin, id.stream, id.seq);
        let mac = self.mac(out);
        out.push('-');
        out.push_str(&base64url(&mac[..MAC_LEN]));
    }

    /// Reads a signed id of this session (written by any copy of it); `None` for anything
    /// else: malformed, forged, or another session's.
    pub(crate) fn verify<'t>(&self, text: &'t str) -> Option<Signed<'t>> {
        if text.len() > MAX_SIGNED_ID {
            return None;
        }
        // The MAC's base64url may itself hold '-': the body is the first three fields.
        let mut parts = text.splitn(4, '-');
        let (origin, stream, seq) = (parts.next()?, parts.next()?, parts.next()?);
        let tag = parts.next()?;
        let body = text.get(..origin.len() + stream.len() + seq.len() + 2)?;
        let (instance, serial) = origin.split_once('.')?;
        let origin_ok = !instance.is_empty()
            && instance.bytes().all(|b| b.is_ascii_alphanumeric())
            && !serial.is_empty()
            && serial.bytes().all(|b| b.is_ascii_digit());
        let id = EventId::parse(body.get(origin.len() + 1..)?)?;
        let tag = base64url_decode(tag)?;
        if !origin_ok || !constant_time_eq(&tag, &self.mac(body)[..MAC_LEN]) {
            return None;
        }
        Some(Signed { origin, id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_junk() {
        let id = EventId { stream: 7, seq: 42 };
        let mut s = String::new();
        id.write(&mut s);
        assert_eq!(s, "7-42");
        assert_eq!(EventId::parse(&s), Some(id));
        for bad in [
            "",
            "7",
            "-1",
            "7-",
            "a-1",
            "7-1-2",
            "+7-1",
            "7 -1",
            "99999999999999999999-1",
        ] {
            assert_eq!(EventId::parse(bad), None, "{bad}");
        }
    }

    fn signer(key: &[u8], session: &str, origin: &str) -> EventSigner {
        EventSigner::new(
            EventKey::new(key).expect("long enough"),
            session,
            origin.to_owned(),
        )
    }

    #[test]
    fn signed_ids_verify_for_their_session_and_key_only() {
        const KEY: &[u8] = b"sixteen byte key";
        assert!(EventKey::new(b"too short").is_none());
        assert_eq!(format!("{:?}", EventKey::new(KEY).unwrap()), "EventKey(..)");
        let a = signer(KEY, "s1", "inst1.3");
        let id = EventId { stream: 2, seq: 9 };
        let mut text = String::new();
        a.write(id, &mut text);
        assert!(text.starts_with("inst1.3-2-9-"), "{text}");
        let signed = a.verify(&text).expect("its own id");
        assert_eq!(
            (signed.origin, signed.id, signed.instance()),
            ("inst1.3", id, "inst1")
        );
        // Another copy of the session (another instance) with the key reads it too.
        let b = signer(KEY, "s1", "inst2.0");
        assert_eq!(b.verify(&text), Some(signed));
        // Another session, another key, or any changed character: refused.
        assert_eq!(signer(KEY, "s2", "inst1.3").verify(&text), None);
        assert_eq!(
            signer(b"another long key", "s1", "inst1.3").verify(&text),
            None
        );
        for at in 0..text.len() {
            let mut bytes = text.clone().into_bytes();
            bytes[at] = if bytes[at] == b'7' { b'8' } else { b'7' };
            let changed = String::from_utf8(bytes).expect("ASCII");
            assert_eq!(a.verify(&changed), None, "{changed}");
        }
        for bad in [
            "",
            "2-9",
            "inst1.3-2-9",
            "inst1.3-2-9-",
            "-2-9-x",
            &"a".repeat(200),
        ] {
            assert_eq!(a.verify(bad), None, "{bad}");
        }
    }
}
