//! Where a session's server is and how a session reaches it. Each transport connects one
//! client, runs the handshake, hands the initialized [`ClientHandle`] to the load, then closes
//! and reports the session's correlation counters. Two targets: a command run once per session
//! over stdio, and a Streamable HTTP URL (one MCP session per bench session, each with its own
//! keep-alive connection pool, see [`super::url`]).

use std::ffi::OsString;
use std::future::Future;
use std::time::Duration;

use mcp_sansio::app::client::{Client, ClientBuilder, ClientError, ClientHandle};
use mcp_sansio::config::Config;
use mcp_sansio::model::Implementation;
use mcp_sansio::session::Stats;
use mcp_sansio_stdio::{ClientRunReport, ShutdownStage};

use super::cli::Settings;
use super::load::{Delivery, ServerGone};
use super::url::run_url;
use crate::args::StderrArg;
use crate::client_trace::{TraceArgs, TraceFactory};
use mcp_sansio_http::HttpTrace;

/// Handshakes in flight at most over the whole run: ten thousand sessions connecting at
/// once overflow the server's accept queue (SYN retries back off for seconds) and time out.
const MAX_HANDSHAKES: usize = 128;

/// Admits [`MAX_HANDSHAKES`] session handshakes at a time.
static HANDSHAKES: smol::lock::Semaphore = smol::lock::Semaphore::new(MAX_HANDSHAKES);

/// Runs the MCP handshake on `handle` once a handshake slot is free.
pub(super) async fn initialize(
    handle: &ClientHandle,
) -> Result<mcp_sansio::model::InitializeResult, ClientError> {
    let _slot = HANDSHAKES.acquire().await;
    handle.initialize().await
}

/// How long to wait for the session's counters once the load is over.
const STATS_WAIT: Duration = Duration::from_secs(2);

/// The server under load.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    /// A command started once per session, spoken to over its stdin/stdout.
    Stdio {
        command: Vec<OsString>,
        stderr: StderrArg,
        /// Each session's trace, when asked for.
        trace: Option<TraceFactory>,
    },
    /// Streamable HTTP endpoints; each session is one MCP session on one of them, spread
    /// round-robin.
    Url {
        urls: Vec<String>,
        bearer_token: Option<String>,
        /// Each session's trace, when asked for.
        trace: Option<TraceFactory>,
    },
}

impl Target {
    /// Traces every session as `args` ask (one text output; an OpenTelemetry sink per session).
    pub(crate) fn trace(&mut self, args: &TraceArgs) -> std::io::Result<()> {
        match self {
            Target::Stdio { trace, .. } => *trace = args.factory("stdio")?,
            Target::Url { trace, .. } => *trace = args.factory("http")?,
        }
        Ok(())
    }

    /// A short description for the report.
    pub(crate) fn describe(&self) -> (&'static str, String) {
        match self {
            Target::Stdio { command, .. } => (
                "stdio",
                command
                    .iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Target::Url { urls, .. } => ("http", urls.join(" ")),
        }
    }

    /// What a failed call says about the transport: for a URL, the transport's own errors
    /// for a request that got no HTTP response (its connection broke) or could not reach the
    /// server at all (no connection, the session lost for good). A child process that exits
    /// closes the session, which the checks already count as `closed`.
    pub(crate) fn server_gone(&self) -> ServerGone {
        match self {
            Target::Stdio { .. } => |_| Delivery::Answered,
            Target::Url { .. } => super::url::delivery,
        }
    }
}

/// Who answered the handshake.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ServerIdentity {
    /// `serverInfo.name`.
    pub(crate) name: String,
    /// `serverInfo.version`.
    pub(crate) version: String,
    /// The protocol version the server chose.
    pub(crate) protocol_version: String,
}

/// A session that ran: the load's output and what the session counted.
pub(crate) struct Ran<T> {
    pub(crate) output: T,
    /// From the server's initialize result.
    pub(crate) server: ServerIdentity,
    /// The client session's drop counters (unknown, late, invalid responses); `None` if the
    /// session had already ended.
    pub(crate) stats: Option<Stats>,
    /// TCP connections the session opened (0 over stdio).
    pub(crate) connections_opened: u64,
}

/// Why a session did not run.
pub(crate) struct NotRun {
    /// One line: what failed.
    pub(crate) message: String,
    /// The server's stderr tail, when captured.
    pub(crate) stderr_tail: Option<String>,
    /// This session was fine but stopped because another one failed.
    pub(crate) stopped_by_another: bool,
}

impl NotRun {
    /// A session whose server or connection could not be started at all.
    pub(crate) fn cannot_start(message: String) -> NotRun {
        NotRun {
            message,
            stderr_tail: None,
            stopped_by_another: false,
        }
    }
}

/// The URL session number `session` uses: the URLs in turn.
pub(crate) fn url_for(urls: &[String], session: usize) -> &str {
    &urls[session % urls.len()]
}

/// The URLs session number `session` sends requests to after its own, in turn, when it
/// rotates over `over` of them (1: none, it keeps to its own).
pub(crate) fn rotation_for(urls: &[String], session: usize, over: usize) -> Vec<String> {
    (1..over.min(urls.len()))
        .map(|k| url_for(urls, session + k).to_owned())
        .collect()
}

/// Connects to `target` and initializes. `load` gets `Some(handle)` when the session is ready
/// and `None` when it is not (it must still run, to meet the other sessions at the start
/// line) and returns whether it ran.
pub(crate) fn run_session<T, F>(
    target: &Target,
    session: usize,
    settings: &Settings,
    load: impl FnOnce(Option<ClientHandle>) -> F,
) -> Result<Ran<T>, NotRun>
where
    F: Future<Output = T>,
{
    match target {
        Target::Stdio {
            command,
            stderr,
            trace,
        } => run_stdio(command, *stderr, trace.as_ref(), settings.timeout, load),
        Target::Url {
            urls,
            bearer_token,
            trace,
        } => {
            let rotation = rotation_for(urls, session, settings.rotate_over);
            let trace = trace.as_ref().map(|f| HttpTrace::new(f.sinks(false)));
            run_url(
                url_for(urls, session),
                rotation,
                bearer_token.clone(),
                trace,
                settings,
                load,
            )
        }
    }
}

/// The bench's client identity, with the run's timeout as the request timeout.
pub(super) fn client_builder(timeout: Duration) -> ClientBuilder {
    Client::builder(Implementation::new(
        "mcp-sansio-bench",
        env!("CARGO_PKG_VERSION"),
    ))
    .config(client_config(timeout))
}

fn client_config(timeout: Duration) -> Config {
    Config {
        request_timeout: timeout,
        max_request_timeout: timeout.max(Config::default().max_request_timeout),
        max_frame_len: crate::max_frame(),
        ..Config::default()
    }
}

fn run_stdio<T, F>(
    command: &[OsString],
    stderr: StderrArg,
    trace: Option<&TraceFactory>,
    timeout: Duration,
    load: impl FnOnce(Option<ClientHandle>) -> F,
) -> Result<Ran<T>, NotRun>
where
    F: Future<Output = T>,
{
    let builder = client_builder(timeout);
    let mode = stderr.mode();
    let program = command[0].to_string_lossy().into_owned();
    let client = match crate::client_cmd::connect_stdio(&command[0], &command[1..], mode, builder) {
        Ok(client) => client,
        Err(e) => {
            // Still meet the others at the start line, so they stop too.
            smol::block_on(load(None));
            return Err(NotRun::cannot_start(format!(
                "cannot start the server `{program}`: {e}"
            )));
        }
    };
    let client = match trace {
        Some(factory) => client.on_trace(factory.sinks(false)),
        None => client,
    };
    let handle = client.handle();
    let remote = client.remote();
    let app = async move {
        let initialized = initialize(&handle).await;
        let ready = initialized.is_ok().then(|| handle.clone());
        let output = load(ready).await;
        let stats = smol::future::or(
            async {
                remote
                    .call(|d, _| d.client().session().stats().clone())
                    .await
                    .ok()
            },
            async {
                smol::Timer::after(STATS_WAIT).await;
                None
            },
        )
        .await;
        (initialized, output, stats)
    };
    let ((initialized, output, stats), report) = client.block_on(app).map_err(|e| NotRun {
        message: format!("driving the server `{program}` failed: {e}"),
        stderr_tail: None,
        stopped_by_another: false,
    })?;
    let server = match initialized {
        Ok(result) => ServerIdentity {
            name: result.server_info.name,
            version: result.server_info.version,
            protocol_version: result.protocol_version,
        },
        Err(e) => return Err(init_failed(&program, &e, report)),
    };
    Ok(Ran {
        output,
        server,
        stats,
        connections_opened: 0,
    })
}

/// Why the handshake failed, with the exit status of a server that quit.
fn init_failed(program: &str, error: &ClientError, report: ClientRunReport) -> NotRun {
    let mut message = format!("the server `{program}` did not initialize: {error}");
    if let Some(done) = report
        .shutdown
        .filter(|s| s.stage == ShutdownStage::AlreadyExited)
    {
        message.push_str(&format!(" (it had exited: {})", done.status));
    }
    NotRun {
        message,
        stderr_tail: report.stderr_tail,
        stopped_by_another: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_spread_over_the_urls_round_robin() {
        let urls: Vec<String> = ["http://a/mcp", "http://b/mcp", "http://c/mcp"]
            .map(String::from)
            .to_vec();
        let picked: Vec<_> = (0..7).map(|i| url_for(&urls, i)).collect();
        assert_eq!(
            picked,
            [
                "http://a/mcp",
                "http://b/mcp",
                "http://c/mcp",
                "http://a/mcp",
                "http://b/mcp",
                "http://c/mcp",
                "http://a/mcp"
            ]
        );
        let one = vec![String::from("http://only/mcp")];
        assert!((0..5).all(|i| url_for(&one, i) == "http://only/mcp"));
    }

    #[test]
    fn a_rotating_session_sends_to_its_own_url_then_the_others_in_turn() {
        let urls: Vec<String> = ["http://a/mcp", "http://b/mcp", "http://c/mcp"]
            .map(String::from)
            .to_vec();
        assert_eq!(rotation_for(&urls, 1, 3), ["http://c/mcp", "http://a/mcp"]);
        assert_eq!(rotation_for(&urls, 3, 3), ["http://b/mcp", "http://c/mcp"]);
        assert!(
            rotation_for(&urls, 1, 1).is_empty(),
            "no --rotate: its own URL only"
        );
    }
}
