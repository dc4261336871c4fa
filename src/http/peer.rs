//! Who sent a request, and the per-peer admission hook: the embedding server says who a
//! request comes from (the adapter knows the address, a bearer guard the token's subject) as
//! data on the request head, and a [`PeerLimit`] set in the endpoint's config decides whether
//! that peer may open one more session (refused: 429 with `Retry-After`).

use core::net::IpAddr;
use std::fmt;
use std::time::Duration;

/// Who sent a request, as far as the embedding server knows. Both parts are optional: a
/// request handed in with neither is never limited per peer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Peer {
    /// The client's address (the port left out: it changes with every connection).
    pub addr: Option<IpAddr>,
    /// The subject of the bearer token the request was admitted with.
    pub subject: Option<String>,
}

impl Peer {
    /// The key a peer is known by when no [`PeerLimit`] names one: its bearer subject, or
    /// its address for a request without one; `None` with neither.
    pub(crate) fn default_key(&self) -> Option<String> {
        match (&self.subject, self.addr) {
            (Some(subject), _) => Some(format!("sub:{subject}")),
            (None, Some(addr)) => Some(format!("ip:{addr}")),
            (None, None) => None,
        }
    }
}

/// Decides, per peer, whether one more session may open. The endpoint counts the live
/// sessions under each key and asks before creating one; the sessions of a key are counted
/// until they end (DELETE, expiry, eviction).
pub trait PeerLimit: Send + Sync + fmt::Debug {
    /// The key `peer`'s sessions are counted under; `None`: not limited.
    fn key(&self, peer: &Peer) -> Option<String>;
    /// Whether a key holding `live` sessions may open one more: `Err(retry_after)` refuses
    /// it with 429 and a `Retry-After` of that many seconds (rounded up).
    fn admit(&self, key: &str, live: usize) -> Result<(), Duration>;
}

/// The built-in [`PeerLimit`]: at most `max` live sessions per bearer subject, or per
/// address for requests without one.
#[derive(Clone, Debug)]
pub struct MaxSessionsPerPeer {
    /// Live sessions one peer may hold.
    pub max: usize,
    /// What a refused peer is told to wait.
    pub retry_after: Duration,
}

impl MaxSessionsPerPeer {
    /// At most `max` live sessions per peer; refused peers are told to retry in 10 s.
    #[must_use]
    pub fn new(max: usize) -> Self {
        MaxSessionsPerPeer {
            max,
            retry_after: Duration::from_secs(10),
        }
    }
}

impl PeerLimit for MaxSessionsPerPeer {
    fn key(&self, peer: &Peer) -> Option<String> {
        peer.default_key()
    }

    fn admit(&self, _key: &str, live: usize) -> Result<(), Duration> {
        if live < self.max {
            Ok(())
        } else {
            Err(self.retry_after)
        }
    }
}

/// Live sessions per peer key, and each session's key.
#[derive(Debug, Default)]
pub(crate) struct PeerCounts {
    live: std::collections::HashMap<String, usize>,
    of_session: std::collections::HashMap<String, String>,
}

impl PeerCounts {
    /// Live sessions under `key`.
    pub(crate) fn live(&self, key: &str) -> usize {
        self.live.get(key).copied().unwrap_or(0)
    }

    /// Session `sid` opened under `key`.
    pub(crate) fn opened(&mut self, sid: &str, key: String) {
        *self.live.entry(key.clone()).or_default() += 1;
        self.of_session.insert(sid.to_owned(), key);
    }

    /// The key `limit` counts `peer`'s sessions under (`None`: no limit, or `peer` is not
    /// limited), or 429 with `Retry-After` when the limit refuses that key one more session.
    pub(crate) fn admit(
        &self,
        limit: Option<&dyn PeerLimit>,
        peer: &Peer,
    ) -> Result<Option<String>, crate::http::reply::Refusal> {
        let Some(key) = limit.and_then(|limit| limit.key(peer)) else {
            return Ok(None);
        };
        match limit.map(|limit| limit.admit(&key, self.live(&key))) {
            Some(Err(wait)) => Err(crate::http::reply::Refusal::new(
                429,
                -32000,
                "Too Many Requests: too many sessions",
            )
            .retry_after(retry_after_secs(wait))),
            _ => Ok(Some(key)),
        }
    }

    /// Session `sid` ended (nothing if it was not counted).
    pub(crate) fn ended(&mut self, sid: &str) {
        let Some(key) = self.of_session.remove(sid) else {
            return;
        };
        if let Some(n) = self.live.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.live.remove(&key);
            }
        }
    }
}

/// The seconds of a `Retry-After` for `wait`, rounded up (at least 1).
pub(crate) fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_keys_by_subject_then_address_and_counts_down() {
        let limit = MaxSessionsPerPeer::new(1);
        let addr = Some(IpAddr::from([127, 0, 0, 1]));
        let by_addr = Peer {
            addr,
            subject: None,
        };
        let by_sub = Peer {
            addr,
            subject: Some("alice".into()),
        };
        assert_eq!(limit.key(&by_addr).as_deref(), Some("ip:127.0.0.1"));
        assert_eq!(limit.key(&by_sub).as_deref(), Some("sub:alice"));
        assert_eq!(limit.key(&Peer::default()), None);
        let mut counts = PeerCounts::default();
        assert_eq!(limit.admit("k", counts.live("k")), Ok(()));
        counts.opened("s1", "k".into());
        assert_eq!(limit.admit("k", counts.live("k")), Err(limit.retry_after));
        counts.ended("s1");
        counts.ended("s1");
        assert_eq!(counts.live("k"), 0);
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
    }
}
