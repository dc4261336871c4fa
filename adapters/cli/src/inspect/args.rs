//! The options of `mcp-sansio inspect`.

use clap::Args;

use crate::args::{EraArg, StderrArg, TransportArg};

/// `mcp-sansio inspect [--stdio -- CMD ARGS | URL] [--listen ADDR]`.
#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// Inspect a server run as a child process over its stdin/stdout (the server command
    /// follows `--`).
    #[arg(long, conflicts_with = "url", required_unless_present = "url")]
    pub(crate) stdio: bool,
    /// Inspect the HTTP server at this URL instead (http://host:port/path): Streamable HTTP
    /// or the HTTP+SSE transport, detected (see --transport).
    #[arg(value_name = "URL")]
    pub(crate) url: Option<String>,
    /// Where the page is served (default 127.0.0.1 on a free port). Any address still needs
    /// the one-time token printed in the URL.
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<String>,
    /// HTTP only: the transport to speak (auto: Streamable HTTP, HTTP+SSE on 400/404/405).
    #[arg(long, value_enum, value_name = "KIND", default_value_t = TransportArg::Auto)]
    pub(crate) transport: TransportArg,
    /// The protocol era. auto: probe with a stateless `server/discover` (2026-07-28) and fall
    /// back to `initialize` on any error or timeout; stateful: `initialize` only; stateless:
    /// 2026-07-28 requests only.
    #[arg(long, value_enum, value_name = "ERA", default_value_t = EraArg::Auto)]
    pub(crate) era: EraArg,
    /// HTTP only: send `Authorization: Bearer <TOKEN>` with every request.
    #[arg(long, value_name = "TOKEN", requires = "url")]
    pub(crate) bearer_token: Option<String>,
    /// Give up on a request after this many seconds (and on an unanswered elicitation or
    /// sampling request of the server).
    #[arg(long, value_name = "SECS", default_value_t = 300.0)]
    pub(crate) timeout: f64,
    /// A root to offer the server (a directory path or a `file://` URI); repeatable. The
    /// page edits the list.
    #[arg(long = "root", value_name = "PATH")]
    pub(crate) roots: Vec<String>,
    /// What to do with the server's stderr (its logs).
    #[arg(long, value_enum, default_value_t = StderrArg::Inherit)]
    pub(crate) server_stderr: StderrArg,
}
