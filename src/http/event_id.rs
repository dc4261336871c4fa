//! SSE event ids that name their stream: `<stream>-<seq>`, where `seq` counts every event of a
//! session, so ids are unique across the session's streams and order its events.

use std::fmt::Write;

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
}
