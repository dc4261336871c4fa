//! The in-memory backend's tables are bounded: at a limit it refuses and says which limit,
//! and expired entries make room again.

use std::time::Duration;

use mcp_sansio_store::{
    Bus, EventLog, Guard, MemoryLimits, MemoryStore, RecordKey, RecordStore, StoreError, StreamKey,
    Subscription,
};
use smol::Timer;

const MINUTE: Duration = Duration::from_secs(60);

fn tiny() -> MemoryStore {
    MemoryStore::new(
        crate::config(),
        MemoryLimits {
            max_records: 2,
            max_streams: 2,
            max_subscribers: 2,
            subscriber_queue: 2,
            max_guards: 2,
        },
    )
}

fn session(id: &str) -> RecordKey {
    RecordKey::Session(id.to_owned())
}

#[test]
fn record_table_is_bounded_and_expiry_frees_room() {
    smol::block_on(async {
        let store = tiny();
        store.create(&session("a"), b"", MINUTE).await.unwrap();
        store
            .create(&session("b"), b"", Duration::from_millis(20))
            .await
            .unwrap();
        let full = store.create(&session("c"), b"", MINUTE).await;
        assert_eq!(
            full,
            Err(StoreError::Full {
                what: "records",
                limit: 2
            })
        );
        for _ in 0..1000 {
            if store.load(&session("b")).await.unwrap().is_none() {
                break;
            }
            Timer::after(Duration::from_millis(10)).await;
        }
        assert!(store.create(&session("c"), b"", MINUTE).await.is_ok());
        store.delete(&session("a")).await.unwrap();
        assert!(store.create(&session("d"), b"", MINUTE).await.is_ok());
    });
}

#[test]
fn stream_table_is_bounded() {
    smol::block_on(async {
        let store = tiny();
        store.append(&StreamKey::new("s", "1"), b"x").await.unwrap();
        store.append(&StreamKey::new("s", "2"), b"x").await.unwrap();
        let full = store.append(&StreamKey::new("s", "3"), b"x").await;
        assert_eq!(
            full,
            Err(StoreError::Full {
                what: "event streams",
                limit: 2
            })
        );
        // Existing streams still take events (trimmed to their own limit).
        for _ in 0..10 {
            store.append(&StreamKey::new("s", "1"), b"x").await.unwrap();
        }
        store
            .delete_stream(&StreamKey::new("s", "2"))
            .await
            .unwrap();
        assert!(store.append(&StreamKey::new("s", "3"), b"x").await.is_ok());
    });
}

#[test]
fn subscriptions_are_bounded_and_a_slow_subscriber_is_told() {
    smol::block_on(async {
        let store = tiny();
        let mut slow = store.subscribe("c").await.unwrap();
        let other = store.subscribe("c").await.unwrap();
        let full = store.subscribe("c").await.map(|_| ());
        assert_eq!(
            full,
            Err(StoreError::Full {
                what: "bus subscriptions",
                limit: 2
            })
        );
        drop(other);
        let _again = store.subscribe("d").await.unwrap();
        // A queue of two: the third message is dropped for this subscriber, and it hears so.
        for message in [b"1", b"2", b"3"] {
            store.publish("c", message).await.unwrap();
        }
        assert_eq!(slow.next().await, Err(StoreError::Lagged));
        assert_eq!(&slow.next().await.unwrap()[..], b"1");
        assert_eq!(&slow.next().await.unwrap()[..], b"2");
        store.publish("c", b"4").await.unwrap();
        assert_eq!(&slow.next().await.unwrap()[..], b"4");
    });
}

#[test]
fn guard_table_is_bounded() {
    smol::block_on(async {
        let store = tiny();
        assert_eq!(store.claim(b"a", MINUTE).await, Ok(true));
        assert_eq!(store.claim(b"b", Duration::from_millis(20)).await, Ok(true));
        let full = store.claim(b"c", MINUTE).await;
        assert_eq!(
            full,
            Err(StoreError::Full {
                what: "guard claims",
                limit: 2
            })
        );
        // A refused claim is not a claim: once "b" lapses, "c" gets its first claim.
        let mut claimed = false;
        for _ in 0..1000 {
            if store.claim(b"c", MINUTE).await == Ok(true) {
                claimed = true;
                break;
            }
            Timer::after(Duration::from_millis(10)).await;
        }
        assert!(claimed);
        assert_eq!(store.claim(b"a", MINUTE).await, Ok(false));
    });
}
