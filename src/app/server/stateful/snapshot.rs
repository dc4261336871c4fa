//! The application server's movable state: the session's snapshot (see
//! `crate::session::SessionSnapshot`) with what the stateful front end keeps beside it, the
//! `logging/setLevel` level and the `resources/subscribe` URIs. [`Server::snapshot`] encodes it
//! as JSON bytes, [`Server::restore`] takes them back; [`Server::take_snapshot_due`] says when
//! something in it changed.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::requests::MAX_SUBSCRIPTIONS;
use crate::app::server::{Server, MAX_SUBSCRIPTION_URI};
use crate::model::LoggingLevel;
use crate::session::{RestoreError, Session, SessionSnapshot, State};

/// The snapshot's format version.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerSnapshot {
    format: u32,
    session: SessionSnapshot,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    log_level: Option<LoggingLevel>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    subscriptions: Vec<String>,
}

impl Server {
    /// The stateful session's movable state as JSON bytes, once its `initialize` was answered
    /// (`None` before, and once closed). See [`Server::restore`].
    pub fn snapshot(&self) -> Option<Vec<u8>> {
        let snapshot = ServerSnapshot {
            format: FORMAT,
            session: self.session.snapshot()?,
            log_level: self.shared.level(),
            subscriptions: self.stateful.subscriptions.iter().cloned().collect(),
        };
        serde_json::to_vec(&snapshot).ok()
    }

    /// Goes on with the session `bytes` (from [`Server::snapshot`]) describe, in place of the
    /// fresh one this server was built with; our requests to the client are numbered
    /// `s-<id_prefix>-<n>`. Call it on a server no frame reached yet.
    pub fn restore(
        &mut self,
        now: Instant,
        bytes: &[u8],
        id_prefix: &str,
    ) -> Result<(), RestoreError> {
        let snapshot = decode(bytes)?;
        let subscriptions = snapshot.subscriptions;
        let config = self.session.config().clone();
        self.session = Session::restore(config, snapshot.session, id_prefix, now)?;
        if let Some(level) = snapshot.log_level {
            self.shared.set_level(level);
        }
        self.stateful.subscriptions = subscriptions.into_iter().collect();
        self.last_now = now;
        self.stateful.saved = Some(self.snapshot_mark());
        Ok(())
    }

    /// Brings this server's session up to `bytes` (a later [`Server::snapshot`] of the same
    /// session, written by another process): the handshake's end, the level and the
    /// subscriptions. What is in flight here is kept.
    pub fn refresh(&mut self, bytes: &[u8]) -> Result<(), RestoreError> {
        let snapshot = decode(bytes)?;
        self.session.refresh(&snapshot.session);
        if let Some(level) = snapshot.log_level {
            self.shared.set_level(level);
        }
        self.stateful.subscriptions = snapshot.subscriptions.into_iter().collect();
        self.stateful.saved = Some(self.snapshot_mark());
        Ok(())
    }

    /// Whether the movable state changed since the last call that returned `true` (or the
    /// restore): the handshake moved on, or the level or the subscriptions changed. Our
    /// requests' numbering alone does not count (a restored copy numbers under its own
    /// prefix).
    pub fn take_snapshot_due(&mut self) -> bool {
        if self.session.snapshot().is_none() {
            return false;
        }
        let mark = self.snapshot_mark();
        if self.stateful.saved == Some(mark) {
            return false;
        }
        self.stateful.saved = Some(mark);
        true
    }

    fn snapshot_mark(&self) -> (bool, u64) {
        let ready = self.session.state() == State::Ready;
        (ready, self.stateful.changes)
    }
}

/// A snapshot's bytes, checked against the format and the subscription limits.
fn decode(bytes: &[u8]) -> Result<ServerSnapshot, RestoreError> {
    let snapshot: ServerSnapshot =
        serde_json::from_slice(bytes).map_err(|e| RestoreError::Malformed(e.to_string()))?;
    if snapshot.format != FORMAT {
        let found = snapshot.format;
        return Err(RestoreError::Malformed(format!("format {found}")));
    }
    let subscriptions = &snapshot.subscriptions;
    if subscriptions.len() > MAX_SUBSCRIPTIONS
        || subscriptions.iter().any(|u| u.len() > MAX_SUBSCRIPTION_URI)
    {
        return Err(RestoreError::Malformed(
            "too many or too long subscriptions".into(),
        ));
    }
    Ok(snapshot)
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
