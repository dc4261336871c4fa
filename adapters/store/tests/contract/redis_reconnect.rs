//! The Redis backend outlives its server: a store made before the server answers works once
//! it does, and a store whose server restarted uses the new one (a read at once, other
//! commands after the backoff).

use std::time::Duration;

use mcp_sansio_store::{RecordKey, RecordStore, RedisConfig, RedisStore, StoreError};

use crate::redis_server::{free_port, RedisServer};

const MINUTE: Duration = Duration::from_secs(60);

/// `op` until it succeeds: bounded, 200 tries 50 ms apart (the backoff tops out at 5 s).
async fn eventually<T, F: std::future::Future<Output = Result<T, StoreError>>>(
    mut op: impl FnMut() -> F,
) -> T {
    for _ in 0..200 {
        if let Ok(value) = op().await {
            return value;
        }
        smol::Timer::after(Duration::from_millis(50)).await;
    }
    panic!("the store never answered");
}

#[test]
fn a_lazy_store_connects_once_its_server_answers_and_again_after_a_restart() {
    let port = free_port();
    let url = format!("redis://127.0.0.1:{port}");
    let store = RedisStore::lazy(&url, crate::config(), RedisConfig::default()).unwrap();
    let key = RecordKey::Session("s1".into());
    smol::block_on(async {
        // Nothing listens yet: an error, not a hang or a panic.
        assert!(matches!(
            store.load(&key).await,
            Err(StoreError::Backend(_))
        ));
        assert!(
            RedisStore::connect(&url, crate::config(), RedisConfig::default())
                .await
                .is_err()
        );
    });
    let Some(server) = RedisServer::start_at(port) else {
        return;
    };
    smol::block_on(async {
        eventually(|| store.create(&key, b"one", MINUTE)).await;
        assert_eq!(&store.load(&key).await.unwrap().unwrap().bytes[..], b"one");
    });
    drop(server);
    let _server = RedisServer::start_at(port).expect("redis-server starts again");
    smol::block_on(async {
        // The old connection is closed: the read is sent again on a new one (the new server
        // is empty: no persistence).
        assert_eq!(store.load(&key).await, Ok(None));
        store.create(&key, b"two", MINUTE).await.unwrap();
        assert_eq!(&store.load(&key).await.unwrap().unwrap().bytes[..], b"two");
    });
}
