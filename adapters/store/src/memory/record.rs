//! In-memory records.

use std::time::{Duration, Instant};

use bytes::Bytes;

use super::{lock, make_room, MemoryStore};
use crate::config::check_size;
use crate::{RecordKey, RecordStore, StoreError, Version, Versioned};

#[derive(Debug)]
pub(super) struct Entry {
    bytes: Bytes,
    version: Version,
    expires: Instant,
}

impl Entry {
    fn live(&self, now: Instant) -> bool {
        self.expires > now
    }
}

impl MemoryStore {
    /// The live entry under `key`, dropping it if it expired.
    fn live_record<'a>(
        table: &'a mut std::collections::HashMap<RecordKey, Entry>,
        key: &RecordKey,
        now: Instant,
    ) -> Option<&'a mut Entry> {
        if table.get(key).is_some_and(|entry| !entry.live(now)) {
            table.remove(key);
        }
        table.get_mut(key)
    }
}

impl RecordStore for MemoryStore {
    async fn create(
        &self,
        key: &RecordKey,
        bytes: &[u8],
        ttl: Duration,
    ) -> Result<Version, StoreError> {
        key.check()?;
        check_size(bytes.len(), self.inner.config.max_record_bytes, "record")?;
        let now = Instant::now();
        let mut table = lock(&self.inner.records);
        if Self::live_record(&mut table, key, now).is_some() {
            return Err(StoreError::Exists);
        }
        make_room(
            &mut table,
            self.inner.limits.max_records,
            "records",
            |entry| !entry.live(now),
        )?;
        let version = Version(1);
        table.insert(
            key.clone(),
            Entry {
                bytes: Bytes::copy_from_slice(bytes),
                version,
                expires: now + ttl,
            },
        );
        Ok(version)
    }

    async fn load(&self, key: &RecordKey) -> Result<Option<Versioned>, StoreError> {
        key.check()?;
        let mut table = lock(&self.inner.records);
        Ok(
            Self::live_record(&mut table, key, Instant::now()).map(|entry| Versioned {
                bytes: entry.bytes.clone(),
                version: entry.version,
            }),
        )
    }

    async fn compare_and_swap(
        &self,
        key: &RecordKey,
        expected: Version,
        bytes: &[u8],
        ttl: Duration,
    ) -> Result<Version, StoreError> {
        key.check()?;
        check_size(bytes.len(), self.inner.config.max_record_bytes, "record")?;
        let now = Instant::now();
        let mut table = lock(&self.inner.records);
        let entry = Self::live_record(&mut table, key, now).ok_or(StoreError::NotFound)?;
        if entry.version != expected {
            return Err(StoreError::Conflict {
                current: entry.version,
            });
        }
        entry.version = Version(entry.version.0 + 1);
        entry.bytes = Bytes::copy_from_slice(bytes);
        entry.expires = now + ttl;
        Ok(entry.version)
    }

    async fn touch(&self, key: &RecordKey, ttl: Duration) -> Result<bool, StoreError> {
        key.check()?;
        let now = Instant::now();
        let mut table = lock(&self.inner.records);
        Ok(match Self::live_record(&mut table, key, now) {
            Some(entry) => {
                entry.expires = now + ttl;
                true
            }
            None => false,
        })
    }

    async fn delete(&self, key: &RecordKey) -> Result<bool, StoreError> {
        key.check()?;
        let now = Instant::now();
        let mut table = lock(&self.inner.records);
        Ok(table.remove(key).is_some_and(|entry| entry.live(now)))
    }
}
