//! The Redis backend's keys are the ones docs/store.md lists: one hash tag per session, and
//! every key with a time to live.

use std::time::Duration;

use futures_lite::StreamExt;
use mcp_sansio_store::{
    Bus, EventLog, Guard, RecordKey, RecordStore, RedisConfig, RedisStore, StreamKey,
};

use crate::redis_server::RedisServer;

const MINUTE: Duration = Duration::from_secs(60);

#[test]
fn redis_keys_follow_the_documented_layout() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    smol::block_on(async {
        let store = RedisStore::connect(&server.url(), crate::config(), RedisConfig::default())
            .await
            .unwrap();
        store
            .create(&RecordKey::Session("s1".into()), b"x", MINUTE)
            .await
            .unwrap();
        store
            .create(&RecordKey::Task("t1".into()), b"x", MINUTE)
            .await
            .unwrap();
        store
            .append(&StreamKey::new("s1", "get"), b"x")
            .await
            .unwrap();
        assert!(store.claim(b"token", MINUTE).await.unwrap());

        let client = redis::Client::open(server.url()).unwrap();
        let mut raw = client.get_multiplexed_async_connection().await.unwrap();
        let mut keys: Vec<String> = redis::cmd("KEYS")
            .arg("*")
            .query_async(&mut raw)
            .await
            .unwrap();
        keys.sort();
        let expected = [
            ("mcp:guard:token", "string"),
            ("mcp:task:{t1}:record", "hash"),
            ("mcp:{s1}:record", "hash"),
            ("mcp:{s1}:stream:get", "stream"),
        ];
        assert_eq!(keys, expected.map(|(key, _)| key));
        for (key, kind) in expected {
            let found: String = redis::cmd("TYPE")
                .arg(key)
                .query_async(&mut raw)
                .await
                .unwrap();
            assert_eq!(found, kind, "{key}");
            let ttl: i64 = redis::cmd("PTTL")
                .arg(key)
                .query_async(&mut raw)
                .await
                .unwrap();
            assert!(ttl > 0, "{key} expires");
        }

        // The bus channel `c` is the Redis channel `mcp:bus:c`.
        let mut pubsub = client.get_async_pubsub().await.unwrap();
        pubsub.subscribe("mcp:bus:c").await.unwrap();
        assert_eq!(store.publish("c", b"hello").await, Ok(1));
        let message = futures_lite::future::or(pubsub.on_message().next(), async {
            smol::Timer::after(Duration::from_secs(20)).await;
            panic!("no message within 20 s");
        })
        .await
        .unwrap();
        assert_eq!(message.get_payload_bytes(), b"hello");
    });
}
