//! What a server session's conversation needs to go on in another process: the negotiated
//! version, both sides' info and capabilities, whether the handshake finished, and where the
//! numbering of our own requests stands. [`Session::snapshot`] takes it, [`Session::restore`]
//! builds a session from it; storing it is the caller's business.
//!
//! A restored session numbers its requests to the client under a prefix the caller picks
//! (`s-<prefix>-<n>`): two processes serving the same session at once never send the same
//! id. What is in flight (our pending requests, the client's unanswered ones) stays with the
//! process that holds it and is not part of the snapshot.

use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::{Role, ServerSetup, Session, State};
use crate::config::Config;
use crate::model::{ClientCapabilities, Implementation, ProtocolVersion, ServerCapabilities};

/// Bytes of a request-id prefix at most (see [`Session::restore`]).
pub const MAX_ID_PREFIX: usize = 64;

/// A server session's movable state (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSnapshot {
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// Whether `notifications/initialized` arrived.
    pub ready: bool,
    /// The client's `clientInfo`.
    pub client_info: Implementation,
    /// The client's declared capabilities.
    pub client_capabilities: ClientCapabilities,
    /// The `serverInfo` the client was given.
    pub server_info: Implementation,
    /// The capabilities the client was given.
    pub server_capabilities: ServerCapabilities,
    /// The `instructions` the client was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The number our next request to the client carries.
    pub next_request: u64,
}

/// Why a session snapshot was not restored: by a session, a server, or an HTTP endpoint
/// ([`crate::http::Endpoint::handle_restore`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RestoreError {
    /// The snapshot names a version this configuration does not support.
    UnsupportedVersion(String),
    /// The request-id prefix is empty, longer than [`MAX_ID_PREFIX`] or not ASCII
    /// alphanumeric (with `.` and `_`).
    InvalidPrefix,
    /// The bytes are not a snapshot.
    Malformed(String),
    /// The machine cannot restore sessions (the [`crate::http::SessionMachine`] default).
    Unsupported,
    /// The endpoint has no instance id configured: sessions are not shared.
    NotShared,
    /// The endpoint's session table is full of initialized sessions.
    Full,
    /// The session id is empty, too long or not visible ASCII.
    InvalidSessionId,
}

impl std::fmt::Display for RestoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RestoreError::UnsupportedVersion(v) => write!(f, "unsupported protocol version {v}"),
            RestoreError::InvalidPrefix => f.write_str("invalid request-id prefix"),
            RestoreError::Malformed(e) => write!(f, "malformed snapshot: {e}"),
            RestoreError::Unsupported => f.write_str("this machine cannot restore sessions"),
            RestoreError::NotShared => f.write_str("sessions are not shared"),
            RestoreError::Full => f.write_str("the session table is full"),
            RestoreError::InvalidSessionId => f.write_str("invalid session id"),
        }
    }
}

impl std::error::Error for RestoreError {}

impl Session {
    /// The movable state of a server session whose `initialize` was answered; `None` on the
    /// client side, before `initialize` and once closed. Changes with the handshake's end and
    /// with every request we send (the numbering).
    pub fn snapshot(&self) -> Option<SessionSnapshot> {
        if self.role != Role::Server || matches!(self.state, State::NotInitialized | State::Closed)
        {
            return None;
        }
        let setup = self.server_setup.as_deref()?;
        Some(SessionSnapshot {
            protocol_version: self.version?.as_str().to_owned(),
            ready: self.state == State::Ready,
            client_info: self.peer_info.clone()?,
            client_capabilities: self.peer_client_caps.clone()?,
            server_info: setup.info.clone(),
            server_capabilities: setup.capabilities.clone(),
            instructions: setup.instructions.clone(),
            next_request: self.outbound.next_number(),
        })
    }

    /// A server session that goes on from `snapshot`, numbering its requests to the client
    /// `s-<id_prefix>-<n>` from where the snapshot left off. The caller picks a prefix no
    /// other holder of the session uses (e.g. an instance id and a serial).
    pub fn restore(
        config: Config,
        snapshot: SessionSnapshot,
        id_prefix: &str,
        now: Instant,
    ) -> Result<Session, RestoreError> {
        if !valid_prefix(id_prefix) {
            return Err(RestoreError::InvalidPrefix);
        }
        let version = ProtocolVersion::parse(&snapshot.protocol_version)
            .filter(|v| config.supports(*v) && v.is_stateful())
            .ok_or_else(|| RestoreError::UnsupportedVersion(snapshot.protocol_version.clone()))?;
        let setup = ServerSetup {
            info: snapshot.server_info,
            capabilities: snapshot.server_capabilities,
            instructions: snapshot.instructions,
        };
        let mut session = Session::new(Role::Server, config, None, Some(Arc::new(setup)), now);
        session.version = Some(version);
        session.peer_info = Some(snapshot.client_info);
        session.peer_client_caps = Some(snapshot.client_capabilities);
        session.state = if snapshot.ready {
            State::Ready
        } else {
            State::Initializing
        };
        session
            .outbound
            .continue_from(snapshot.next_request, id_prefix);
        Ok(session)
    }

    /// Numbers this server session's requests to the client `s-<id_prefix>-<n>` from now on
    /// (a session created on one of several instances, so replies name their instance).
    pub fn number_requests_under(&mut self, id_prefix: &str) -> Result<(), RestoreError> {
        if !valid_prefix(id_prefix) {
            return Err(RestoreError::InvalidPrefix);
        }
        let next = self.outbound.next_number();
        self.outbound.continue_from(next, id_prefix);
        Ok(())
    }

    /// Brings a server session held here up to `snapshot`, which another process wrote since
    /// this one was taken or restored: the handshake moves on to ready if it finished there
    /// (never back). Everything else a snapshot holds is fixed at `initialize`.
    pub fn refresh(&mut self, snapshot: &SessionSnapshot) {
        if self.role == Role::Server && self.state == State::Initializing && snapshot.ready {
            self.state = State::Ready;
        }
    }
}

/// 1 to [`MAX_ID_PREFIX`] ASCII letters, digits, `.` and `_`.
fn valid_prefix(prefix: &str) -> bool {
    !prefix.is_empty()
        && prefix.len() <= MAX_ID_PREFIX
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
