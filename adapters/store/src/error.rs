//! The one error type of every store operation.

use std::fmt;

use crate::log::EventId;
use crate::record::Version;

/// Why a store operation did not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// `create` found a record under the key.
    Exists,
    /// The record is absent (never created, deleted or expired).
    NotFound,
    /// `compare_and_swap` was given a version that is no longer the record's.
    Conflict {
        /// The record's version now.
        current: Version,
    },
    /// The event id is older than what the stream still keeps.
    Trimmed {
        /// The oldest event the stream keeps.
        oldest: EventId,
    },
    /// The event id names no event of the stream (past its end, or the stream is absent).
    UnknownEvent,
    /// A session, stream, task, channel or token name is empty, too long or holds `{`, `}`
    /// or `:` (they would break the key layout).
    InvalidKey(&'static str),
    /// A value is larger than the store takes.
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// The limit, in bytes.
        limit: usize,
    },
    /// A bounded table is full.
    Full {
        /// Which table.
        what: &'static str,
        /// Its limit, in entries.
        limit: usize,
    },
    /// A subscriber fell behind and messages published to it were dropped.
    Lagged,
    /// The subscription or tail can deliver nothing more.
    Closed,
    /// The backend failed (connection lost, timeout, an unexpected reply).
    Backend(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Exists => f.write_str("record exists"),
            StoreError::NotFound => f.write_str("record not found"),
            StoreError::Conflict { current } => {
                write!(f, "version conflict (record is at version {})", current.0)
            }
            StoreError::Trimmed { oldest } => {
                write!(f, "event trimmed (oldest kept is {})", oldest.0)
            }
            StoreError::UnknownEvent => f.write_str("unknown event id"),
            StoreError::InvalidKey(why) => write!(f, "invalid key: {why}"),
            StoreError::TooLarge { what, limit } => {
                write!(f, "{what} larger than {limit} bytes")
            }
            StoreError::Full { what, limit } => write!(f, "{what} full ({limit} entries)"),
            StoreError::Lagged => f.write_str("subscriber lagged; messages dropped"),
            StoreError::Closed => f.write_str("closed"),
            StoreError::Backend(why) => write!(f, "store backend: {why}"),
        }
    }
}

impl std::error::Error for StoreError {}
