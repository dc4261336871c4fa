//! Single use of a `requestState` (2026-07-28): a bounded set of redeemed states, owned by the
//! application and shared by every machine that verifies states with the same key (on HTTP
//! each exchange is a fresh machine), so a state replayed after its first redemption is
//! refused with -32602. A redemption is keyed on the state's MAC (its decoded tag), not on its
//! text, so no other spelling of the same state redeems it again. Entries leave when the state they remember expires (the state is
//! worthless then anyway); time comes in as an argument.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use super::request_state::StateError;
use crate::encoding::sha256;

/// Remembers which `requestState`s were redeemed, until they expire. Cloning shares the
/// set. When `capacity` unexpired redemptions are held, a new one is refused
/// ([`StateError::ReplayStoreFull`]) rather than forgetting one that could then be replayed:
/// size it for (redemptions per second × state lifetime).
#[derive(Clone, Debug)]
pub struct ReplayGuard {
    inner: Arc<Mutex<Redeemed>>,
}

#[derive(Debug)]
struct Redeemed {
    capacity: usize,
    /// SHA-256 of the state's MAC → its expiry (Unix ms).
    seen: HashMap<[u8; 32], u64>,
    /// Insertion order, for expiring from the front.
    order: VecDeque<([u8; 32], u64)>,
}

impl ReplayGuard {
    /// A set holding at most `capacity` unexpired redemptions.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        ReplayGuard {
            inner: Arc::new(Mutex::new(Redeemed {
                capacity,
                seen: HashMap::new(),
                order: VecDeque::new(),
            })),
        }
    }

    /// Records the redemption of the state whose MAC is `mac` (the `mac` of what
    /// [`RequestStateKey::verify`] returned: the state already verified, valid until
    /// `expires_at_ms`) at `now_ms`: [`StateError::Replayed`] if it was redeemed before and has
    /// not expired.
    ///
    /// [`RequestStateKey::verify`]: super::RequestStateKey::verify
    pub fn redeem(&self, mac: &[u8], expires_at_ms: u64, now_ms: u64) -> Result<(), StateError> {
        let digest = sha256(mac);
        let mut set = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        set.expire(now_ms);
        if set.seen.get(&digest).is_some_and(|&e| e > now_ms) {
            return Err(StateError::Replayed);
        }
        if set.seen.len() >= set.capacity {
            // Expiry times are not strictly ordered (keys may change lifetimes): sweep all.
            set.seen.retain(|_, e| *e > now_ms);
            set.order.retain(|(_, e)| *e > now_ms);
            if set.seen.len() >= set.capacity {
                return Err(StateError::ReplayStoreFull);
            }
        }
        set.seen.insert(digest, expires_at_ms);
        set.order.push_back((digest, expires_at_ms));
        Ok(())
    }

    /// Redemptions held now (expired ones may linger until the next redemption).
    #[must_use]
    pub fn len(&self) -> usize {
        let set = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        set.seen.len()
    }

    /// Whether no redemption is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Redeemed {
    /// Drops expired redemptions from the front of the insertion order.
    fn expire(&mut self, now_ms: u64) {
        while let Some(&(digest, expires)) = self.order.front() {
            if expires > now_ms {
                break;
            }
            self.order.pop_front();
            if self.seen.get(&digest) == Some(&expires) {
                self.seen.remove(&digest);
            }
        }
    }
}
