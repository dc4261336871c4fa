//! `mcp-sansio bench`: a load generator for any MCP server. Starts one thread per session,
//! each with its own client and its own server process (stdio) or MCP session (URL), lines
//! them up, runs the load, merges what they measured and prints the report.
//!
//! Split by concern: [`cli`] the options, [`mix`] what to call, [`load`] when to call and the
//! workers, [`check`] judging answers, [`answers`] counting them, [`histogram`] and [`stats`]
//! the tallies, [`transport`] reaching a server ([`url`] over Streamable HTTP), [`rss`] the
//! server's memory, [`report`] and [`progress`] the output.

mod answers;
mod check;
mod cli;
mod histogram;
mod load;
mod mix;
mod progress;
mod report;
mod rss;
mod stats;
mod transport;
mod url;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::sync::Arc;

pub(crate) use cli::{BenchArgs, BENCH_HELP};

use crate::Failure;
use answers::AnswerTally;
use load::{drive_session, Control, SessionLoad};
use report::{Correlation, Report};
use stats::Recorder;
use transport::{run_session, NotRun, Ran, Target};

/// Runs the benchmark described by `args` against the URL or the server command after `--`.
pub(crate) fn run(args: &BenchArgs, server: Option<Vec<OsString>>) -> Result<(), Failure> {
    let mut target = target(args, server).map_err(Failure::Usage)?;
    target
        .trace(&args.trace)
        .map_err(|e| Failure::Failed(format!("cannot open the trace file: {e}")))?;
    let settings = Arc::new(args.settings().map_err(Failure::Usage)?);
    check_descriptors(&settings, &target, crate::fd_limit::raise_to_hard())
        .map_err(Failure::Usage)?;
    let sampler = match args.server_pid {
        Some(pid) => Some(rss::Sampler::start(pid).map_err(Failure::Usage)?),
        None => None,
    };
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
                .stack_size(SESSION_STACK)
                .spawn(move || one_session(&target, i, &settings, &control))
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
    let server_memory = sampler.map(rss::Sampler::finish);

    let mut recorder = Recorder::new(settings.mix.entries.len());
    let mut correlation = Correlation::default();
    let mut sessions_lost = 0;
    let mut answers = AnswerTally::default();
    let mut connections_opened = 0;
    let mut server = None;
    let mut first_failure = None;
    for outcome in outcomes {
        match outcome {
            Ok(ran) => {
                server.get_or_insert(ran.server);
                if ran.output.lost {
                    sessions_lost += 1;
                }
                answers.add(ran.output.answers);
                connections_opened += ran.connections_opened;
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
        answers,
        connections_opened,
        get_stream: settings.get_stream,
        idle: settings.idle,
        server_memory,
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

/// A session thread's stack: the client's futures in a debug build need more than 512 KiB.
/// Only the pages a thread touches take memory, so ten thousand threads reserve address
/// space, not RSS.
const SESSION_STACK: usize = 2 * 1024 * 1024;

/// Refuses a run whose connections could not all be open at once under the open-file limit
/// `soft_limit` (stdio: each session's child takes its pipes, counted as three).
fn check_descriptors(
    settings: &cli::Settings,
    target: &Target,
    soft_limit: Option<u64>,
) -> Result<(), String> {
    let Some(soft) = soft_limit else {
        return Ok(());
    };
    let needed = match target {
        Target::Url { .. } => settings.descriptors_needed(),
        Target::Stdio { .. } => settings.sessions as u64 * 3,
    };
    let fit = crate::fd_limit::connections_that_fit(soft) as u64;
    if needed > fit {
        return Err(format!(
            "--sessions {} may need {needed} open descriptors ({} per session) but the \
             open-file limit allows {fit} (hard limit {soft}, less {} kept spare): use fewer \
             sessions or less --concurrency, or raise the hard limit (ulimit -Hn)",
            settings.sessions,
            needed / settings.sessions.max(1) as u64,
            crate::fd_limit::HEADROOM,
        ));
    }
    Ok(())
}

/// The server under load: the URLs, or the command after `--` with `--stdio`.
fn target(args: &BenchArgs, server: Option<Vec<OsString>>) -> Result<Target, String> {
    let urls: Vec<String> = args.urls.iter().chain(&args.url_flags).cloned().collect();
    match (urls.is_empty(), server) {
        (false, Some(_)) => Err(
            "a URL takes no server command: drop everything from `--` on, or use --stdio".into(),
        ),
        (false, None) => {
            for url in &urls {
                url::check_url(url)?;
            }
            Ok(Target::Url {
                urls,
                bearer_token: args.bearer_token.clone(),
                trace: None,
            })
        }
        (true, _) if args.bearer_token.is_some() => {
            Err("--bearer-token goes with a URL, not with --stdio".into())
        }
        (true, Some(command)) if !command.is_empty() => Ok(Target::Stdio {
            command,
            stderr: args.server_stderr,
            trace: None,
        }),
        (true, _) => Err("missing the server command: put it last, after `--` \
             (e.g. `mcp-sansio bench --stdio -- ./my-server`)"
            .into()),
    }
}

/// Connects one session, waits for the others, runs the load on it.
fn one_session(
    target: &Target,
    session: usize,
    settings: &cli::Settings,
    control: &Control,
) -> Result<Ran<SessionLoad>, NotRun> {
    let gone = target.server_gone();
    let ran = run_session(target, session, settings, |handle| async move {
        let Some(handle) = handle else {
            control.arrive(false).await;
            return None;
        };
        if !control.arrive(true).await {
            return None;
        }
        if let Some(idle) = settings.idle {
            smol::Timer::after(idle).await;
            return Some(SessionLoad::idle(&settings.mix));
        }
        Some(drive_session(handle, &settings.mix, settings, control, gone).await)
    })?;
    match ran.output {
        Some(output) => Ok(Ran {
            output,
            server: ran.server,
            stats: ran.stats,
            connections_opened: ran.connections_opened,
        }),
        // Another session failed to start; this one did not run. Its failure is reported.
        None => Err(NotRun {
            message: "another session failed to start".into(),
            stderr_tail: None,
            stopped_by_another: true,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        bench: BenchArgs,
    }

    fn settings(line: &str) -> cli::Settings {
        let argv = std::iter::once("bench").chain(line.split_whitespace());
        Line::try_parse_from(argv)
            .unwrap()
            .bench
            .settings()
            .unwrap()
    }

    fn url() -> Target {
        Target::Url {
            urls: vec!["http://127.0.0.1:1/mcp".into()],
            bearer_token: None,
            trace: None,
        }
    }

    #[test]
    fn a_run_that_cannot_fit_its_descriptors_is_refused() {
        let busy = settings("http://127.0.0.1:1/mcp --sessions 10000 --get-stream");
        assert_eq!(busy.descriptors_needed(), 30_000);
        let refused = check_descriptors(&busy, &url(), Some(20_000)).unwrap_err();
        assert!(refused.contains("30000 open descriptors"), "{refused}");
        assert!(check_descriptors(&busy, &url(), Some(40_000)).is_ok());
        // Unknown limit: nothing to check against.
        assert!(check_descriptors(&busy, &url(), None).is_ok());

        let idle = settings("http://127.0.0.1:1/mcp --sessions 10000 --get-stream --idle 5s");
        assert_eq!(idle.descriptors_needed(), 10_000);
        assert!(check_descriptors(&idle, &url(), Some(20_000)).is_ok());
    }

    #[test]
    fn urls_come_from_positionals_and_flags() {
        let line = Line::try_parse_from([
            "bench",
            "http://127.0.0.1:1/mcp",
            "--url",
            "http://127.0.0.1:2/mcp",
            "http://127.0.0.1:3/mcp",
        ])
        .unwrap();
        let Target::Url { urls, .. } = target(&line.bench, None).unwrap() else {
            panic!("a URL target");
        };
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:1/mcp",
                "http://127.0.0.1:3/mcp",
                "http://127.0.0.1:2/mcp"
            ]
        );
    }
}
