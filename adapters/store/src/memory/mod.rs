//! The in-memory backend: every table in this process, each bounded by [`MemoryLimits`].
//! Expired entries are dropped when touched and swept when a table reaches its limit; a
//! table still full after the sweep refuses with [`StoreError::Full`](crate::StoreError::Full).

mod bus;
mod guard;
mod log;
mod record;

pub use bus::MemorySubscription;
pub use log::MemoryTail;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::config::StoreConfig;

/// How many entries each in-memory table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimits {
    /// Session and task records.
    pub max_records: usize,
    /// Event streams.
    pub max_streams: usize,
    /// Bus subscriptions, all channels together.
    pub max_subscribers: usize,
    /// Messages queued for one subscriber; past it, messages to that subscriber are dropped
    /// and it is told ([`StoreError::Lagged`](crate::StoreError::Lagged)).
    pub subscriber_queue: usize,
    /// Live guard claims.
    pub max_guards: usize,
}

impl Default for MemoryLimits {
    fn default() -> Self {
        MemoryLimits {
            max_records: 100_000,
            max_streams: 100_000,
            max_subscribers: 10_000,
            subscriber_queue: 1024,
            max_guards: 100_000,
        }
    }
}

/// Every store trait, in this process's memory. Clones share the same tables.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: StoreConfig,
    limits: MemoryLimits,
    records: Mutex<HashMap<crate::RecordKey, record::Entry>>,
    streams: Mutex<HashMap<crate::StreamKey, log::Stream>>,
    channels: Mutex<bus::Channels>,
    guards: Mutex<HashMap<Vec<u8>, std::time::Instant>>,
}

impl MemoryStore {
    /// An empty store with these limits.
    pub fn new(config: StoreConfig, limits: MemoryLimits) -> Self {
        MemoryStore {
            inner: Arc::new(Inner {
                config,
                limits,
                records: Mutex::default(),
                streams: Mutex::default(),
                channels: Mutex::default(),
                guards: Mutex::default(),
            }),
        }
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new(StoreConfig::default(), MemoryLimits::default())
    }
}

/// Locks a table; a panic elsewhere while it was held leaves it usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Makes room for one more entry: sweeps expired ones at the limit, then refuses if still
/// full.
fn make_room<K, V>(
    table: &mut HashMap<K, V>,
    limit: usize,
    what: &'static str,
    expired: impl Fn(&V) -> bool,
) -> Result<(), crate::StoreError> {
    if table.len() >= limit {
        table.retain(|_, value| !expired(value));
    }
    if table.len() >= limit {
        return Err(crate::StoreError::Full { what, limit });
    }
    Ok(())
}
