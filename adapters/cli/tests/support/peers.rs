//! Whether the external peers of scripts/install-peers are installed (`source
//! .ci-cache/env` sets `MCP_PEERS_READY=1`): a test without them is skipped, with a message,
//! except under CI, where it fails.

/// `true` when the peers are installed; `false` (the caller returns: skipped) outside CI.
pub fn ready() -> bool {
    if std::env::var("MCP_PEERS_READY").as_deref() == Ok("1") {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must run scripts/install-peers and source .ci-cache/env (MCP_PEERS_READY != 1)"
    );
    eprintln!("skipped: interop peers not installed (scripts/install-peers; source .ci-cache/env)");
    false
}
