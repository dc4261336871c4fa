//! Logging: the RFC 5424 levels, `logging/setLevel` params and `notifications/message` params.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A syslog severity (RFC 5424), ordered from least (`Debug`) to most severe (`Emergency`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debugging detail.
    Debug,
    /// Informational.
    Info,
    /// Normal but significant.
    Notice,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least severe first.
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The wire name (`"warning"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }

    /// Parses a wire name (exact, lowercase).
    pub fn parse(name: &str) -> Option<LoggingLevel> {
        LoggingLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

mcp_object! {
    /// Params of `logging/setLevel`.
    pub struct SetLevelParams {
        /// The least severe level the client wants.
        pub level: LoggingLevel,
    }
    meta: "Request metadata."
}

mcp_object! {
    /// Params of `notifications/message`.
    pub struct LoggingMessageParams {
        /// Severity.
        pub level: LoggingLevel,
        /// The logger's name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub logger: Option<String>,
        /// Any JSON data.
        pub data: Value,
    }
    meta: "Metadata."
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_their_wire_names_in_severity_order() {
        for level in LoggingLevel::ALL {
            assert_eq!(LoggingLevel::parse(level.as_str()), Some(level));
            let wire = serde_json::to_value(level).unwrap();
            assert_eq!(wire, level.as_str());
        }
        assert_eq!(LoggingLevel::parse("WARNING"), None);
        assert!(LoggingLevel::ALL.windows(2).all(|w| w[0] < w[1]));
    }
}
