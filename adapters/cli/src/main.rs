//! `mcp-sansio`: serve the reference MCP server on stdio, or start a server as a child and run
//! one request against it.
//!
//! Exit status: 0 success, 1 the operation failed, 2 bad usage. Results go to stdout (compact
//! JSON, `--pretty` for people), diagnostics to stderr.

mod args;
mod bench;
mod client_auth;
mod client_cmd;
mod client_http;
mod client_inputs;
mod client_sampling;
mod client_stateless;
mod client_tasks;
mod client_trace;
mod conformance_auth;
mod conformance_client;
mod conformance_stateless;
mod fd_limit;
mod fixture;
mod inspect;
mod otel_cli;
mod request;
mod serve_auth;
mod serve_http;
mod serve_limits;
mod serve_store;
mod stateless_stdio;

use std::ffi::OsString;
use std::process::ExitCode;

use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use mcp_sansio::config::Config;
use mcp_sansio_stdio::{DriveOptions, Driver, Finished, ServerDriven};

use args::{Cli, ClientArgs, Command};

/// Exit status for an operation that failed (usage errors exit with 2, through clap).
const EXIT_FAILED: u8 = 1;
/// Exit status for bad usage.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let (argv, server_command) = split_server_command(std::env::args_os().collect());
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    let _ = MAX_FRAME.set(cli.max_frame);
    let otel = match &cli.command {
        Command::Serve(args) => otel_cli::install(args.trace.otel, "mcp-sansio serve"),
        Command::Client(args) => otel_cli::install(args.trace.otel, "mcp-sansio client"),
        Command::Bench(args) => otel_cli::install(args.trace.otel, "mcp-sansio bench"),
        _ => Ok(None),
    };
    let _otel = match otel {
        Ok(installed) => installed,
        Err(failure) => return report(Err(failure)),
    };
    let outcome = match cli.command {
        Command::Serve(args) => match &args.http {
            Some(addr) => {
                serve_http::serve_http(addr, &args.auth, &args.limits, &args.trace, &args.store)
            }
            None if args.auth.auth_issuer.is_some() => {
                Err(Failure::Usage("--auth-* options need --http".into()))
            }
            None => serve(&args.trace),
        },
        Command::Client(client) => run_client(&client, server_command),
        Command::ConformanceClient(args) => conformance_client::run(&args.url),
        Command::Bench(bench) => bench::run(&bench, server_command),
        Command::Inspect(args) => inspect::run(&args, server_command),
    };
    report(outcome)
}

/// The exit status of `outcome`, with its message on stderr.
fn report(outcome: Result<(), Failure>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("error: {message}\n\nFor more information, try '--help'.");
            ExitCode::from(EXIT_USAGE)
        }
        Err(Failure::Failed(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// `--max-frame`, set once from the command line.
static MAX_FRAME: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// The longest message accepted both ways (`--max-frame`; default 16 MiB): the session's
/// `max_frame_len`, the stdio line limit and the HTTP body limits.
pub(crate) fn max_frame() -> usize {
    MAX_FRAME
        .get()
        .copied()
        .unwrap_or(mcp_sansio::config::DEFAULT_MAX_FRAME_LEN)
}

/// Why a command did not succeed.
enum Failure {
    Usage(String),
    Failed(String),
}

/// Splits argv at the first literal `--`: what follows is the server command of `client`,
/// passed on untouched (so its flags never meet our parser).
fn split_server_command(mut argv: Vec<OsString>) -> (Vec<OsString>, Option<Vec<OsString>>) {
    match argv.iter().position(|arg| arg == "--") {
        Some(at) => {
            let server = argv.split_off(at + 1);
            argv.pop();
            (argv, Some(server))
        }
        None => (argv, None),
    }
}

/// Serves the reference fixture on stdin/stdout until stdin ends and in-flight requests are
/// answered. Protocol on stdout only; diagnostics on stderr.
fn serve(trace: &client_trace::TraceArgs) -> Result<(), Failure> {
    let sink = trace
        .sink("stdio", true)
        .map_err(|e| Failure::Failed(format!("cannot open the trace file: {e}")))?;
    let mut config = Config {
        max_frame_len: max_frame(),
        ..Config::default()
    };
    fixture::page_size_from_env(&mut config);
    let sleep: fixture::Sleep = Arc::new(|duration| {
        Box::pin(async move {
            smol::Timer::after(duration).await;
        })
    });
    let options = DriveOptions {
        max_line_len: config.max_frame_len,
        ..DriveOptions::default()
    };
    let factory = fixture::fixture_factory(config, sleep.clone());
    let server = fixture::fixture_server(&factory, Instant::now());
    let extras = fixture::extras(server.handle(), sleep);
    let finished = serve_on_stdio(options, server, extras, sink)?;
    if let Some(error) = finished.input_error {
        eprintln!("mcp-sansio: reading stdin failed: {error}");
    }
    match finished.output_error {
        Some(error) => Err(Failure::Failed(format!("writing stdout failed: {error}"))),
        None => Ok(()),
    }
}

/// `MCP_SANSIO_STDIO_DRIVER=smol` puts every stdio loop of the CLI (`serve --stdio`, the
/// stdio client of `client` and `bench`) on the smol driver instead of the poll driver.
pub(crate) fn stdio_on_smol() -> bool {
    std::env::var("MCP_SANSIO_STDIO_DRIVER").as_deref() == Ok("smol")
}

/// Which stdio driver `serve --stdio` runs on: the poll driver (the default on Unix: no async
/// runtime in the loop, a `read` and a `write` per message), or the smol driver with
/// `MCP_SANSIO_STDIO_DRIVER=smol`. The fixture's extras run on the loop's executor either way
/// and stop with it (and by themselves once the session closed).
fn serve_on_stdio(
    options: DriveOptions,
    server: mcp_sansio::app::server::Server,
    extras: impl std::future::Future<Output = ()> + 'static,
    trace: Option<otel_cli::Sinks>,
) -> Result<Finished<ServerDriven>, Failure> {
    let traced = |driven: ServerDriven| match trace {
        Some(sink) => driven.on_trace(sink),
        None => driven,
    };
    let smol = stdio_on_smol();
    #[cfg(unix)]
    if !smol {
        let driver = mcp_sansio_stdio::PollDriver::new(options)
            .map_err(|error| Failure::Failed(format!("starting the stdio loop failed: {error}")))?;
        let extras = driver.handle().spawn(extras);
        let driven = traced(ServerDriven::for_poll(server, &driver));
        let finished = driver.serve_stdio(driven);
        drop(extras);
        return Ok(finished);
    }
    let _ = smol;
    let driver = Driver::new(options);
    let extras = driver.handle().spawn(extras);
    let driven = traced(ServerDriven::new(server, &driver));
    let finished = driver.serve_stdio(driven);
    drop(extras);
    Ok(finished)
}

fn run_client(client: &ClientArgs, server: Option<Vec<OsString>>) -> Result<(), Failure> {
    if !(client.timeout.is_finite() && client.timeout > 0.0) {
        return Err(Failure::Usage(format!(
            "--timeout must be a positive number of seconds, got {}",
            client.timeout
        )));
    }
    if let Some(url) = &client.url {
        if server.is_some() {
            return Err(Failure::Usage(
                "a server command after `--` only goes with --stdio".into(),
            ));
        }
        return client_stateless::run(
            client,
            request::plan(&client.op),
            client_stateless::Target::Url(url),
        );
    }
    let server = match server {
        Some(server) if !server.is_empty() => server,
        _ => {
            return Err(Failure::Usage(
                "missing the server command: put it last, after `--` \
                 (e.g. `mcp-sansio client --stdio ping -- ./my-server`)"
                    .into(),
            ))
        }
    };
    client_stateless::run(
        client,
        request::plan(&client.op),
        client_stateless::Target::Stdio(&server),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan_of(args: &[&str]) -> request::PlannedRequest {
        let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
        let (argv, _) = split_server_command(argv);
        let cli = Cli::try_parse_from(argv).unwrap();
        let Command::Client(client) = cli.command else {
            panic!("not a client command")
        };
        request::plan(&client.op)
    }

    #[test]
    fn the_grammar_passes_clap_consistency_checks() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn the_server_command_keeps_its_own_flags_and_dashes() {
        let argv = [
            "mcp-sansio",
            "client",
            "--stdio",
            "ping",
            "--",
            "srv",
            "--x",
            "--",
            "y",
        ];
        let (ours, server) = split_server_command(argv.iter().map(OsString::from).collect());
        assert_eq!(ours, ["mcp-sansio", "client", "--stdio", "ping"]);
        assert_eq!(server.unwrap(), ["srv", "--x", "--", "y"]);
    }

    #[test]
    fn each_operation_maps_to_its_method_and_params() {
        let base = ["mcp-sansio", "client", "--stdio"];
        let with = |rest: &[&str]| {
            let mut v = base.to_vec();
            v.extend_from_slice(rest);
            v.extend_from_slice(&["--", "srv"]);
            plan_of(&v)
        };
        let p = with(&["tools", "call", "add", "--args", r#"{"a":1}"#]);
        assert_eq!(p.method, "tools/call");
        assert_eq!(p.params, Some(json!({"name":"add","arguments":{"a":1}})));
        let p = with(&["tools", "list"]);
        assert_eq!(
            (p.method, p.paginated, p.params),
            ("tools/list", true, None)
        );
        let p = with(&["resources", "read", "file:///a"]);
        assert_eq!(p.params, Some(json!({"uri":"file:///a"})));
        assert_eq!(
            with(&["resources", "templates"]).method,
            "resources/templates/list"
        );
        let p = with(&["prompts", "get", "greet", "--args", r#"{"who":"Ada"}"#]);
        assert_eq!(
            p.params,
            Some(json!({"name":"greet","arguments":{"who":"Ada"}}))
        );
        let p = with(&[
            "complete", "prompt", "greet", "--arg", "who", "--value", "A",
        ]);
        assert_eq!(
            p.params,
            Some(
                json!({"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"A"}})
            )
        );
        let p = with(&[
            "complete",
            "resource",
            "file:///{p}",
            "--arg",
            "p",
            "--context",
            r#"{"q":"1"}"#,
        ]);
        assert_eq!(
            p.params,
            Some(json!({"ref":{"type":"ref/resource","uri":"file:///{p}"},
                        "argument":{"name":"p","value":""},"context":{"arguments":{"q":"1"}}}))
        );
        assert_eq!(with(&["ping"]).method, "ping");
        let p = with(&["set-level", "warning"]);
        assert_eq!(p.params, Some(json!({"level":"warning"})));
    }
}
