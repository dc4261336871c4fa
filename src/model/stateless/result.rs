//! What 2026-07-28 adds to results: `resultType`, the cache hints `ttlMs` and `cacheScope`,
//! and the generic [`StatelessResult`] that wraps any existing result type with them.
//!
//! The existing result structs (`ListToolsResult`, `CallToolResult`, ...) already keep unknown
//! members, so a stateless result also decodes into them; [`StatelessResult`] gives the new members
//! names and types instead of leaving them in `extra`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The `resultType` of a 2026-07-28 result.
///
/// Clients treat a missing `resultType` (an older server) as [`ResultType::Complete`] and an
/// unknown value as invalid, so deserializing an unknown string fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ResultType {
    /// The request finished; the result carries its answer.
    #[default]
    #[serde(rename = "complete")]
    Complete,
    /// The server needs client input first (an [`InputRequiredResult`](super::InputRequiredResult)).
    #[serde(rename = "input_required")]
    InputRequired,
}

impl ResultType {
    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
        }
    }
}

impl fmt::Display for ResultType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who may cache a result (`cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any client of the server may reuse the result.
    Public,
    /// Only the client (user) that asked may reuse the result.
    Private,
}

/// The cache hints every cacheable result carries (`CacheableResult`): the list calls,
/// `resources/read` and `server/discover`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheHints {
    /// How long the result stays fresh, in milliseconds (0: do not reuse).
    pub ttl_ms: u64,
    /// Who may reuse it.
    pub cache_scope: CacheScope,
}

impl CacheHints {
    /// Fresh for `ttl_ms` milliseconds, for everyone.
    pub const fn public(ttl_ms: u64) -> Self {
        CacheHints {
            ttl_ms,
            cache_scope: CacheScope::Public,
        }
    }

    /// Fresh for `ttl_ms` milliseconds, for the asking client only.
    pub const fn private(ttl_ms: u64) -> Self {
        CacheHints {
            ttl_ms,
            cache_scope: CacheScope::Private,
        }
    }

    /// Not to be reused: a TTL of zero, private.
    pub const NO_STORE: CacheHints = CacheHints::private(0);
}

/// A 2026-07-28 result: `resultType`, the cache hints when the method is cacheable, and the
/// method's own result members (`body`, any existing result type).
///
/// `body` keeps `_meta` (where `io.modelcontextprotocol/serverInfo` goes) and unknown members.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatelessResult<T> {
    /// `complete` for a finished request; missing reads as `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// `ttlMs` and `cacheScope`, required on cacheable results and absent on the others.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheHints>,
    /// The method's result members.
    #[serde(flatten)]
    pub body: T,
}

impl<T> StatelessResult<T> {
    /// A complete result without cache hints (`tools/call`, `prompts/get`, ...).
    pub fn complete(body: T) -> Self {
        StatelessResult {
            result_type: ResultType::Complete,
            cache: None,
            body,
        }
    }

    /// A complete, cacheable result (the list calls, `resources/read`, `server/discover`).
    pub fn cacheable(body: T, cache: CacheHints) -> Self {
        StatelessResult {
            result_type: ResultType::Complete,
            cache: Some(cache),
            body,
        }
    }
}
