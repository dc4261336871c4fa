//! `mcp-sansio client ... --era auto|stateful|stateless`: the era probe and the 2026-07-28 path of
//! every operation. `auto` sends a stateless `server/discover` first (over stdio or HTTP): a
//! result means 2026-07-28 and the operation follows statelessly on the same connection; any
//! error, unreadable answer or timeout means a handshake-era server, and the operation runs
//! through the `initialize` clients (client_cmd.rs, client_http.rs). The decisions are the
//! core's (`app::client::stateless`); this file moves them onto the CLI's transports.

use std::ffi::OsString;
use std::time::Duration;

use mcp_sansio::app::client::stateless::{
    era_from_probe, Era, StatelessClient, TaskHandle, TaskOutcome,
};
use mcp_sansio::app::client::Client;
use mcp_sansio::app::client::ClientError;
use mcp_sansio::jsonrpc;
use mcp_sansio::model::Implementation;
use mcp_sansio_http::client::{block_on_stateless_http, HttpClientOptions, StatelessHttp};
use mcp_sansio_stdio::ChildProcess;
use serde_json::{Map, Value};

use crate::args::{ClientArgs, EraArg, TransportArg};
use crate::client_cmd::{conclude, Answer, Pages, MAX_PAGES};
use crate::client_trace::SharedSinks;
use crate::request::PlannedRequest;
use crate::stateless_stdio::StatelessStdio;
use crate::Failure;

/// The probe waits at most this long over HTTP (capped by `--timeout`): a handshake-era
/// server may ignore a request that comes before `initialize`.
pub(crate) const HTTP_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The same over stdio, longer: the wait includes the child's start, and interpreted servers
/// (Python, `npx`) can take several seconds to import before they read their first line; a
/// slow start taken for silence would start the server a second time for `initialize`.
pub(crate) const STDIO_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the server is.
pub(crate) enum Target<'a> {
    /// A child process (program and arguments).
    Stdio(&'a [OsString]),
    /// A Streamable HTTP endpoint.
    Url(&'a str),
}

/// What the probe (or `--era`) left to do.
enum Path {
    /// Done on the stateless path: the outcome.
    Stateless(Result<Answer, String>),
    /// Run the operation through the `initialize` client.
    Stateful,
    /// Run it through the `initialize` client on the child the probe spoke to.
    StatefulOn(ChildProcess),
}

/// Runs `planned` in the era `--era` asks for (probing with `auto`).
pub(crate) fn run(
    args: &ClientArgs,
    planned: PlannedRequest,
    target: Target,
) -> Result<(), Failure> {
    // The HTTP+SSE transport predates 2026-07-28.
    let sse = matches!(target, Target::Url(_)) && args.transport == TransportArg::Sse;
    if sse && args.era == EraArg::Stateless {
        return Err(Failure::Usage(
            "--transport sse speaks only the handshake era".into(),
        ));
    }
    // One trace for a stdio child: the probe and the conversation after it.
    let trace = match target {
        Target::Stdio(_) => args.trace.shared("stdio")?,
        Target::Url(_) => None,
    };
    if args.era == EraArg::Stateful || sse {
        return run_stateful(args, planned, target, trace);
    }
    let timeout = Duration::from_secs_f64(args.timeout);
    let builder = Client::builder(Implementation::new("mcp-sansio", env!("CARGO_PKG_VERSION")));
    let builder = crate::client_inputs::register(builder, &args.inputs)?;
    // Declares the tasks extension: a tools/call made a task is waited for (client_tasks.rs).
    let client = StatelessClient::new(&builder).with_tasks();
    let auto = args.era == EraArg::Auto;
    let verbose = args.verbose;
    let paginate = planned.paginated && !args.no_paginate;
    let path = match target {
        Target::Stdio(server) => smol::block_on(async {
            let mut wire = StatelessStdio::spawn(server, args.server_stderr, client, timeout)
                .map_err(|e| {
                    let program = server[0].to_string_lossy().into_owned();
                    Failure::Failed(format!("cannot start the server `{program}`: {e}"))
                })?
                .on_trace(trace.clone());
            let probe = auto.then_some(STDIO_PROBE_TIMEOUT);
            let path = drive(&mut wire, &planned, paginate, probe, timeout, verbose).await;
            let tail = wire.stderr_tail();
            if matches!(path, Path::Stateful) {
                // The refused probe's server gets the handshake on the same pipes (no second
                // start) when nothing of the probe can still arrive on them.
                return Ok(wire
                    .into_child()
                    .await
                    .map_or(Path::Stateful, Path::StatefulOn));
            }
            wire.shutdown().await;
            if matches!(path, Path::Stateless(Err(_))) && !tail.is_empty() {
                eprintln!("--- server stderr (last lines) ---\n{}", tail.trim_end());
            }
            Ok::<_, Failure>(path)
        })?,
        Target::Url(url) => {
            // OAuth on this path only with `--era stateless`: an `auto` probe answered 401 goes
            // down the `initialize` path, which authorizes, so a run performs one flow.
            let authorization = if args.era == EraArg::Stateless {
                crate::client_auth::authorization(&args.oauth, url, args.bearer_token.is_some())?
            } else {
                None
            };
            let options = HttpClientOptions {
                bearer_token: args.bearer_token.clone(),
                authorization,
                transport: crate::client_cmd::http_transport_config(),
                trace: args.trace.http(false)?,
                ..HttpClientOptions::default()
            };
            let probe = auto.then_some(HTTP_PROBE_TIMEOUT);
            block_on_stateless_http(url, &options, client, timeout, |mut wire| {
                let planned = &planned;
                async move { drive(&mut wire, planned, paginate, probe, timeout, verbose).await }
            })
            .map_err(|e| Failure::Usage(e.to_string()))?
        }
    };
    match path {
        Path::Stateless(outcome) => {
            drop(trace);
            conclude(outcome, args.pretty, |_| {})
        }
        Path::Stateful => run_stateful(args, planned, target, trace),
        Path::StatefulOn(child) => match target {
            Target::Stdio(server) => {
                crate::client_cmd::run_on(args, planned, server, Some(child), trace)
            }
            other => run_stateful(args, planned, other, trace),
        },
    }
}

fn run_stateful(
    args: &ClientArgs,
    planned: PlannedRequest,
    target: Target,
    trace: Option<SharedSinks>,
) -> Result<(), Failure> {
    match target {
        Target::Stdio(server) => crate::client_cmd::run(args, planned, server, trace),
        Target::Url(url) => crate::client_http::run(args, planned, url),
    }
}

/// The probe (when asked), then the operation on the stateless path.
async fn drive<T: Calls>(
    wire: &mut T,
    planned: &PlannedRequest,
    paginate: bool,
    probe: Option<Duration>,
    timeout: Duration,
    verbose: bool,
) -> Path {
    if let Some(probe_timeout) = probe {
        wire.set_timeout(timeout.min(probe_timeout));
        let outcome = wire.request("server/discover", None).await;
        wire.set_timeout(timeout);
        match era_from_probe(&outcome, wire.client().version()) {
            Era::Stateless(_) => {}
            Era::Stateful(why) => {
                if verbose {
                    eprintln!("era probe: {why}; falling back to initialize");
                }
                return Path::Stateful;
            }
        }
    }
    if verbose {
        eprintln!("detected era: {}", wire.client().version());
    }
    let outcome = perform(wire, planned, paginate).await;
    if verbose {
        wire.report_transport();
    }
    Path::Stateless(outcome)
}

/// What the stateless path needs of a wire (stdio or HTTP): calls run to their end, task
/// waits, a shorter timeout for the probe, and the `--verbose` transport line.
pub(crate) trait Calls {
    /// The client the wire's machine runs calls for.
    fn client(&self) -> &StatelessClient;

    /// Bounds each following attempt.
    fn set_timeout(&mut self, timeout: Duration);

    /// Runs `method` with `params` to its final result.
    async fn request(&mut self, method: &str, params: Option<Value>) -> Result<Value, ClientError>;

    /// Follows `task` to its end.
    async fn wait_task(&mut self, task: TaskHandle) -> Result<TaskOutcome, ClientError>;

    /// Prints `transport: <kind>` on stderr (HTTP only, as `client URL --verbose` does).
    fn report_transport(&self) {}
}

impl Calls for StatelessStdio {
    fn client(&self) -> &StatelessClient {
        self.machine().client()
    }

    fn set_timeout(&mut self, timeout: Duration) {
        StatelessStdio::set_timeout(self, timeout);
    }

    async fn request(&mut self, method: &str, params: Option<Value>) -> Result<Value, ClientError> {
        StatelessStdio::request(self, method, params).await
    }

    async fn wait_task(&mut self, task: TaskHandle) -> Result<TaskOutcome, ClientError> {
        StatelessStdio::wait_task(self, task).await
    }
}

impl Calls for StatelessHttp {
    fn client(&self) -> &StatelessClient {
        self.machine().client()
    }

    fn set_timeout(&mut self, timeout: Duration) {
        StatelessHttp::set_timeout(self, timeout);
    }

    async fn request(&mut self, method: &str, params: Option<Value>) -> Result<Value, ClientError> {
        StatelessHttp::request(self, method, params).await
    }

    async fn wait_task(&mut self, task: TaskHandle) -> Result<TaskOutcome, ClientError> {
        StatelessHttp::wait_task(self, task).await
    }

    fn report_transport(&self) {
        // 2026-07-28 is spoken only over Streamable HTTP POSTs.
        eprintln!("transport: streamable");
    }
}

/// One operation statelessly. `ping` (gone in 2026-07-28) becomes `server/discover` and
/// prints `{}` like a ping result; `set-level` has no 2026-07-28 form (the level travels in
/// each request's `_meta`) and fails.
async fn perform<T: Calls>(
    wire: &mut T,
    planned: &PlannedRequest,
    paginate: bool,
) -> Result<Answer, String> {
    let describe = |method: &str, e: ClientError| format!("{method}: {e}");
    let json = match planned.method {
        jsonrpc::PING => {
            wire.request("server/discover", None)
                .await
                .map_err(|e| describe("server/discover", e))?;
            Value::Object(Map::new())
        }
        jsonrpc::LOGGING_SET_LEVEL => {
            return Err(
                "logging/setLevel does not exist in 2026-07-28: the log level travels \
                        in each request's _meta"
                    .into(),
            )
        }
        method if paginate => collect_pages(wire, method, planned.params.clone()).await?,
        method => wire
            .request(method, planned.params.clone())
            .await
            .map_err(|e| describe(method, e))?,
    };
    let json = if planned.method == jsonrpc::TOOLS_CALL {
        // A call the server made a task: wait for it and print its result (client_tasks.rs).
        crate::client_tasks::finish_tool_call(wire, json).await?
    } else {
        json
    };
    let tool_error =
        planned.method == jsonrpc::TOOLS_CALL && json.get("isError") == Some(&Value::Bool(true));
    Ok(Answer::new(json, tool_error))
}

/// Follows `nextCursor` to the end: the first page with every item and no `nextCursor`.
pub(crate) async fn collect_pages<T: Calls>(
    wire: &mut T,
    method: &str,
    params: Option<Value>,
) -> Result<Value, String> {
    let mut pages = Pages::new(method, params);
    for _ in 0..MAX_PAGES {
        let page = wire
            .request(method, pages.next_params())
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        if let Some(all) = pages.absorb(page)? {
            return Ok(all);
        }
    }
    Err(pages.too_many())
}
