//! `server/discover` (2026-07-28): the one call that tells a client which versions and
//! capabilities a server has, replacing what `initialize` returned. Servers must implement
//! it; stdio clients also use it as the era probe.

use super::{CacheHints, StatelessResult};
use crate::model::{Implementation, ServerCapabilities};

mcp_object! {
    /// The result members of `server/discover` (without `resultType` and the cache hints, which
    /// [`StatelessResult`] adds: the full result is `StatelessResult<DiscoverResult>`).
    /// `serverInfo` lives in `_meta`.
    #[derive(Default)]
    pub struct DiscoverResult {
        /// Every protocol version the server accepts, preferred first.
        pub supported_versions: Vec<String>,
        /// What the server offers.
        pub capabilities: ServerCapabilities,
        /// How to use the server, for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub instructions: Option<String>,
    }
    meta: "Result metadata (`io.modelcontextprotocol/serverInfo`)."
}

impl DiscoverResult {
    /// The server's name and version from `_meta`, when present.
    pub fn server_info(&self) -> Option<Implementation> {
        super::server_info(self.meta.as_ref())
    }
}

/// The full `server/discover` result: `resultType`, `ttlMs`, `cacheScope` and the members.
pub(crate) type DiscoverResponse = StatelessResult<DiscoverResult>;

impl DiscoverResponse {
    /// The cache hints, or [`CacheHints::NO_STORE`] when a (non-conforming) server sent none.
    pub fn cache_or_no_store(&self) -> CacheHints {
        self.cache.unwrap_or(CacheHints::NO_STORE)
    }
}
