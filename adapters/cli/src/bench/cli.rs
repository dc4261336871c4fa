//! The grammar of `mcp-sansio bench` and the checks that turn it into [`Settings`].

use std::time::Duration;

use clap::Args;

use super::mix::Mix;
use crate::args::StderrArg;

/// The most calls in flight per session (the client session's own limit on pending requests
/// is 1024).
pub(crate) const MAX_CONCURRENCY: usize = 1024;
/// The most sessions (server processes, or MCP sessions over the URLs) per run; the
/// open-file limit may allow fewer (see [`Settings::descriptors_needed`]).
pub(crate) const MAX_SESSIONS: usize = 20_000;
/// The longest duration, warmup or timeout accepted (keeps every deadline far from overflow).
const MAX_TIME: Duration = Duration::from_secs(7 * 24 * 3600);
/// How long a run lasts when neither `--duration` nor `--requests` is given.
const DEFAULT_DURATION: Duration = Duration::from_secs(10);

pub(crate) const BENCH_HELP: &str = "\
Two targets: --stdio starts SESSIONS copies of the server (the command after `--`); a URL
(Streamable HTTP, http://host:port/path) opens SESSIONS MCP sessions on that server, each with
its own Mcp-Session-Id and its own kept-alive connections; several URLs (or --url, repeated)
share the sessions round-robin, or with --rotate every session sends each request to the next URL
(instances sharing the sessions through a store, as a load balancer without sticky sessions
would); --get-stream makes each session hold the standalone GET stream
open, as SDK clients do; --idle TIME opens the sessions and holds them without calls. Each session runs the MCP handshake,
then keeps CONCURRENCY calls in flight, drawn from the mix in proportion to the weights (a fixed
interleaved order). Calls made during --warmup are not counted. Every answer is checked: ping
must return {}, a tool call a result with a `content` array and no \"isError\": true, a resource
read a `contents` array; anything else, JSON-RPC errors (HTTP error statuses included), timeouts
and lost sessions (a server process that exits, an HTTP server that no longer accepts or
answers) are counted as errors. Throughput counts successful calls; latencies are those of
successful calls, from sending to the checked answer.

Mix entries: ping | tool:NAME | read:URI, each optionally =WEIGHT (default 1). A URI ending in
`=digits` needs an explicit weight. Tool arguments: --args NAME=JSON-object (once per tool).

Output: a table on stdout (--json: one JSON object); a live progress line on stderr when stderr is
a terminal or with --progress. Besides the latencies: TCP connections opened, errors by kind
(connect: refused or unreachable; reset: the connection broke before the answer; http_status;
rpc_error with its code in the samples; timeout; closed...), and the answer count: every call is
numbered in its session and settled once; a call that got no answer is lost, a second answer
to one call or a response matching no call is duplicated. With --server-pid PID: the server's
RSS (sampled from /proc every 100 ms) at the start, its highest sample and VmHWM at the end.
Before starting, the open-file limit is raised to its hard limit; a run that could need more
descriptors than it allows is refused.

Exit status: 0 the run completed without errors; 1 a server could not be started, reached or
initialized, or some calls failed (the report is still printed); 2 bad usage.

Examples:
  mcp-sansio bench --stdio --requests 20000 --concurrency 64 -- mcp-sansio serve --stdio
  mcp-sansio bench --stdio --duration 10s --mix ping=1,tool:echo=3 --args 'echo={\"message\":\"hi\"}' \\
      -- node server-everything/dist/index.js stdio
  mcp-sansio bench --stdio --sessions 4 --concurrency 16 --json --mix read:test://static-text -- ./my-server
  mcp-sansio bench http://127.0.0.1:3000/mcp --sessions 4 --concurrency 16 --duration 10s
  mcp-sansio bench http://127.0.0.1:3001/mcp --mix tool:echo --args 'echo={\"message\":\"hi\"}' --json
  mcp-sansio bench http://127.0.0.1:3000/mcp --sessions 1000 --get-stream --server-pid 4242 --requests 100000
  mcp-sansio bench http://127.0.0.1:3000/mcp --sessions 10000 --get-stream --idle 10s --server-pid 4242";

/// Options of `bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// Start each session's server as a child process and talk over its stdin/stdout.
    #[arg(long, conflicts_with_all = ["urls", "url_flags"], required_unless_present_any = ["urls", "url_flags"])]
    pub(crate) stdio: bool,
    /// Load the Streamable HTTP endpoint at this URL instead (http://host:port/path); several
    /// URLs share the sessions round-robin.
    #[arg(value_name = "URL")]
    pub(crate) urls: Vec<String>,
    /// Another URL to spread sessions over (repeatable; same as a positional URL).
    #[arg(long = "url", value_name = "URL")]
    pub(crate) url_flags: Vec<String>,
    /// Several URLs: each session sends each request to the next URL in turn (instances that
    /// share the sessions through a store) instead of keeping to one.
    #[arg(long)]
    pub(crate) rotate: bool,
    /// URL only: send `Authorization: Bearer <TOKEN>` with every request.
    #[arg(long, value_name = "TOKEN")]
    pub(crate) bearer_token: Option<String>,
    /// URL only: each session holds the standalone GET stream open, as SDK clients do.
    #[arg(long)]
    pub(crate) get_stream: bool,
    /// Open the sessions, hold them this long without calls, close them (measures what idle
    /// sessions cost the server; with --server-pid its RSS is reported).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, conflicts_with_all = ["requests", "duration"])]
    pub(crate) idle: Option<Duration>,
    /// Sample this process's memory (/proc/PID/status VmRSS, VmHWM) during the run and report
    /// it (the server's PID, when it runs on this machine).
    #[arg(long, value_name = "PID")]
    pub(crate) server_pid: Option<u32>,
    /// The calls to make: comma-separated `ping`, `tool:NAME`, `read:URI`, each `=WEIGHT`.
    #[arg(long, value_name = "MIX", default_value = "ping")]
    pub(crate) mix: String,
    /// Arguments of a tool in the mix: NAME=JSON-object (repeatable).
    #[arg(long = "args", value_name = "NAME=JSON")]
    pub(crate) tool_args: Vec<String>,
    /// Calls in flight per session.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) concurrency: usize,
    /// Sessions run side by side (server processes with --stdio, MCP sessions on a URL).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) sessions: usize,
    /// Measure for this long (e.g. 10s, 500ms, 2m) [default: 10s unless --requests].
    #[arg(long, value_name = "TIME", value_parser = parse_duration, conflicts_with = "requests")]
    pub(crate) duration: Option<Duration>,
    /// Measure exactly this many calls (over all sessions).
    #[arg(long, value_name = "N")]
    pub(crate) requests: Option<u64>,
    /// Make uncounted calls for this long first.
    #[arg(long, value_name = "TIME", value_parser = parse_duration, default_value = "1s")]
    pub(crate) warmup: Duration,
    /// Count a call as a timeout after this long.
    #[arg(long, value_name = "TIME", value_parser = parse_duration, default_value = "30s")]
    pub(crate) timeout: Duration,
    /// Print the report as one JSON object instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Show the live progress line even when stderr is not a terminal.
    #[arg(long)]
    pub(crate) progress: bool,
    /// --stdio: what to do with the servers' stderr (Capture: shown if a server fails to start).
    #[arg(long, value_enum, default_value_t = StderrArg::Capture)]
    pub(crate) server_stderr: StderrArg,
    /// Where the protocol trace of every session goes (one output for all sessions).
    #[command(flatten)]
    pub(crate) trace: crate::client_trace::TraceArgs,
}

/// When the measured part of a run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// After this many measured calls over all sessions.
    Requests(u64),
    /// When this much time has passed since the warmup ended.
    Duration(Duration),
}

/// The checked settings of a run.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) mix: Mix,
    pub(crate) concurrency: usize,
    pub(crate) sessions: usize,
    pub(crate) stop: Stop,
    pub(crate) warmup: Duration,
    pub(crate) timeout: Duration,
    /// URL: each session holds the standalone GET stream.
    pub(crate) get_stream: bool,
    /// Hold the sessions this long without calls instead of loading them.
    pub(crate) idle: Option<Duration>,
    /// How many URLs each session sends its requests to in turn (1: it keeps to one).
    pub(crate) rotate_over: usize,
}

impl Settings {
    /// Descriptors one session holds over a URL once running: a connection per call in
    /// flight, one kept idle, the GET stream. An idle run keeps no idle connection: the GET
    /// stream, or the connection of the handshake.
    pub(crate) fn connections_per_session(&self) -> usize {
        match self.idle {
            Some(_) => 1,
            None => (self.concurrency + 1) * self.rotate_over + usize::from(self.get_stream),
        }
    }

    /// Descriptors the whole run may hold at once (the connections of every session).
    pub(crate) fn descriptors_needed(&self) -> u64 {
        (self.sessions as u64).saturating_mul(self.connections_per_session() as u64)
    }
}

impl BenchArgs {
    /// Checks the options and parses the mix.
    pub(crate) fn settings(&self) -> Result<Settings, String> {
        if !(1..=MAX_CONCURRENCY).contains(&self.concurrency) {
            return Err(format!("--concurrency must be 1..={MAX_CONCURRENCY}"));
        }
        if !(1..=MAX_SESSIONS).contains(&self.sessions) {
            return Err(format!("--sessions must be 1..={MAX_SESSIONS}"));
        }
        if self.timeout.is_zero() {
            return Err("--timeout must be above 0".into());
        }
        for (name, time) in [
            ("--duration", self.duration.unwrap_or_default()),
            ("--warmup", self.warmup),
            ("--timeout", self.timeout),
        ] {
            if time > MAX_TIME {
                return Err(format!("{name} must be at most 7 days"));
            }
        }
        let stop = match (self.requests, self.duration) {
            (Some(0), _) => return Err("--requests must be at least 1".into()),
            (Some(n), _) => Stop::Requests(n),
            (None, Some(d)) if d.is_zero() => return Err("--duration must be above 0".into()),
            (None, Some(d)) => Stop::Duration(d),
            (None, None) => Stop::Duration(DEFAULT_DURATION),
        };
        if self.idle.is_some_and(|d| d.is_zero() || d > MAX_TIME) {
            return Err("--idle must be above 0 and at most 7 days".into());
        }
        let urls = !(self.urls.is_empty() && self.url_flags.is_empty());
        if !urls && (self.get_stream || self.bearer_token.is_some() || self.idle.is_some()) {
            return Err("--get-stream, --idle and --bearer-token go with a URL".into());
        }
        let url_count = self.urls.len() + self.url_flags.len();
        if self.rotate && url_count < 2 {
            return Err("--rotate goes with several URLs".into());
        }
        Ok(Settings {
            mix: Mix::parse(&self.mix, &self.tool_args)?,
            concurrency: self.concurrency,
            sessions: self.sessions,
            stop,
            warmup: if self.idle.is_some() {
                Duration::ZERO
            } else {
                self.warmup
            },
            timeout: self.timeout,
            get_stream: self.get_stream,
            idle: self.idle,
            rotate_over: if self.rotate { url_count } else { 1 },
        })
    }
}

/// Parses `10s`, `500ms`, `2m`, `1.5s`, `100us` or a bare number of seconds.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (e.g. 10s, 500ms, 2m)"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" => value / 1e6,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(format!(
                "`{text}`: unknown unit `{unit}` (use us, ms, s, m or h)"
            ))
        }
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("`{text}` is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_every_unit() {
        let d = |s| parse_duration(s).unwrap();
        assert_eq!(d("10s"), Duration::from_secs(10));
        assert_eq!(d("10"), Duration::from_secs(10));
        assert_eq!(d("500ms"), Duration::from_millis(500));
        assert_eq!(d("1.5s"), Duration::from_millis(1500));
        assert_eq!(d("2m"), Duration::from_secs(120));
        assert_eq!(d("250us"), Duration::from_micros(250));
        assert_eq!(d("0"), Duration::ZERO);
        for bad in ["", "s", "ten", "5x", "-1s", "1e999s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
