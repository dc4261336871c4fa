//! `mcp-sansio inspect`: a local web page to inspect an MCP server. The CLI holds the MCP
//! client (connection.rs), serves the page and a small JSON API on a loopback port
//! (server.rs, api.rs) behind a one-time token (guard.rs), and streams the protocol trace to
//! the page's frame log (feed.rs, sse.rs). The page's files are embedded (assets.rs).

mod api;
pub(crate) mod args;
mod assets;
mod connection;
mod feed;
mod guard;
mod pending;
mod server;
mod sse;
mod stateless;

use std::ffi::OsString;
use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use crate::args::{EraArg, TransportArg};
use crate::Failure;
use args::InspectArgs;
use connection::{Connection, Target};

/// Runs the inspector until the process is stopped.
pub(crate) fn run(args: &InspectArgs, server: Option<Vec<OsString>>) -> Result<(), Failure> {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(Failure::Usage(
            "--timeout must be a positive number of seconds".into(),
        ));
    }
    let target = target(args, server)?;
    let listener = bind(args.listen.as_deref())?;
    let addr = listener
        .local_addr()
        .map_err(|e| Failure::Failed(format!("cannot read the listening address: {e}")))?;
    let guard = guard::Guard::new(addr)
        .map_err(|e| Failure::Failed(format!("cannot draw a random token: {e}")))?;
    let roots = args
        .roots
        .iter()
        .map(|r| crate::client_inputs::root(r))
        .collect::<Result<_, _>>()?;
    let feed = feed::Feed::new();
    let timeout = Duration::from_secs_f64(args.timeout);
    let connection =
        Connection::start(target, args.era, &feed, timeout, roots).map_err(Failure::Failed)?;
    let url = format!("http://{addr}{}", guard.base_path());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{url}");
    let _ = out.flush();
    drop(out);
    eprintln!("mcp-sansio inspect: open the URL above in a browser; Ctrl-C stops");
    server::serve(listener, guard, api::Api::new(connection, feed));
    Ok(())
}

/// The server to inspect, from the URL or the command after `--`.
fn target(args: &InspectArgs, server: Option<Vec<OsString>>) -> Result<Target, Failure> {
    if let Some(url) = &args.url {
        if server.is_some() {
            return Err(Failure::Usage(
                "a server command after `--` only goes with --stdio".into(),
            ));
        }
        let choice = args.transport.choice();
        if args.era == EraArg::Stateless && args.transport == TransportArg::Sse {
            return Err(Failure::Usage(
                "--transport sse speaks only the handshake era".into(),
            ));
        }
        return Ok(Target::Url(url.clone(), choice, args.bearer_token.clone()));
    }
    let stderr = args.server_stderr;
    match server {
        Some(command) if !command.is_empty() => Ok(Target::Stdio(command, stderr)),
        _ => Err(Failure::Usage(
            "missing the server command: put it last, after `--` \
             (e.g. `mcp-sansio inspect --stdio -- ./my-server`)"
                .into(),
        )),
    }
}

/// Binds `--listen` (a specific address: the Host check needs one) or 127.0.0.1 on a free
/// port.
fn bind(listen: Option<&str>) -> Result<TcpListener, Failure> {
    let addr: SocketAddr = match listen {
        None => SocketAddr::from(([127, 0, 0, 1], 0)),
        Some(text) => text
            .parse()
            .map_err(|_| Failure::Usage(format!("--listen {text}: expected IP:PORT")))?,
    };
    if addr.ip().is_unspecified() {
        return Err(Failure::Usage(
            "--listen needs a specific address (0.0.0.0 and :: match no Host the page sends)"
                .into(),
        ));
    }
    TcpListener::bind(addr).map_err(|e| Failure::Failed(format!("cannot listen on {addr}: {e}")))
}
