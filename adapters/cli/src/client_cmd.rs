//! `mcp-sansio client --stdio`: spawns the server, runs the handshake and one planned request
//! (following `nextCursor` for lists), prints the result, and shuts the server down. The
//! request logic (`perform`, `conclude`) is shared with `client URL` (client_http.rs).

use std::ffi::OsString;
use std::time::Duration;

use mcp_sansio::app::client::{CallOptions, Client, ClientError, ClientEvent, ClientHandle};
use mcp_sansio::config::Config;
use mcp_sansio::jsonrpc::{RawJson, RequestId};
use mcp_sansio::model::Implementation;
use mcp_sansio_stdio::{ChildProcess, ShutdownStage, StderrMode, StdioClient};
use serde_json::{Map, Value};

use crate::args::ClientArgs;
use crate::client_trace::SharedSinks;
use crate::request::PlannedRequest;
use crate::Failure;

/// Pages followed at most when collecting a list (a server that never stops handing out
/// cursors must not keep us forever).
pub(crate) const MAX_PAGES: usize = 10_000;

/// Spawns `program args` as a stdio server with a client on the poll driver (the loop and
/// the client code share this thread), or on the smol driver under
/// `MCP_SANSIO_STDIO_DRIVER=smol`.
pub(crate) fn connect_stdio(
    program: &std::ffi::OsStr,
    args: &[std::ffi::OsString],
    stderr: StderrMode,
    builder: mcp_sansio::app::client::ClientBuilder,
) -> std::io::Result<StdioClient> {
    let child = mcp_sansio_stdio::connect_child(program, args, stderr)?;
    client_on(child, builder)
}

/// The `initialize` client on an already started child, on the poll driver (or smol when
/// `MCP_SANSIO_STDIO_DRIVER=smol`).
pub(crate) fn client_on(
    child: ChildProcess,
    builder: mcp_sansio::app::client::ClientBuilder,
) -> std::io::Result<StdioClient> {
    let options = mcp_sansio_stdio::DriveOptions {
        max_line_len: crate::max_frame(),
        ..mcp_sansio_stdio::DriveOptions::default()
    };
    #[cfg(unix)]
    if !crate::stdio_on_smol() {
        return StdioClient::new_poll(child, builder, options);
    }
    Ok(StdioClient::new(child, builder, options))
}

/// What the operation produced: the JSON to print, and whether it counts as a failure (a tool
/// result with `isError: true`).
pub(crate) struct Answer {
    json: Value,
    tool_error: bool,
}

impl Answer {
    /// The JSON to print, and whether it is a tool error.
    pub(crate) fn new(json: Value, tool_error: bool) -> Self {
        Answer { json, tool_error }
    }
}

/// The client configuration of both transports: `timeout` bounds every request.
pub(crate) fn client_config(timeout: Duration) -> Config {
    Config {
        request_timeout: timeout,
        max_request_timeout: timeout.max(Config::default().max_request_timeout),
        max_frame_len: crate::max_frame(),
        ..Config::default()
    }
}

/// The HTTP client transport's limits: `--max-frame` bounds a response body and an SSE event.
pub(crate) fn http_transport_config() -> mcp_sansio::http::client::HttpClientConfig {
    mcp_sansio::http::client::HttpClientConfig {
        max_body: crate::max_frame(),
        max_event_size: crate::max_frame(),
        ..Default::default()
    }
}

/// Runs the handshake and `planned` through `handle` (any transport): the answer, or a
/// one-line account of what failed.
pub(crate) async fn perform(
    handle: ClientHandle,
    planned: PlannedRequest,
    paginate: bool,
    timeout: Duration,
    verbose: bool,
) -> Result<Answer, String> {
    let init = handle
        .initialize()
        .await
        .map_err(|e| describe("initialize", &e))?;
    if verbose {
        eprintln!("detected era: {}", init.protocol_version);
    }
    let options = || CallOptions {
        timeout: Some(timeout),
        ..CallOptions::default()
    };
    let call = |mut params: Option<Value>| {
        crate::otel_cli::inject(planned.method, &mut params);
        let params = params.map(|p| RawJson::from_serialize(&p).expect("JSON values encode"));
        handle.request_raw(planned.method, params, options())
    };
    let json = if paginate {
        collect_pages(planned.method, planned.params.clone(), call).await?
    } else {
        let raw = call(planned.params.clone())
            .await
            .map_err(|e| describe(planned.method, &e))?;
        raw.to_value()
            .map_err(|e| format!("{}: unreadable result: {e}", planned.method))?
    };
    let tool_error = planned.method == mcp_sansio::jsonrpc::TOOLS_CALL
        && json.get("isError") == Some(&Value::Bool(true));
    Ok(Answer { json, tool_error })
}

/// Prints the answer; a failure or a tool error becomes the exit status (after `on_failure`,
/// which shows what the transport kept, such as the server's stderr).
pub(crate) fn conclude(
    outcome: Result<Answer, String>,
    pretty: bool,
    on_failure: impl FnOnce(&mut String),
) -> Result<(), Failure> {
    match outcome {
        Ok(answer) => {
            print_json(&answer.json, pretty);
            if answer.tool_error {
                on_failure(&mut String::new());
                return Err(Failure::Failed(
                    "the tool reported an error (isError: true); its result is on stdout".into(),
                ));
            }
            Ok(())
        }
        Err(mut message) => {
            on_failure(&mut message);
            Err(Failure::Failed(message))
        }
    }
}

/// Runs `planned` against `server` and prints the answer. See the `client` help for the exit
/// status rules.
pub(crate) fn run(
    args: &ClientArgs,
    planned: PlannedRequest,
    server: &[OsString],
    trace: Option<SharedSinks>,
) -> Result<(), Failure> {
    run_on(args, planned, server, None, trace)
}

/// [`run`] on `started` when given (a child the era probe already spoke to), else on a newly
/// started `server`.
pub(crate) fn run_on(
    args: &ClientArgs,
    planned: PlannedRequest,
    server: &[OsString],
    started: Option<ChildProcess>,
    trace: Option<SharedSinks>,
) -> Result<(), Failure> {
    let timeout = Duration::from_secs_f64(args.timeout);
    let builder = Client::builder(Implementation::new("mcp-sansio", env!("CARGO_PKG_VERSION")))
        .config(client_config(timeout));
    let builder = crate::client_sampling::register(builder, &args.inputs)?;
    let stderr_mode = args.server_stderr.mode();
    let program = server[0].to_string_lossy().into_owned();
    let client = match started {
        Some(child) => client_on(child, builder),
        None => connect_stdio(&server[0], &server[1..], stderr_mode, builder),
    };
    let client = client
        .map_err(|e| Failure::Failed(format!("cannot start the server `{program}`: {e}")))?
        .on_event(report_event);
    let client = match trace {
        Some(sink) => client.on_trace(sink),
        None => client,
    };
    let handle = client.handle();
    let paginate = planned.paginated && !args.no_paginate;
    let (outcome, report) = client
        .block_on(perform(handle, planned, paginate, timeout, args.verbose))
        .map_err(|e| Failure::Failed(format!("driving the server failed: {e}")))?;
    conclude(outcome, args.pretty, |message| {
        if let Some(tail) = report.stderr_tail.as_deref().filter(|t| !t.is_empty()) {
            eprintln!("--- server stderr (last lines) ---\n{}", tail.trim_end());
        }
        if message.is_empty() {
            return;
        }
        // A server that dies at once closes its stdout before it can be reaped, so its
        // status may only be seen right after stdin closes: report a failure status then too.
        match report.shutdown {
            Some(done) if done.stage == ShutdownStage::AlreadyExited => {
                message.push_str(&format!(" (the server had exited: {})", done.status));
            }
            Some(done) if done.stage == ShutdownStage::StdinClosed && !done.status.success() => {
                message.push_str(&format!(" (the server exited: {})", done.status));
            }
            _ => {}
        }
    })
}

/// Follows `nextCursor` to the end and returns the first page with the list field holding
/// every item and no `nextCursor`.
pub(crate) async fn collect_pages<F, C>(
    method: &str,
    params: Option<Value>,
    call: F,
) -> Result<Value, String>
where
    F: Fn(Option<Value>) -> C,
    C: std::future::Future<Output = Result<RawJson, ClientError>>,
{
    let mut pages = Pages::new(method, params);
    for _ in 0..MAX_PAGES {
        let raw = call(pages.next_params())
            .await
            .map_err(|e| describe(method, &e))?;
        let page = raw
            .to_value()
            .map_err(|_| format!("{method}: the result is not a JSON object"))?;
        if let Some(all) = pages.absorb(page)? {
            return Ok(all);
        }
    }
    Err(pages.too_many())
}

/// The pages of one list request merged as they come (both eras' clients share it).
pub(crate) struct Pages<'a> {
    method: &'a str,
    field: &'static str,
    params: Option<Value>,
    cursor: Option<Value>,
    merged: Option<Map<String, Value>>,
}

impl<'a> Pages<'a> {
    /// Pages of `method`, each requested with `params` (plus the cursor).
    pub(crate) fn new(method: &'a str, params: Option<Value>) -> Self {
        Pages {
            method,
            field: list_field(method),
            params,
            cursor: None,
            merged: None,
        }
    }

    /// The params of the next page request: the caller's, with the cursor when there is one.
    pub(crate) fn next_params(&mut self) -> Option<Value> {
        let mut page_params = match self.params.clone() {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        if let Some(c) = self.cursor.take() {
            page_params.insert("cursor".into(), c);
        }
        (!page_params.is_empty()).then_some(Value::Object(page_params))
    }

    /// Adds one page; `Some(all)` when it was the last (the first page holding every item,
    /// no `nextCursor`).
    pub(crate) fn absorb(&mut self, page: Value) -> Result<Option<Value>, String> {
        let (method, field) = (self.method, self.field);
        let Value::Object(mut page) = page else {
            return Err(format!("{method}: the result is not a JSON object"));
        };
        let next = page.remove("nextCursor").filter(|c| !c.is_null());
        let items = match page.remove(field) {
            Some(Value::Array(items)) => items,
            _ => return Err(format!("{method}: the result has no `{field}` array")),
        };
        let all = self.merged.get_or_insert_with(|| {
            page.insert(field.into(), Value::Array(Vec::new()));
            page
        });
        if let Some(Value::Array(list)) = all.get_mut(field) {
            list.extend(items);
        }
        match next {
            Some(next) => {
                self.cursor = Some(next);
                Ok(None)
            }
            None => Ok(Some(Value::Object(self.merged.take().unwrap_or_default()))),
        }
    }

    /// The error when the server never stops paging.
    pub(crate) fn too_many(&self) -> String {
        format!(
            "{}: the server kept returning nextCursor past {MAX_PAGES} pages",
            self.method
        )
    }
}

/// The array field of a list method's result.
pub(crate) fn list_field(method: &str) -> &'static str {
    match method {
        mcp_sansio::jsonrpc::RESOURCES_LIST => "resources",
        mcp_sansio::jsonrpc::RESOURCES_TEMPLATES_LIST => "resourceTemplates",
        mcp_sansio::jsonrpc::PROMPTS_LIST => "prompts",
        _ => "tools",
    }
}

/// A one-line account of a failed call: JSON-RPC errors show their code, message and data
/// (the error's own text).
pub(crate) fn describe(method: &str, error: &ClientError) -> String {
    match error {
        ClientError::TimedOut => format!("{method}: no answer within --timeout"),
        other => format!("{method}: {other}"),
    }
}

/// Server log messages and other notifications go to stderr; stdout is for the result only.
pub(crate) fn report_event(event: ClientEvent) {
    match event {
        ClientEvent::Log(log) => {
            let data = serde_json::to_string(&log.data).unwrap_or_default();
            let logger = log.logger.map(|l| format!(" {l}")).unwrap_or_default();
            eprintln!("server log [{:?}{logger}]: {data}", log.level);
        }
        ClientEvent::UnmatchedResponse {
            id,
            pending_other_type,
        } => eprintln!(
            "warning: {}",
            describe_unmatched(&id, pending_other_type.as_ref())
        ),
        ClientEvent::Closed { .. } | ClientEvent::Initialized { .. } => {}
        other => eprintln!("server notification: {other:?}"),
    }
}

/// The warning for a server answer that matched no request: `answer has id "1" (a string);
/// a request with id 1 (a number) is pending` when the other JSON type explains it.
fn describe_unmatched(id: &RequestId, other: Option<&RequestId>) -> String {
    let shown = format!("answer has id {} ({})", id_json(id), id_type(id));
    match other {
        Some(other) => format!(
            "{shown}; a request with id {} ({}) is pending: the server changed the id's type, \
             so the answer was dropped",
            id_json(other),
            id_type(other)
        ),
        None => format!("{shown}, which matches no request of ours; it was dropped"),
    }
}

fn id_json(id: &RequestId) -> String {
    let mut buf = Vec::new();
    id.write_json(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

fn id_type(id: &RequestId) -> &'static str {
    if id.is_string() {
        "a string"
    } else {
        "a number"
    }
}

fn print_json(value: &Value, pretty: bool) {
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    println!("{}", text.unwrap_or_default());
}
