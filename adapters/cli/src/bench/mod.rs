//! `mcp-sansio bench`: a load generator for any MCP server. Starts one thread per session,
//! each with its own client and its own server process (stdio) or MCP session (URL), lines
//! them up, runs the load, merges what they measured and prints the report.
//!
//! Split by concern: [`cli`] the options, [`mix`] what to call, [`load`] when to call and the
//! workers, [`check`] judging answers, [`histogram`] and [`stats`] the tallies, [`transport`]
//! reaching a server ([`url`] over Streamable HTTP), [`report`] and [`progress`] the output.

mod check;
mod cli;
mod histogram;
mod load;
mod mix;
mod progress;
mod report;
mod stats;
mod transport;
mod url;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::sync::Arc;

pub(crate) use cli::{BenchArgs, BENCH_HELP};

use crate::Failure;
use load::{drive_session, Control, SessionLoad};
use report::{Correlation, Report};
use stats::Recorder;
use transport::{run_session, NotRun, Ran, Target};

/// Runs the benchmark described by `args` against the URL or the server command after `--`.
pub(crate) fn run(args: &BenchArgs, server: Option<Vec<OsString>>) -> Result<(), Failure> {
    let target = target(args, server).map_err(Failure::Usage)?;
    let settings = Arc::new(args.settings().map_err(Failure::Usage)?);
    let control = Arc::new(Control::new(
        settings.stop,
        settings.warmup,
        settings.sessions,
    ));
    let progress = (args.progress || std::io::stderr().is_terminal())
        .then(|| progress::Progress::start(control.clone()));

    let threads: Vec<_> = (0..settings.sessions)
        .map(|i| {
            let (target, settings, control) = (target.clone(), settings.clone(), control.clone());
            std::thread::Builder::new()
                .name(format!("bench-session-{i}"))
                .spawn(move || one_session(&target, &settings, &control))
        })
        .collect();
    let mut outcomes = Vec::new();
    for thread in threads {
        let thread = thread.map_err(|e| Failure::Failed(format!("cannot start a thread: {e}")))?;
        outcomes.push(thread.join().unwrap_or_else(|_| {
            Err(NotRun {
                message: "a session thread panicked".into(),
                stderr_tail: None,
                stopped_by_another: false,
            })
        }));
    }
    if let Some(progress) = progress {
        progress.finish();
    }

    let mut recorder = Recorder::new(settings.mix.entries.len());
    let mut correlation = Correlation::default();
    let mut sessions_lost = 0;
    let mut server = None;
    let mut first_failure = None;
    for outcome in outcomes {
        match outcome {
            Ok(ran) => {
                server.get_or_insert(ran.server);
                if ran.output.lost {
                    sessions_lost += 1;
                }
                if let Some(stats) = ran.stats {
                    correlation.unknown += stats.unknown_responses_dropped;
                    correlation.late += stats.late_responses_dropped;
                    correlation.invalid += stats.invalid_responses_dropped;
                }
                recorder.merge(ran.output.recorder);
            }
            // Report the session that failed, not the ones it stopped.
            Err(not_run) if first_failure.is_none() || !not_run.stopped_by_another => {
                first_failure = Some(not_run);
            }
            Err(_) => {}
        }
    }
    if let Some(not_run) = first_failure {
        if let Some(tail) = not_run.stderr_tail.as_deref().filter(|t| !t.is_empty()) {
            eprintln!("--- server stderr (last lines) ---\n{}", tail.trim_end());
        }
        return Err(Failure::Failed(not_run.message));
    }

    let elapsed = control.measured_window(recorder.last_completion, sessions_lost > 0);
    let (transport, target) = target.describe();
    let report = Report {
        transport,
        target,
        server: server.unwrap_or_default(),
        mix: &settings.mix,
        sessions: settings.sessions,
        concurrency: settings.concurrency,
        stop: settings.stop,
        warmup: settings.warmup,
        elapsed,
        recorder: &recorder,
        sessions_lost,
        correlation,
    };
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_table());
    }
    match report.problems() {
        0 => Ok(()),
        n => Err(Failure::Failed(format!(
            "{n} problem(s) during the run (failed calls, lost sessions or unmatched responses; see the report)"
        ))),
    }
}

/// The server under load: the URL, or the command after `--` with `--stdio`.
fn target(args: &BenchArgs, server: Option<Vec<OsString>>) -> Result<Target, String> {
    match (&args.url, server) {
        (Some(_), Some(_)) => Err(
            "a URL takes no server command: drop everything from `--` on, or use --stdio".into(),
        ),
        (Some(url), None) => {
            url::check_url(url)?;
            Ok(Target::Url {
                url: url.clone(),
                bearer_token: args.bearer_token.clone(),
            })
        }
        (None, _) if args.bearer_token.is_some() => {
            Err("--bearer-token goes with a URL, not with --stdio".into())
        }
        (None, Some(command)) if !command.is_empty() => Ok(Target::Stdio {
            command,
            stderr: args.server_stderr,
        }),
        (None, _) => Err("missing the server command: put it last, after `--` \
             (e.g. `mcp-sansio bench --stdio -- ./my-server`)"
            .into()),
    }
}

/// Connects one session, waits for the others, runs the load on it.
fn one_session(
    target: &Target,
    settings: &cli::Settings,
    control: &Control,
) -> Result<Ran<SessionLoad>, NotRun> {
    let gone = target.server_gone();
    let ran = run_session(target, settings, |handle| async move {
        let Some(handle) = handle else {
            control.arrive(false).await;
            return None;
        };
        if !control.arrive(true).await {
            return None;
        }
        Some(drive_session(handle, &settings.mix, settings, control, gone).await)
    })?;
    match ran.output {
        Some(output) => Ok(Ran {
            output,
            server: ran.server,
            stats: ran.stats,
        }),
        // Another session failed to start; this one did not run. Its failure is reported.
        None => Err(NotRun {
            message: "another session failed to start".into(),
            stderr_tail: None,
            stopped_by_another: true,
        }),
    }
}
