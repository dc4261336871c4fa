//! One contract suite, run against every backend: the in-memory store and a real,
//! private redis-server (skipped with a message when redis-server is not installed, failed
//! when `CI` is set).

mod cases;
mod memory_limits;
#[cfg(feature = "redis")]
mod redis_layout;
#[cfg(feature = "redis")]
mod redis_reconnect;
#[cfg(feature = "redis")]
mod redis_server;

use std::future::Future;

use mcp_sansio_store::{Bus, EventLog, Guard, MemoryLimits, MemoryStore, RecordStore, StoreConfig};
#[cfg(feature = "redis")]
use mcp_sansio_store::{RedisConfig, RedisStore};

/// Everything a backend implements.
pub trait Store: RecordStore + EventLog + Bus + Guard + Clone + Send + Sync + 'static {}
impl<S: RecordStore + EventLog + Bus + Guard + Clone + Send + Sync + 'static> Store for S {}

/// The configuration every backend runs the suite with: four events per stream.
pub fn config() -> StoreConfig {
    StoreConfig {
        max_events: 4,
        max_event_bytes: 1024,
        max_record_bytes: 1024,
        max_message_bytes: 1024,
        ..StoreConfig::default()
    }
}

fn memory<F: Future<Output = ()>>(case: impl FnOnce(MemoryStore) -> F) {
    smol::block_on(case(MemoryStore::new(config(), MemoryLimits::default())));
}

#[cfg(feature = "redis")]
fn redis<F: Future<Output = ()>>(case: impl FnOnce(RedisStore) -> F) {
    let Some(server) = redis_server::RedisServer::start() else {
        return;
    };
    smol::block_on(async {
        // Tails re-ask every 10 ms, so the suite's waits see blocking reads end empty.
        let redis = RedisConfig {
            tail_block: std::time::Duration::from_millis(10),
            ..RedisConfig::default()
        };
        let store = RedisStore::connect(&server.url(), config(), redis)
            .await
            .expect("connect to the private redis-server");
        case(store).await;
    });
    drop(server);
}

/// One test per case and backend: `memory::<case>` and (feature `redis`) `redis::<case>`.
macro_rules! contract {
    ($($case:ident),* $(,)?) => {
        mod memory {
            $( #[test] fn $case() { super::memory(super::cases::$case) } )*
        }
        #[cfg(feature = "redis")]
        mod redis {
            $( #[test] fn $case() { super::redis(super::cases::$case) } )*
        }
    };
}

contract!(
    create_if_absent,
    stale_compare_and_swap_is_refused,
    records_expire_and_touch_extends,
    delete_removes,
    oversized_and_malformed_are_refused,
    events_append_and_replay,
    events_trim_to_the_limit,
    live_tail_sees_later_appends,
    live_tail_reports_a_trim,
    bus_delivers_to_every_subscriber,
    guard_is_single_use,
    concurrent_swaps_have_one_winner,
    concurrent_increments_lose_nothing,
);
