//! The record store: session records and task records, versioned, with expiry.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;

use crate::error::StoreError;
use crate::key::RecordKey;

/// A record's version: 1 when created, one more on every successful compare-and-swap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(pub u64);

/// A record's bytes with the version they were read at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    /// The record's bytes.
    pub bytes: Bytes,
    /// The version to hand to [`RecordStore::compare_and_swap`].
    pub version: Version,
}

/// Versioned records that expire unless touched. Every record has a time to live; a record
/// past it is absent.
pub trait RecordStore {
    /// Stores `bytes` under `key` at version 1 unless a record is there
    /// ([`StoreError::Exists`]).
    fn create(
        &self,
        key: &RecordKey,
        bytes: &[u8],
        ttl: Duration,
    ) -> impl Future<Output = Result<Version, StoreError>> + Send;

    /// The record's bytes and version, or `None` when it is absent.
    fn load(
        &self,
        key: &RecordKey,
    ) -> impl Future<Output = Result<Option<Versioned>, StoreError>> + Send;

    /// Replaces the record's bytes if it is still at `expected`, resetting its time to live,
    /// and returns the new version. [`StoreError::Conflict`] when another writer came first,
    /// [`StoreError::NotFound`] when the record is absent.
    fn compare_and_swap(
        &self,
        key: &RecordKey,
        expected: Version,
        bytes: &[u8],
        ttl: Duration,
    ) -> impl Future<Output = Result<Version, StoreError>> + Send;

    /// Resets the record's time to live; `false` when it is absent.
    fn touch(
        &self,
        key: &RecordKey,
        ttl: Duration,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Removes the record; `false` when it was absent.
    fn delete(&self, key: &RecordKey) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// A time to live in whole milliseconds, at least one.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) fn ttl_millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}
