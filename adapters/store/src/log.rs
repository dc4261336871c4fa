//! The event log: one bounded, append-only stream of events per session stream, replayable
//! after an event id and followed live.

use std::future::Future;

use bytes::Bytes;

use crate::error::StoreError;
use crate::key::StreamKey;

/// An event's position in its stream: 1 for the first event appended, one more for each
/// after it. `EventId(0)` stands before the first event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(pub u64);

/// One stored event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Its position.
    pub id: EventId,
    /// Its bytes.
    pub data: Bytes,
}

/// Bounded event streams.
pub trait EventLog {
    /// The live tail this log hands out.
    type Tail: Tail + Send;

    /// Appends one event and returns its id. Past [`StoreConfig::max_events`](crate::StoreConfig::max_events), the oldest
    /// event is dropped.
    fn append(
        &self,
        stream: &StreamKey,
        data: &[u8],
    ) -> impl Future<Output = Result<EventId, StoreError>> + Send;

    /// Up to `max` events after `after` (from the oldest kept when `None`), oldest first.
    /// [`StoreError::Trimmed`] when events after `after` were dropped,
    /// [`StoreError::UnknownEvent`] when `after` is past the stream's end (an absent stream
    /// is empty and ends at `EventId(0)`).
    fn replay(
        &self,
        stream: &StreamKey,
        after: Option<EventId>,
        max: usize,
    ) -> impl Future<Output = Result<Vec<Event>, StoreError>> + Send;

    /// A tail that yields every event after `after` (after the stream's current end when
    /// `None`), those appended later included. `after` is checked as in
    /// [`EventLog::replay`], so a stream not yet created may be tailed from its start.
    fn tail(
        &self,
        stream: &StreamKey,
        after: Option<EventId>,
    ) -> impl Future<Output = Result<Self::Tail, StoreError>> + Send;

    /// Removes the stream; `false` when it was absent.
    fn delete_stream(
        &self,
        stream: &StreamKey,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// Follows one stream.
pub trait Tail {
    /// The next event, waiting for one to be appended. [`StoreError::Trimmed`] when the
    /// tail fell so far behind that events it had not read were dropped.
    fn next(&mut self) -> impl Future<Output = Result<Event, StoreError>> + Send;
}

/// Where a read after `after` starts, given the oldest kept and the last appended event:
/// the refusals shared by both backends. `first == 0` means the stream holds nothing.
pub(crate) fn check_after(after: EventId, first: u64, last: u64) -> Result<(), StoreError> {
    if after.0 > last {
        return Err(StoreError::UnknownEvent);
    }
    if first > 0 && after.0 + 1 < first {
        return Err(StoreError::Trimmed {
            oldest: EventId(first),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_is_checked_against_the_kept_window() {
        assert_eq!(check_after(EventId(0), 1, 3), Ok(()));
        assert_eq!(check_after(EventId(3), 1, 3), Ok(()));
        assert_eq!(check_after(EventId(4), 1, 3), Err(StoreError::UnknownEvent));
        assert_eq!(check_after(EventId(5), 6, 10), Ok(()));
        assert_eq!(
            check_after(EventId(3), 6, 10),
            Err(StoreError::Trimmed { oldest: EventId(6) })
        );
    }
}
