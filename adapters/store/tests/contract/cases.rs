//! The contract every backend meets, one generic function per case.

use std::future::Future;
use std::time::Duration;

use futures_lite::future;
use mcp_sansio_store::{EventId, RecordKey, StoreError, StreamKey, Subscription, Tail, Version};
use smol::Timer;

use crate::Store;

const MINUTE: Duration = Duration::from_secs(60);

fn session(id: &str) -> RecordKey {
    RecordKey::Session(id.to_owned())
}

/// Fails the test if `work` has not finished within a generous bound (a hang guard, not a
/// speed check).
async fn bounded<T>(work: impl Future<Output = T>) -> T {
    future::or(work, async {
        Timer::after(Duration::from_secs(20)).await;
        panic!("no result within 20 s");
    })
    .await
}

/// Polls `check` every 10 ms until it holds, failing after 1,000 polls.
async fn eventually<F: Future<Output = bool>>(mut check: impl FnMut() -> F) {
    for _ in 0..1000 {
        if check().await {
            return;
        }
        Timer::after(Duration::from_millis(10)).await;
    }
    panic!("condition did not hold within 1,000 polls");
}

fn too_large<T>(what: &'static str) -> Result<T, StoreError> {
    Err(StoreError::TooLarge { what, limit: 1024 })
}

fn ids(events: &[mcp_sansio_store::Event]) -> Vec<u64> {
    events.iter().map(|event| event.id.0).collect()
}

pub async fn create_if_absent<S: Store>(store: S) {
    let key = session("s1");
    assert_eq!(store.create(&key, b"one", MINUTE).await, Ok(Version(1)));
    assert_eq!(
        store.create(&key, b"two", MINUTE).await,
        Err(StoreError::Exists)
    );
    let loaded = store.load(&key).await.unwrap().expect("record present");
    assert_eq!(&loaded.bytes[..], b"one");
    assert_eq!(loaded.version, Version(1));
    // A task record of the same id is another record.
    let task = RecordKey::Task("s1".to_owned());
    assert_eq!(store.load(&task).await, Ok(None));
    assert_eq!(store.create(&task, b"task", MINUTE).await, Ok(Version(1)));
    assert_eq!(&store.load(&key).await.unwrap().unwrap().bytes[..], b"one");
}

pub async fn stale_compare_and_swap_is_refused<S: Store>(store: S) {
    let key = session("s1");
    store.create(&key, b"one", MINUTE).await.unwrap();
    let swapped = store
        .compare_and_swap(&key, Version(1), b"two", MINUTE)
        .await;
    assert_eq!(swapped, Ok(Version(2)));
    let stale = store
        .compare_and_swap(&key, Version(1), b"three", MINUTE)
        .await;
    assert_eq!(
        stale,
        Err(StoreError::Conflict {
            current: Version(2)
        })
    );
    let loaded = store.load(&key).await.unwrap().unwrap();
    assert_eq!(
        (&loaded.bytes[..], loaded.version),
        (&b"two"[..], Version(2))
    );
    let absent = store
        .compare_and_swap(&session("nobody"), Version(1), b"x", MINUTE)
        .await;
    assert_eq!(absent, Err(StoreError::NotFound));
}

pub async fn records_expire_and_touch_extends<S: Store>(store: S) {
    let short = session("short");
    store
        .create(&short, b"x", Duration::from_millis(50))
        .await
        .unwrap();
    eventually(|| async { store.load(&short).await.unwrap().is_none() }).await;
    assert_eq!(store.touch(&short, MINUTE).await, Ok(false));
    // An expired record's key is free again.
    assert_eq!(store.create(&short, b"y", MINUTE).await, Ok(Version(1)));

    let touched = session("touched");
    store
        .create(&touched, b"x", Duration::from_secs(1))
        .await
        .unwrap();
    if store.touch(&touched, MINUTE).await.unwrap() {
        Timer::after(Duration::from_millis(1500)).await;
        assert!(
            store.load(&touched).await.unwrap().is_some(),
            "a touched record outlives its first time to live"
        );
    }
    // Touching down to a short TTL makes it expire.
    assert_eq!(
        store.touch(&touched, Duration::from_millis(20)).await,
        Ok(true)
    );
    eventually(|| async { store.load(&touched).await.unwrap().is_none() }).await;
}

pub async fn delete_removes<S: Store>(store: S) {
    let key = session("s1");
    store.create(&key, b"one", MINUTE).await.unwrap();
    store
        .compare_and_swap(&key, Version(1), b"two", MINUTE)
        .await
        .unwrap();
    assert_eq!(store.delete(&key).await, Ok(true));
    assert_eq!(store.load(&key).await, Ok(None));
    assert_eq!(store.delete(&key).await, Ok(false));
    // Created anew, it starts again at version 1.
    assert_eq!(store.create(&key, b"three", MINUTE).await, Ok(Version(1)));
}

pub async fn oversized_and_malformed_are_refused<S: Store>(store: S) {
    let big = vec![0u8; 1025];
    assert_eq!(
        store.create(&session("s"), &big, MINUTE).await,
        too_large("record")
    );
    let stream = StreamKey::new("s", "1");
    assert_eq!(store.append(&stream, &big).await, too_large("event"));
    assert_eq!(store.publish("c", &big).await, too_large("message"));
    for bad in ["", "a{b}", "a:b"] {
        let refused = store.create(&session(bad), b"x", MINUTE).await;
        assert!(matches!(refused, Err(StoreError::InvalidKey(_))), "{bad:?}");
        let refused = store.append(&StreamKey::new("s", bad), b"x").await;
        assert!(matches!(refused, Err(StoreError::InvalidKey(_))), "{bad:?}");
    }
    assert!(matches!(
        store.claim(b"", MINUTE).await,
        Err(StoreError::InvalidKey(_))
    ));
}

pub async fn events_append_and_replay<S: Store>(store: S) {
    let stream = StreamKey::new("s1", "post-1");
    for (n, data) in [b"a", b"b", b"c"].iter().enumerate() {
        assert_eq!(
            store.append(&stream, *data).await,
            Ok(EventId(n as u64 + 1))
        );
    }
    let all = store.replay(&stream, None, 100).await.unwrap();
    assert_eq!(ids(&all), [1, 2, 3]);
    assert_eq!(&all[1].data[..], b"b");
    assert_eq!(
        ids(&store.replay(&stream, Some(EventId(0)), 100).await.unwrap()),
        [1, 2, 3]
    );
    assert_eq!(
        ids(&store.replay(&stream, Some(EventId(1)), 100).await.unwrap()),
        [2, 3]
    );
    assert_eq!(
        ids(&store.replay(&stream, Some(EventId(1)), 1).await.unwrap()),
        [2]
    );
    assert_eq!(
        store.replay(&stream, Some(EventId(3)), 100).await,
        Ok(vec![])
    );
    for past_the_end in [4, u64::MAX] {
        let unknown = store
            .replay(&stream, Some(EventId(past_the_end)), 100)
            .await;
        assert_eq!(unknown, Err(StoreError::UnknownEvent));
    }
    // Streams are separate, per session and per stream.
    let other = StreamKey::new("s2", "post-1");
    assert_eq!(store.replay(&other, None, 100).await, Ok(vec![]));
    assert_eq!(
        store.replay(&other, Some(EventId(1)), 100).await,
        Err(StoreError::UnknownEvent)
    );
    assert_eq!(store.append(&other, b"x").await, Ok(EventId(1)));
    assert_eq!(store.delete_stream(&stream).await, Ok(true));
    assert_eq!(store.delete_stream(&stream).await, Ok(false));
    assert_eq!(
        store.replay(&stream, Some(EventId(1)), 100).await,
        Err(StoreError::UnknownEvent)
    );
}

pub async fn events_trim_to_the_limit<S: Store>(store: S) {
    let stream = StreamKey::new("s1", "get");
    for n in 1..=6u8 {
        store.append(&stream, &[n]).await.unwrap();
    }
    // Four kept (the suite's limit): 3 to 6.
    assert_eq!(
        ids(&store.replay(&stream, None, 100).await.unwrap()),
        [3, 4, 5, 6]
    );
    assert_eq!(
        ids(&store.replay(&stream, Some(EventId(2)), 100).await.unwrap()),
        [3, 4, 5, 6]
    );
    let trimmed = store.replay(&stream, Some(EventId(1)), 100).await;
    assert_eq!(trimmed, Err(StoreError::Trimmed { oldest: EventId(3) }));
    let trimmed = store.tail(&stream, Some(EventId(0))).await.map(|_| ());
    assert_eq!(trimmed, Err(StoreError::Trimmed { oldest: EventId(3) }));
    let unknown = store.tail(&stream, Some(EventId(7))).await.map(|_| ());
    assert_eq!(unknown, Err(StoreError::UnknownEvent));
}

pub async fn live_tail_sees_later_appends<S: Store>(store: S) {
    let stream = StreamKey::new("s1", "get");
    store.append(&stream, b"before").await.unwrap();
    let mut from_now = store.tail(&stream, None).await.unwrap();
    let mut from_start = store.tail(&stream, Some(EventId(0))).await.unwrap();
    // A stream not yet written to can be followed from its start.
    let fresh = StreamKey::new("s1", "fresh");
    let mut fresh_tail = store.tail(&fresh, None).await.unwrap();

    let writer = {
        let (store, stream, fresh) = (store.clone(), stream.clone(), fresh.clone());
        smol::spawn(async move {
            Timer::after(Duration::from_millis(100)).await;
            store.append(&stream, b"later-1").await.unwrap();
            store.append(&stream, b"later-2").await.unwrap();
            store.append(&fresh, b"first").await.unwrap();
        })
    };
    let first = bounded(from_now.next()).await.unwrap();
    assert_eq!((first.id, &first.data[..]), (EventId(2), &b"later-1"[..]));
    assert_eq!(bounded(from_now.next()).await.unwrap().id, EventId(3));
    for expected in 1..=3 {
        assert_eq!(
            bounded(from_start.next()).await.unwrap().id,
            EventId(expected)
        );
    }
    let first = bounded(fresh_tail.next()).await.unwrap();
    assert_eq!((first.id, &first.data[..]), (EventId(1), &b"first"[..]));
    writer.await;
}

pub async fn live_tail_reports_a_trim<S: Store>(store: S) {
    let stream = StreamKey::new("s1", "get");
    let mut tail = store.tail(&stream, Some(EventId(0))).await.unwrap();
    for n in 1..=6u8 {
        store.append(&stream, &[n]).await.unwrap();
    }
    // Events 1 and 2 were dropped before the tail read them: it says so, then goes on.
    let trimmed = bounded(tail.next()).await;
    assert_eq!(trimmed, Err(StoreError::Trimmed { oldest: EventId(3) }));
    for expected in 3..=6 {
        assert_eq!(bounded(tail.next()).await.unwrap().id, EventId(expected));
    }
}

pub async fn bus_delivers_to_every_subscriber<S: Store>(store: S) {
    let mut first = store.subscribe("instance-a").await.unwrap();
    let mut second = store.subscribe("instance-a").await.unwrap();
    let mut elsewhere = store.subscribe("instance-b").await.unwrap();
    assert_eq!(store.publish("instance-a", b"cancel 7").await, Ok(2));
    assert_eq!(store.publish("instance-a", b"reply 8").await, Ok(2));
    assert_eq!(store.publish("nobody", b"lost").await, Ok(0));
    for subscription in [&mut first, &mut second] {
        assert_eq!(
            &bounded(subscription.next()).await.unwrap()[..],
            b"cancel 7"
        );
        assert_eq!(&bounded(subscription.next()).await.unwrap()[..], b"reply 8");
    }
    assert_eq!(store.publish("instance-b", b"listen").await, Ok(1));
    assert_eq!(&bounded(elsewhere.next()).await.unwrap()[..], b"listen");
    // A dropped subscription stops counting.
    drop(second);
    eventually(|| async { store.publish("instance-a", b"ping").await == Ok(1) }).await;
}

pub async fn guard_is_single_use<S: Store>(store: S) {
    assert_eq!(store.claim(b"state-1", MINUTE).await, Ok(true));
    assert_eq!(store.claim(b"state-1", MINUTE).await, Ok(false));
    assert_eq!(store.claim(b"state-2", MINUTE).await, Ok(true));
    // Once its claim has lapsed, a token may be claimed again.
    assert_eq!(
        store.claim(b"short", Duration::from_millis(30)).await,
        Ok(true)
    );
    eventually(|| async { store.claim(b"short", MINUTE).await == Ok(true) }).await;
    assert_eq!(store.claim(b"short", MINUTE).await, Ok(false));
}

pub async fn concurrent_swaps_have_one_winner<S: Store>(store: S) {
    for round in 0..20 {
        let key = session(&format!("race-{round}"));
        store.create(&key, b"start", MINUTE).await.unwrap();
        let version = store.load(&key).await.unwrap().unwrap().version;
        let racers: Vec<_> = [&b"left"[..], &b"right"[..]]
            .into_iter()
            .map(|bytes| {
                let (store, key) = (store.clone(), key.clone());
                smol::spawn(async move {
                    let result = store.compare_and_swap(&key, version, bytes, MINUTE).await;
                    (result, bytes)
                })
            })
            .collect();
        let mut winners = Vec::new();
        for racer in racers {
            match bounded(racer).await {
                (Ok(new), bytes) => winners.push((new, bytes)),
                (Err(error), _) => {
                    assert_eq!(
                        error,
                        StoreError::Conflict {
                            current: Version(2)
                        }
                    );
                }
            }
        }
        assert_eq!(winners.len(), 1, "exactly one swap wins");
        let loaded = store.load(&key).await.unwrap().unwrap();
        assert_eq!(
            (loaded.version, &loaded.bytes[..]),
            (winners[0].0, winners[0].1)
        );
    }
}

pub async fn concurrent_increments_lose_nothing<S: Store>(store: S) {
    let key = session("counter");
    store.create(&key, b"0", MINUTE).await.unwrap();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (store, key) = (store.clone(), key.clone());
            smol::spawn(async move {
                for _ in 0..10 {
                    // Bounded retries: load, add one, swap; a conflict reloads.
                    let mut done = false;
                    for _ in 0..1000 {
                        let current = store.load(&key).await.unwrap().unwrap();
                        let value: u32 = std::str::from_utf8(&current.bytes)
                            .unwrap()
                            .parse()
                            .unwrap();
                        let next = (value + 1).to_string();
                        match store
                            .compare_and_swap(&key, current.version, next.as_bytes(), MINUTE)
                            .await
                        {
                            Ok(_) => {
                                done = true;
                                break;
                            }
                            Err(StoreError::Conflict { .. }) => future::yield_now().await,
                            Err(other) => panic!("{other}"),
                        }
                    }
                    assert!(done, "an increment got through within 1,000 attempts");
                }
            })
        })
        .collect();
    for worker in workers {
        bounded(worker).await;
    }
    let loaded = store.load(&key).await.unwrap().unwrap();
    assert_eq!(
        (&loaded.bytes[..], loaded.version),
        (&b"40"[..], Version(41))
    );
}
