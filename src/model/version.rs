//! `ProtocolVersion`: the MCP revisions this engine speaks, ordered by date.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An MCP protocol revision. Ordering follows the release dates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// 2024-11-05: the first revision (HTTP+SSE transport).
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, batches, tool annotations, audio.
    V2025_03_26,
    /// 2025-06-18: structured output, elicitation, resource links, no batches.
    V2025_06_18,
    /// 2025-11-25: tasks, URL elicitation, sampling with tools, icons.
    V2025_11_25,
    /// 2026-07-28: the stateless revision (no `initialize`, no sessions).
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The stateful revisions that use `initialize` and sessions, oldest first.
    pub const STATEFUL: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The newest revision that uses the `initialize` handshake.
    pub const LATEST_STATEFUL: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The newest revision.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The version string, e.g. `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a version string; `None` for revisions this engine does not know.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether this revision uses the `initialize` handshake and sessions.
    pub fn is_stateful(self) -> bool {
        self <= Self::LATEST_STATEFUL
    }

    /// Whether JSON-RPC batches may be received (2025-03-26 only).
    pub fn allows_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }

    /// Whether an error response with an unreadable id omits the `id` member (2025-11-25 on)
    /// instead of writing `null`.
    pub fn omits_missing_error_id(self) -> bool {
        self >= ProtocolVersion::V2025_11_25
    }

    /// The directory name of this revision's official JSON schema (`tests/schema/<stem>/`).
    pub fn schema_dir(self) -> &'static str {
        self.as_str()
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Self::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format_args!("unknown MCP protocol version {s:?}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_by_date_and_round_trip() {
        let mut sorted = ProtocolVersion::ALL;
        sorted.sort();
        assert_eq!(sorted, ProtocolVersion::ALL);
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(serde_json::from_str::<ProtocolVersion>(&json).unwrap(), v);
        }
        assert_eq!(ProtocolVersion::parse("2024-10-07"), None);
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
        assert!(!ProtocolVersion::V2026_07_28.is_stateful());
    }
}
