//! `rmcp_peer`: rmcp 3.11 as an interop peer for mcp-sansio's tests
//! (adapters/cli/tests/interop/rmcp.rs), in both roles and both eras.
//!
//! ```text
//! rmcp_peer server --stdio [--versions V,V...]
//! rmcp_peer server --http ADDR [--versions V,V...]      (feature peer-http; prints its URL)
//! rmcp_peer client [OPTIONS] --stdio -- CMD [ARGS]...
//! rmcp_peer client [OPTIONS] URL                          (feature peer-http)
//!
//! client OPTIONS:
//!   --era stateful|stateless|auto   initialize (default) | server/discover 2026-07-28 | discover,
//!                              falling back to initialize
//!   --version V                the version initialize asks for (default 2025-11-25)
//!   --call NAME JSON           tools/call after the listings (repeatable)
//!   --prompt NAME JSON         prompts/get
//!   --read URI                 resources/read
//! ```
//!
//! The client prints one JSON object per line on stdout (`connected` with the negotiated
//! `protocolVersion`, `tools`, `prompts`, `resources`, one line per call, then `done`); on a
//! failure it prints the step and error on stderr and exits with 1. Usage errors exit with 2.
//! It declares roots, form elicitation and sampling and answers them with fixed values
//! (`answers.rs`), in both eras.

mod answers;
mod client;
mod server;

use std::process::ExitCode;

use client::{ClientPlan, Era, Op};
use rmcp::model::{JsonObject, ProtocolVersion};
use server::PeerServer;

const USAGE: &str = "usage: rmcp_peer server (--stdio | --http ADDR) [--versions V,V...]\n       \
    rmcp_peer client [--era stateful|stateless|auto] [--version V] [--call NAME JSON]... \
    [--prompt NAME JSON]... [--read URI]... (--stdio -- CMD... | URL)";

/// What the command line asked for.
// Without `peer-http` the HTTP variants are parsed only to be refused.
#[cfg_attr(not(feature = "peer-http"), allow(dead_code))]
enum Command {
    ServeStdio(PeerServer),
    ServeHttp(PeerServer, String),
    ClientStdio(ClientPlan, Vec<String>),
    ClientUrl(ClientPlan, String),
}

fn version(text: &str) -> Result<ProtocolVersion, String> {
    serde_json::from_value(text.into()).map_err(|e| format!("bad version {text:?}: {e}"))
}

fn object(text: &str) -> Result<JsonObject, String> {
    serde_json::from_str(text).map_err(|e| format!("bad JSON object {text:?}: {e}"))
}

fn parse_server(args: &[String]) -> Result<Command, String> {
    let mut versions = ProtocolVersion::KNOWN_VERSIONS.to_vec();
    let mut http = None;
    let mut stdio = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let mut value = || rest.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--stdio" => stdio = true,
            "--http" => http = Some(value()?.clone()),
            "--versions" => {
                versions = value()?.split(',').map(version).collect::<Result<_, _>>()?;
            }
            other => return Err(format!("unknown server option {other:?}")),
        }
    }
    let server = PeerServer { versions };
    match (stdio, http) {
        (true, None) => Ok(Command::ServeStdio(server)),
        (false, Some(addr)) => Ok(Command::ServeHttp(server, addr)),
        _ => Err("server needs exactly one of --stdio, --http ADDR".into()),
    }
}

fn parse_client(args: &[String]) -> Result<Command, String> {
    let mut plan = ClientPlan {
        era: Era::Stateful,
        version: ProtocolVersion::V_2025_11_25,
        ops: Vec::new(),
    };
    let mut stdio = false;
    let mut url = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let mut value = || rest.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--era" => {
                plan.era = match value()?.as_str() {
                    "stateful" | "legacy" => Era::Stateful,
                    "stateless" | "modern" => Era::Stateless,
                    "auto" => Era::Auto,
                    other => return Err(format!("unknown era {other:?}")),
                }
            }
            "--version" => plan.version = version(value()?)?,
            "--call" => plan.ops.push(Op::Call(value()?.clone(), object(value()?)?)),
            "--prompt" => plan
                .ops
                .push(Op::Prompt(value()?.clone(), object(value()?)?)),
            "--read" => plan.ops.push(Op::Read(value()?.clone())),
            "--stdio" => stdio = true,
            "--" => {
                let command: Vec<String> = rest.cloned().collect();
                if !stdio || command.is_empty() {
                    return Err("`--` must follow --stdio and precede the server command".into());
                }
                return Ok(Command::ClientStdio(plan, command));
            }
            other if !other.starts_with('-') && url.is_none() => url = Some(other.to_owned()),
            other => return Err(format!("unknown client option {other:?}")),
        }
    }
    match (stdio, url) {
        (false, Some(url)) => Ok(Command::ClientUrl(plan, url)),
        _ => Err("client needs --stdio -- CMD... or a URL".into()),
    }
}

fn parse(args: &[String]) -> Result<Command, String> {
    match args.split_first() {
        Some((role, rest)) if role == "server" => parse_server(rest),
        Some((role, rest)) if role == "client" => parse_client(rest),
        _ => Err("the first argument is `server` or `client`".into()),
    }
}

async fn execute(command: Command) -> Result<(), String> {
    match command {
        Command::ServeStdio(server) => server::serve_stdio(server).await,
        Command::ClientStdio(plan, cmd) => client::run_stdio(&plan, &cmd).await,
        #[cfg(feature = "peer-http")]
        Command::ServeHttp(server, addr) => server::serve_http(server, &addr).await,
        #[cfg(feature = "peer-http")]
        Command::ClientUrl(plan, url) => client::run_http(&plan, &url).await,
        #[cfg(not(feature = "peer-http"))]
        Command::ServeHttp(..) | Command::ClientUrl(..) => {
            Err("built without HTTP: rebuild with --features peer-http".into())
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match parse(&args) {
        Ok(command) => command,
        Err(message) => {
            eprintln!("rmcp_peer: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match runtime.block_on(execute(command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rmcp_peer: {message}");
            ExitCode::FAILURE
        }
    }
}
