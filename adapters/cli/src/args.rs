//! The command-line grammar: every command, option, help text and example.
//!
//! The server command of `client` follows a literal `--` and is split off before parsing (see
//! `split_server_command` in `main.rs`), so its own flags never reach this parser.

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
use mcp_sansio::model::LoggingLevel;
use serde_json::{Map, Value};

const TOP_EXAMPLES: &str = "\
Examples:
  mcp-sansio serve --stdio
  mcp-sansio serve --http 127.0.0.1:8080
  mcp-sansio client --stdio tools list -- node server.js
  mcp-sansio client --stdio --pretty tools call add --args '{\"a\":1,\"b\":2}' -- ./my-server --verbose

Exit status: 0 success, 1 the operation failed, 2 bad usage.";

/// A sans-IO Model Context Protocol engine: serve, and talk to MCP servers.
#[derive(Debug, Parser)]
#[command(name = "mcp-sansio", version, after_help = TOP_EXAMPLES, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    /// The longest message accepted, in bytes, both ways (a stdio line, an HTTP body); longer
    /// ones are refused with an error naming the limit. Goes with `serve`, `client` and
    /// `bench` (before or after the command name).
    #[arg(long, global = true, value_name = "BYTES", default_value_t = mcp_sansio::config::DEFAULT_MAX_FRAME_LEN, value_parser = parse_max_frame)]
    pub(crate) max_frame: usize,
}

/// `--max-frame`: a positive number of bytes.
fn parse_max_frame(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("expected a positive number of bytes, got `{text}`")),
    }
}

/// The top-level commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run the reference MCP server.
    #[command(
        after_help = "Examples:\n  mcp-sansio serve --stdio\n  mcp-sansio serve --http 127.0.0.1:8080\n  \
        mcp-sansio serve --http            # a free loopback port\n\n\
        --stdio: protocol messages go to stdout only; logs go to stderr. The server exits when stdin \
        ends.\n--http: serves Streamable HTTP at http://ADDR/mcp and the HTTP+SSE transport \
        (2024-11-05) at http://ADDR/sse + /messages; prints `listening on URL` and `HTTP+SSE on \
        URL` on stderr once bound; Host/Origin must be localhost, 127.0.0.1 or [::1]. It stops \
        gracefully on SIGINT or SIGTERM."
    )]
    Serve(ServeArgs),
    /// Run one request against an MCP server: a child process on stdio, or an HTTP URL.
    #[command(
        override_usage = "mcp-sansio client --stdio [OPTIONS] <COMMAND> [ARGS] -- <SERVER_CMD> [SERVER_ARGS]...\n       mcp-sansio client <URL> [OPTIONS] <COMMAND> [ARGS]",
        after_help = CLIENT_EXAMPLES
    )]
    Client(Box<ClientArgs>),
    /// Run one client scenario of the official conformance suite (named by the environment
    /// variable MCP_CONFORMANCE_SCENARIO) against the suite's mock server at URL.
    #[command(
        after_help = "Example:\n  conformance client --command 'mcp-sansio conformance-client' --scenario initialize\n\n\
        Scenarios: initialize, tools_call, elicitation-sep1034-client-defaults, sse-retry; with \
        MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28 (stateless): tools_call, request-metadata, \
        sep-2322-client-request-state, http-standard-headers, http-custom-headers, \
        http-invalid-tool-headers, json-schema-ref-no-deref."
    )]
    ConformanceClient(ConformanceClientArgs),
    /// Put load on an MCP server: throughput, latency percentiles, errors.
    #[command(
        override_usage = "mcp-sansio bench --stdio [OPTIONS] -- <SERVER_CMD> [SERVER_ARGS]...\n       mcp-sansio bench <URL> [OPTIONS]",
        after_help = crate::bench::BENCH_HELP
    )]
    Bench(crate::bench::BenchArgs),
    /// Inspect an MCP server from a local web page: its tools, resources and prompts, and
    /// every frame, live.
    #[command(
        override_usage = "mcp-sansio inspect --stdio [OPTIONS] -- <SERVER_CMD> [SERVER_ARGS]...\n       mcp-sansio inspect <URL> [OPTIONS]",
        after_help = "Examples:\n  mcp-sansio inspect --stdio -- mcp-sansio serve --stdio\n  \
        mcp-sansio inspect http://127.0.0.1:8080/mcp\n\n\
        Prints the page's URL (http://127.0.0.1:PORT/t/TOKEN/) on stdout and opens nothing. \
        Only requests naming the one-time token, sent to this address from the page itself, \
        are served (docs/inspect.md)."
    )]
    Inspect(Box<crate::inspect::args::InspectArgs>),
}

/// Options of `conformance-client`.
#[derive(Debug, Args)]
pub(crate) struct ConformanceClientArgs {
    /// The mock server's URL (the suite appends it).
    #[arg(value_name = "URL")]
    pub(crate) url: String,
}

const CLIENT_EXAMPLES: &str = "\
The server command comes last, after a literal `--`; everything after it is passed to the
server untouched. Results are printed to stdout as compact JSON (one line); --pretty indents them.
List operations follow nextCursor to the end and print every item in one result (--no-paginate:
the first page only). Server log messages go to stderr.

The era is probed (--era auto): a stateless 2026-07-28 `server/discover` first, and on any
error or no answer within 3 s (10 s over stdio, which includes the server's start) the `initialize` handshake; --era stateful|stateless skips the probe.
--verbose prints `detected era: <version>` on stderr.

Exit status: 0 success; 1 failure: the server could not be started or closed early, a JSON-RPC
error (its code and message on stderr), no answer within --timeout, or a tool result with
\"isError\": true (the result is still printed on stdout); 2 bad usage.

Examples:
  mcp-sansio client --stdio ping -- ./my-server
  mcp-sansio client --stdio tools list -- node server.js
  mcp-sansio client --stdio tools call echo --args '{\"text\":\"hi\"}' -- python -m my_server
  mcp-sansio client --stdio resources read file:///tmp/notes.txt -- ./my-server
  mcp-sansio client --stdio prompts get greet --args '{\"name\":\"Ada\"}' -- ./my-server
  mcp-sansio client --stdio complete prompt greet --arg name --value A -- ./my-server
  mcp-sansio client --stdio set-level debug -- ./my-server
  mcp-sansio client http://127.0.0.1:3000/mcp tools list
  mcp-sansio client http://127.0.0.1:3000/mcp --era stateless --verbose tools list
  mcp-sansio client http://127.0.0.1:3000/sse --verbose ping     # finds the HTTP+SSE transport
  mcp-sansio client http://127.0.0.1:3000/sse --transport sse tools list
  mcp-sansio client http://127.0.0.1:3000/mcp --bearer-token T tools call echo --args '{\"text\":\"hi\"}'
  mcp-sansio client http://127.0.0.1:3000/mcp --client-id app --client-secret S --client-credentials tools list

OAuth (HTTP): when the server answers 401 (or 403 insufficient_scope) the client discovers the
authorization server, registers (pre-registered --client-id, a --client-metadata-url, or
dynamic registration), obtains a token and retries. Without a browser the authorization URL
is fetched without following its redirect and the code is read from `Location` (servers that
redirect at once). Environment fallbacks: MCP_CLIENT_ID, MCP_CLIENT_SECRET, MCP_REDIRECT_URI,
MCP_OAUTH_SCOPE, MCP_CLIENT_METADATA_URL, MCP_CLIENT_KEY_FILE. --no-oauth turns it off.";

/// Options of `serve`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("mode").args(["stdio", "http"]).required(true)))]
pub(crate) struct ServeArgs {
    /// Serve on this process's stdin/stdout.
    #[arg(long)]
    pub(crate) stdio: bool,
    /// Serve Streamable HTTP at http://ADDR/mcp and HTTP+SSE at http://ADDR/sse
    /// (default 127.0.0.1:0: a free loopback port).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0")]
    pub(crate) http: Option<String>,
    /// OAuth protection of the HTTP server (see `serve_auth.rs`).
    #[command(flatten)]
    pub(crate) auth: crate::serve_auth::ServeAuthArgs,
    /// The HTTP server's connection cap and timeouts (see `serve_limits.rs`).
    #[command(flatten)]
    pub(crate) limits: crate::serve_limits::ServeLimitArgs,
    /// Where the protocol trace goes.
    #[command(flatten)]
    pub(crate) trace: crate::client_trace::TraceArgs,
    /// Where the HTTP server keeps its sessions (see `serve_store.rs`).
    #[command(flatten)]
    pub(crate) store: crate::serve_store::ServeStoreArgs,
}

/// Options of `client`.
#[derive(Debug, Args)]
pub(crate) struct ClientArgs {
    /// Talk to the server over its stdin/stdout (the server command follows `--`).
    #[arg(long, conflicts_with = "url", required_unless_present = "url")]
    pub(crate) stdio: bool,
    /// Talk to the HTTP server at this URL instead (http://host:port/path): Streamable HTTP or
    /// the HTTP+SSE transport, detected (see --transport).
    #[arg(value_name = "URL")]
    pub(crate) url: Option<String>,
    /// HTTP only: send `Authorization: Bearer <TOKEN>` with every request.
    #[arg(long, value_name = "TOKEN", requires = "url")]
    pub(crate) bearer_token: Option<String>,
    /// HTTP only: OAuth settings, used when the server challenges (401 / 403).
    #[command(flatten)]
    pub(crate) oauth: crate::client_auth::OAuthArgs,
    /// HTTP only: the transport to speak. auto: POST initialize (Streamable HTTP), and on
    /// 400, 404 or 405 fall back to the HTTP+SSE transport (GET, `endpoint` event).
    #[arg(long, value_enum, value_name = "KIND", default_value_t = TransportArg::Auto)]
    pub(crate) transport: TransportArg,
    /// The protocol era. auto: probe with a stateless `server/discover` (2026-07-28) and fall
    /// back to `initialize` on any error or timeout; stateful: `initialize` only; stateless:
    /// 2026-07-28 requests only.
    #[arg(long, value_enum, value_name = "ERA", default_value_t = EraArg::Auto)]
    pub(crate) era: EraArg,
    /// Report on stderr the era found (`detected era: <version>`), the transport spoken and
    /// the HTTP+SSE message URL.
    #[arg(long, short = 'v')]
    pub(crate) verbose: bool,
    /// Print results indented for people instead of one compact JSON line.
    #[arg(long)]
    pub(crate) pretty: bool,
    /// Give up on the request after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub(crate) timeout: f64,
    /// List operations: print only the first page (with its nextCursor) instead of following
    /// nextCursor to the end.
    #[arg(long)]
    pub(crate) no_paginate: bool,
    /// What to do with the server's stderr (its logs).
    #[arg(long, value_enum, default_value_t = StderrArg::Inherit)]
    pub(crate) server_stderr: StderrArg,
    /// How the server's input requests are answered.
    #[command(flatten)]
    pub(crate) inputs: crate::client_inputs::InputArgs,
    /// Where the protocol trace goes.
    #[command(flatten)]
    pub(crate) trace: crate::client_trace::TraceArgs,
    #[command(subcommand)]
    pub(crate) op: ClientOp,
}

/// The HTTP transport of `client URL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TransportArg {
    /// Detect: Streamable HTTP first, HTTP+SSE on 400/404/405.
    Auto,
    /// Streamable HTTP (2025-03-26 and later); the URL is the MCP endpoint.
    Streamable,
    /// HTTP+SSE (2024-11-05); the URL is the SSE endpoint.
    Sse,
}

/// The protocol era of `client`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum EraArg {
    /// Probe: 2026-07-28 if `server/discover` answers, otherwise `initialize`.
    Auto,
    /// The `initialize` handshake (2025-11-25 and earlier).
    #[value(alias = "legacy")]
    Stateful,
    /// Stateless 2026-07-28.
    #[value(alias = "modern")]
    Stateless,
}

/// Where the server's stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum StderrArg {
    /// Shown on our stderr.
    Inherit,
    /// Kept, and shown only if the request fails.
    Capture,
    /// Discarded.
    Null,
}

/// One operation against the server.
#[derive(Debug, Subcommand)]
pub(crate) enum ClientOp {
    /// Tools: list them or call one.
    #[command(subcommand)]
    Tools(ToolsOp),
    /// Resources: list them, read one, list templates.
    #[command(subcommand)]
    Resources(ResourcesOp),
    /// Prompts: list them or get one.
    #[command(subcommand)]
    Prompts(PromptsOp),
    /// Ask for completions of a prompt or resource-template argument.
    #[command(subcommand)]
    Complete(CompleteOp),
    /// Check that the server answers.
    Ping,
    /// Set the server's log level (logging/setLevel).
    #[command(
        after_help = "Example:\n  mcp-sansio client --stdio set-level warning -- ./my-server"
    )]
    SetLevel {
        /// The lowest level the server should send.
        #[arg(value_parser = log_level())]
        level: LoggingLevel,
    },
}

/// `tools ...`
#[derive(Debug, Subcommand)]
pub(crate) enum ToolsOp {
    /// List the server's tools (every page).
    List,
    /// Call a tool.
    #[command(
        after_help = "Example:\n  mcp-sansio client --stdio tools call add --args '{\"a\":1,\"b\":2}' -- ./my-server"
    )]
    Call {
        /// The tool's name.
        name: String,
        /// The tool's arguments, a JSON object.
        #[arg(long, value_name = "JSON", value_parser = parse_object)]
        args: Option<Map<String, Value>>,
    },
}

/// `resources ...`
#[derive(Debug, Subcommand)]
pub(crate) enum ResourcesOp {
    /// List the server's resources (every page).
    List,
    /// Read one resource.
    #[command(
        after_help = "Example:\n  mcp-sansio client --stdio resources read file:///tmp/a.txt -- ./my-server"
    )]
    Read {
        /// The resource's URI.
        uri: String,
    },
    /// List the server's resource templates (every page).
    Templates,
}

/// `prompts ...`
#[derive(Debug, Subcommand)]
pub(crate) enum PromptsOp {
    /// List the server's prompts (every page).
    List,
    /// Get a prompt, filled with arguments.
    #[command(
        after_help = "Example:\n  mcp-sansio client --stdio prompts get greet --args '{\"name\":\"Ada\"}' -- ./my-server"
    )]
    Get {
        /// The prompt's name.
        name: String,
        /// The prompt's arguments, a JSON object of strings.
        #[arg(long, value_name = "JSON", value_parser = parse_string_object)]
        args: Option<Map<String, Value>>,
    },
}

/// `complete ...`
#[derive(Debug, Subcommand)]
pub(crate) enum CompleteOp {
    /// Complete an argument of a prompt.
    #[command(
        after_help = "Example:\n  mcp-sansio client --stdio complete prompt greet --arg name --value A -- ./my-server"
    )]
    Prompt {
        /// The prompt's name.
        name: String,
        #[command(flatten)]
        argument: CompleteArgument,
    },
    /// Complete a variable of a resource template.
    #[command(
        after_help = "Example:\n  mcp-sansio client --stdio complete resource 'file:///{path}' --arg path --value /tm -- ./my-server"
    )]
    Resource {
        /// The resource template's URI.
        uri_template: String,
        #[command(flatten)]
        argument: CompleteArgument,
    },
}

/// The argument being completed.
#[derive(Debug, Args)]
pub(crate) struct CompleteArgument {
    /// The argument's name.
    #[arg(long = "arg", value_name = "NAME")]
    pub(crate) argument_name: String,
    /// What has been typed so far.
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub(crate) value: String,
    /// Values of the other arguments already resolved, a JSON object of strings.
    #[arg(long, value_name = "JSON", value_parser = parse_string_object)]
    pub(crate) context: Option<Map<String, Value>>,
}

/// The MCP logging levels by their wire names.
fn log_level() -> impl TypedValueParser<Value = LoggingLevel> {
    clap::builder::PossibleValuesParser::new(LoggingLevel::ALL.map(LoggingLevel::as_str))
        .try_map(|name| LoggingLevel::parse(&name).ok_or("not a logging level"))
}

fn parse_object(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!("expected a JSON object, got {}", kind(&other))),
        Err(error) => Err(format!("not valid JSON: {error}")),
    }
}

fn parse_string_object(text: &str) -> Result<Map<String, Value>, String> {
    let map = parse_object(text)?;
    match map.iter().find(|(_, v)| !v.is_string()) {
        Some((key, value)) => Err(format!(
            "argument values must be strings; \"{key}\" is {}",
            kind(value)
        )),
        None => Ok(map),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl StderrArg {
    /// The child's stderr mode this option asks for.
    pub(crate) fn mode(self) -> mcp_sansio_stdio::StderrMode {
        match self {
            StderrArg::Inherit => mcp_sansio_stdio::StderrMode::Inherit,
            StderrArg::Capture => mcp_sansio_stdio::StderrMode::Capture,
            StderrArg::Null => mcp_sansio_stdio::StderrMode::Null,
        }
    }
}

impl TransportArg {
    /// The HTTP client's transport choice this option asks for.
    pub(crate) fn choice(self) -> mcp_sansio_http::client::TransportChoice {
        use mcp_sansio_http::client::TransportChoice;
        match self {
            TransportArg::Auto => TransportChoice::Auto,
            TransportArg::Streamable => TransportChoice::Streamable,
            TransportArg::Sse => TransportChoice::Sse,
        }
    }
}
