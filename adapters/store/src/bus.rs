//! The bus: publish/subscribe on named channels (listen events, cancellations, replies
//! routed to the instance that owns a request). Delivery is at most once, to subscribers
//! present when a message is published.

use std::future::Future;

use bytes::Bytes;

use crate::error::StoreError;

/// Named channels.
pub trait Bus {
    /// The subscription this bus hands out.
    type Subscription: Subscription + Send;

    /// Sends `payload` to every current subscriber of `channel` and returns how many there
    /// were.
    fn publish(
        &self,
        channel: &str,
        payload: &[u8],
    ) -> impl Future<Output = Result<usize, StoreError>> + Send;

    /// Subscribes to `channel`; messages published after this returns are delivered.
    fn subscribe(
        &self,
        channel: &str,
    ) -> impl Future<Output = Result<Self::Subscription, StoreError>> + Send;
}

/// Messages of one channel, in publication order.
pub trait Subscription {
    /// The next message, waiting for one. [`StoreError::Lagged`] once after messages were
    /// dropped because this subscriber did not keep up.
    fn next(&mut self) -> impl Future<Output = Result<Bytes, StoreError>> + Send;
}
