//! The limits both backends apply to what they are given.

use std::time::Duration;

use crate::error::StoreError;

/// Sizes and lifetimes shared by both backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreConfig {
    /// Events kept per stream; appending past it drops the oldest.
    pub max_events: usize,
    /// Largest event, in bytes.
    pub max_event_bytes: usize,
    /// A stream with no append for this long is removed.
    pub stream_ttl: Duration,
    /// Largest record, in bytes.
    pub max_record_bytes: usize,
    /// Largest bus message, in bytes.
    pub max_message_bytes: usize,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            max_events: 1024,
            max_event_bytes: 1 << 20,
            stream_ttl: Duration::from_secs(3600),
            max_record_bytes: 1 << 20,
            max_message_bytes: 1 << 20,
        }
    }
}

/// Refuses a value larger than `limit`.
pub(crate) fn check_size(len: usize, limit: usize, what: &'static str) -> Result<(), StoreError> {
    if len > limit {
        return Err(StoreError::TooLarge { what, limit });
    }
    Ok(())
}
