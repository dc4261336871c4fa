//! Shared state for mcp-sansio servers: what one server instance keeps so that another can
//! serve the same session, behind four traits with two backends.
//!
//! - [`RecordStore`]: session and task records (create if absent, load with a version,
//!   compare-and-swap, expiry, delete).
//! - [`EventLog`]: one bounded event log per stream (append, replay after an id, live tail).
//! - [`Bus`]: publish/subscribe on named channels.
//! - [`Guard`]: single-use claims (the `requestState` replay guard).
//!
//! [`MemoryStore`] keeps everything in this process, within [`MemoryLimits`].
//! `RedisStore` (feature `redis`, on by default) keeps it in Redis, reached through the
//! `redis` crate on smol. Every method returns a future that is `Send` and needs no
//! particular runtime beyond what the backend names.

mod bus;
mod config;
mod error;
mod guard;
mod key;
mod log;
mod memory;
mod record;
#[cfg(feature = "redis")]
mod redis;

pub use bus::{Bus, Subscription};
pub use config::StoreConfig;
pub use error::StoreError;
pub use guard::Guard;
pub use key::{RecordKey, StreamKey, MAX_ID_LEN, MAX_TOKEN_LEN};
pub use log::{Event, EventId, EventLog, Tail};
pub use memory::{MemoryLimits, MemoryStore, MemorySubscription, MemoryTail};
pub use record::{RecordStore, Version, Versioned};
#[cfg(feature = "redis")]
pub use redis::{RedisConfig, RedisStore, RedisSubscription, RedisTail};
