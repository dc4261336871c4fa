//! In-memory bus: one bounded queue per subscriber.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use super::{lock, MemoryStore};
use crate::config::check_size;
use crate::key::check_id;
use crate::{Bus, StoreError, Subscription};

#[derive(Debug, Default)]
pub(super) struct Channels {
    channels: HashMap<String, Vec<Subscriber>>,
    subscribers: usize,
}

#[derive(Debug)]
struct Subscriber {
    queue: async_channel::Sender<Bytes>,
    lagged: Arc<AtomicBool>,
}

impl Channels {
    /// Forgets subscriptions that were dropped.
    fn prune(&mut self) {
        for subscribers in self.channels.values_mut() {
            subscribers.retain(|subscriber| !subscriber.queue.is_closed());
        }
        self.channels
            .retain(|_, subscribers| !subscribers.is_empty());
        self.subscribers = self.channels.values().map(Vec::len).sum();
    }
}

impl Bus for MemoryStore {
    type Subscription = MemorySubscription;

    async fn publish(&self, channel: &str, payload: &[u8]) -> Result<usize, StoreError> {
        check_id(channel, "channel")?;
        check_size(
            payload.len(),
            self.inner.config.max_message_bytes,
            "message",
        )?;
        let payload = Bytes::copy_from_slice(payload);
        let mut table = lock(&self.inner.channels);
        let Some(subscribers) = table.channels.get_mut(channel) else {
            return Ok(0);
        };
        let mut delivered = 0;
        subscribers.retain(
            |subscriber| match subscriber.queue.try_send(payload.clone()) {
                Ok(()) => {
                    delivered += 1;
                    true
                }
                Err(async_channel::TrySendError::Full(_)) => {
                    subscriber.lagged.store(true, Ordering::Release);
                    true
                }
                Err(async_channel::TrySendError::Closed(_)) => false,
            },
        );
        table.prune();
        Ok(delivered)
    }

    async fn subscribe(&self, channel: &str) -> Result<MemorySubscription, StoreError> {
        check_id(channel, "channel")?;
        let limits = self.inner.limits;
        let mut table = lock(&self.inner.channels);
        if table.subscribers >= limits.max_subscribers {
            table.prune();
        }
        if table.subscribers >= limits.max_subscribers {
            return Err(StoreError::Full {
                what: "bus subscriptions",
                limit: limits.max_subscribers,
            });
        }
        let (sender, receiver) = async_channel::bounded(limits.subscriber_queue.max(1));
        let lagged = Arc::new(AtomicBool::new(false));
        table
            .channels
            .entry(channel.to_owned())
            .or_default()
            .push(Subscriber {
                queue: sender,
                lagged: lagged.clone(),
            });
        table.subscribers += 1;
        Ok(MemorySubscription {
            queue: receiver,
            lagged,
        })
    }
}

/// A subscription to one in-memory channel; dropping it unsubscribes.
#[derive(Debug)]
pub struct MemorySubscription {
    queue: async_channel::Receiver<Bytes>,
    lagged: Arc<AtomicBool>,
}

impl Subscription for MemorySubscription {
    async fn next(&mut self) -> Result<Bytes, StoreError> {
        if self.lagged.swap(false, Ordering::AcqRel) {
            return Err(StoreError::Lagged);
        }
        self.queue.recv().await.map_err(|_| StoreError::Closed)
    }
}
