//! Adding 2026-07-28 changes nothing in the session era: `initialize` never negotiates it
//! (even when a config lists it), and the stateful session still answers `ping`.

use std::time::Instant;

use crate::common::*;
use mcp_sansio::model::ProtocolVersion as V;
use mcp_sansio::session::Session;
use mcp_sansio::Config;
use serde_json::json;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;

#[test]
fn initialize_never_negotiates_the_stateless_revision() {
    let now = Instant::now();
    for supported in [V::STATEFUL.to_vec(), V::ALL.to_vec()] {
        let config = Config {
            supported_versions: supported.clone(),
            ..Config::default()
        };
        let mut s = Session::server(config, server_setup("{}"), now);
        let out = feed(&mut s, now, INIT);
        assert_eq!(
            out[0]["result"]["protocolVersion"], "2025-11-25",
            "{supported:?}"
        );
        assert_eq!(s.protocol_version(), Some(V::V2025_11_25));
    }
    assert!(!V::STATEFUL.contains(&V::V2026_07_28));
    assert_eq!(Config::default().latest_supported(), V::V2025_11_25);
}

#[test]
fn the_stateful_session_still_has_the_methods_2026_07_28_removed() {
    let (mut s, now) = server_after_initialize("2025-11-25", "{}", true);
    let out = feed(&mut s, now, r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    assert_eq!(out[0]["result"], json!({}));
}
