//! What a server declares about itself for the stateless revision, and the `server/discover`
//! result built from it.

use crate::model::stateless::{set_server_info, CacheHints, DiscoverResponse, DiscoverResult};
use crate::model::{Extra, Implementation, Meta, ProtocolVersion, ServerCapabilities};

/// The most versions a profile advertises; more are ignored (the list is tiny in practice).
pub const MAX_SUPPORTED_VERSIONS: usize = 16;

/// A server's declared identity, capabilities and versions: the only context stateless
/// validation uses.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerProfile {
    /// Every version the server speaks, preferred first. Stateless (2026-07-28 on) versions
    /// are served per request; stateful ones only through `initialize` (dual era).
    pub supported_versions: Vec<ProtocolVersion>,
    /// Name and version, sent in every result's `_meta`.
    pub info: Implementation,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for the model.
    pub instructions: Option<String>,
    /// The cache hints of the `server/discover` result.
    pub discover_cache: CacheHints,
}

impl ServerProfile {
    /// A stateless-only server speaking 2026-07-28, with discover results public for a minute.
    pub fn new(info: Implementation, capabilities: ServerCapabilities) -> Self {
        ServerProfile {
            supported_versions: vec![ProtocolVersion::V2026_07_28],
            info,
            capabilities,
            instructions: None,
            discover_cache: CacheHints::public(60_000),
        }
    }

    /// Also accept the stateful revisions through `initialize` (a dual-era server): they are
    /// listed after the stateless ones, newest first.
    pub fn dual_era(mut self) -> Self {
        let mut stateful = ProtocolVersion::STATEFUL;
        stateful.reverse();
        for v in stateful {
            if !self.supported_versions.contains(&v) {
                self.supported_versions.push(v);
            }
        }
        self
    }

    /// Whether a request naming `version` in `_meta` is served statelessly.
    pub fn serves_statelessly(&self, version: ProtocolVersion) -> bool {
        !version.is_stateful() && self.advertised().any(|v| v == version)
    }

    /// The advertised versions (at most [`MAX_SUPPORTED_VERSIONS`]).
    fn advertised(&self) -> impl Iterator<Item = ProtocolVersion> + '_ {
        self.supported_versions
            .iter()
            .copied()
            .take(MAX_SUPPORTED_VERSIONS)
    }

    /// The advertised versions as strings, for `supportedVersions` and -32022's `supported`.
    pub fn supported_strings(&self) -> Vec<String> {
        self.advertised().map(|v| v.as_str().to_owned()).collect()
    }

    /// A result `_meta` carrying `io.modelcontextprotocol/serverInfo`.
    pub fn result_meta(&self) -> Meta {
        let mut meta = None;
        set_server_info(&mut meta, &self.info);
        meta.unwrap_or_default()
    }
}

/// The `server/discover` result of `profile`: versions, capabilities, instructions, cache
/// hints and `serverInfo` in `_meta`.
pub fn discover_response(profile: &ServerProfile) -> DiscoverResponse {
    DiscoverResponse::cacheable(
        DiscoverResult {
            supported_versions: profile.supported_strings(),
            capabilities: profile.capabilities.clone(),
            instructions: profile.instructions.clone(),
            meta: Some(profile.result_meta()),
            extra: Extra::new(),
        },
        profile.discover_cache,
    )
}
