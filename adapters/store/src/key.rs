//! Names of records, streams, channels and guard tokens, and their Redis key layout.
//!
//! Every key of one session carries the session id as its hash tag (`mcp:{<session>}:…`), so
//! a Redis Cluster keeps them in one slot and a script may touch several of them.

use crate::error::StoreError;

/// The longest session, task, stream or channel name, in bytes.
pub const MAX_ID_LEN: usize = 256;
/// The longest guard token, in bytes.
pub const MAX_TOKEN_LEN: usize = 4096;

/// What a record belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RecordKey {
    /// A stateful session, by its session id.
    Session(String),
    /// A 2026-07-28 task, by its task id.
    Task(String),
}

/// One event stream of one session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StreamKey {
    /// The session the stream belongs to.
    pub session: String,
    /// The stream, unique within the session.
    pub stream: String,
}

impl StreamKey {
    /// A stream key from its two names.
    pub fn new(session: impl Into<String>, stream: impl Into<String>) -> Self {
        StreamKey {
            session: session.into(),
            stream: stream.into(),
        }
    }
}

/// Refuses a name that would break the key layout.
pub(crate) fn check_id(id: &str, what: &'static str) -> Result<(), StoreError> {
    if id.is_empty() || id.len() > MAX_ID_LEN || id.contains(['{', '}', ':']) {
        return Err(StoreError::InvalidKey(what));
    }
    Ok(())
}

impl RecordKey {
    pub(crate) fn check(&self) -> Result<(), StoreError> {
        match self {
            RecordKey::Session(id) => check_id(id, "session id"),
            RecordKey::Task(id) => check_id(id, "task id"),
        }
    }

    /// `mcp:{<session>}:record` or `mcp:task:{<task>}:record`.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn redis_key(&self) -> String {
        match self {
            RecordKey::Session(id) => format!("mcp:{{{id}}}:record"),
            RecordKey::Task(id) => format!("mcp:task:{{{id}}}:record"),
        }
    }
}

impl StreamKey {
    pub(crate) fn check(&self) -> Result<(), StoreError> {
        check_id(&self.session, "session id")?;
        check_id(&self.stream, "stream id")
    }

    /// `mcp:{<session>}:stream:<stream>`.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn redis_key(&self) -> String {
        format!("mcp:{{{}}}:stream:{}", self.session, self.stream)
    }
}

/// `mcp:bus:<channel>`.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) fn channel_key(channel: &str) -> String {
    format!("mcp:bus:{channel}")
}

/// Refuses an empty or oversized guard token.
pub(crate) fn check_token(token: &[u8]) -> Result<(), StoreError> {
    if token.is_empty() || token.len() > MAX_TOKEN_LEN {
        return Err(StoreError::InvalidKey("guard token"));
    }
    Ok(())
}

/// `mcp:guard:<token>` (the token's bytes as they are).
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) fn guard_key(token: &[u8]) -> Vec<u8> {
    let mut key = b"mcp:guard:".to_vec();
    key.extend_from_slice(token);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_session_shares_one_hash_tag() {
        let record = RecordKey::Session("abc".into()).redis_key();
        let stream = StreamKey::new("abc", "s1").redis_key();
        assert_eq!(record, "mcp:{abc}:record");
        assert_eq!(stream, "mcp:{abc}:stream:s1");
        assert_eq!(
            RecordKey::Task("t".into()).redis_key(),
            "mcp:task:{t}:record"
        );
    }

    #[test]
    fn names_that_break_the_layout_are_refused() {
        for bad in ["", "a}b", "a{b", "a:b"] {
            assert!(check_id(bad, "x").is_err(), "{bad:?}");
        }
        assert!(check_id(&"a".repeat(MAX_ID_LEN + 1), "x").is_err());
        assert!(check_id(&"a".repeat(MAX_ID_LEN), "x").is_ok());
        assert!(check_token(b"").is_err());
        assert!(check_token(&[0; MAX_TOKEN_LEN + 1]).is_err());
    }
}
