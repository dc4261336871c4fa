//! The bus in Redis: `PUBLISH mcp:bus:<channel>`, and one SUBSCRIBE connection per
//! subscription.

use bytes::Bytes;
use futures_lite::StreamExt;
use redis::aio::PubSubStream;

use super::RedisStore;
use crate::config::check_size;
use crate::key::{channel_key, check_id};
use crate::{Bus, StoreError, Subscription};

impl Bus for RedisStore {
    type Subscription = RedisSubscription;

    async fn publish(&self, channel: &str, payload: &[u8]) -> Result<usize, StoreError> {
        check_id(channel, "channel")?;
        check_size(payload.len(), self.config.max_message_bytes, "message")?;
        let receivers: usize = redis::cmd("PUBLISH")
            .arg(channel_key(channel))
            .arg(payload)
            .query_async(&mut self.connection().await?)
            .await?;
        Ok(receivers)
    }

    async fn subscribe(&self, channel: &str) -> Result<RedisSubscription, StoreError> {
        check_id(channel, "channel")?;
        let mut pubsub = self.client.get_async_pubsub().await?;
        pubsub.subscribe(channel_key(channel)).await?;
        Ok(RedisSubscription {
            messages: pubsub.into_on_message(),
        })
    }
}

/// A subscription to one Redis channel, on its own connection; dropping it closes the
/// connection.
pub struct RedisSubscription {
    messages: PubSubStream,
}

impl std::fmt::Debug for RedisSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSubscription").finish_non_exhaustive()
    }
}

impl Subscription for RedisSubscription {
    async fn next(&mut self) -> Result<Bytes, StoreError> {
        match self.messages.next().await {
            Some(message) => Ok(Bytes::copy_from_slice(message.get_payload_bytes())),
            None => Err(StoreError::Closed),
        }
    }
}
