//! Stdio round trips between two processes, side by side in one run: `ping` and an echo
//! `tools/call`, 1 and 64 in flight, over the child's stdin/stdout pipes.
//!
//! - floor: the child (`stdio_floor_echo`) echoes each line back, flushing per line; the
//!   parent writes the request line(s) in one write and reads them back. No parsing.
//! - ours_adapter: our client `Session` on the stdio adapter (`ChildProcess::drive`, smol)
//!   against our server `Session` on `serve_stdio` (`stdio_ours_server`). The adapter's loop
//!   runs until its machine closes, so each criterion sample spawns a child, does the
//!   handshake untimed, then times `iters` rounds inside one drive (`iter_custom`).
//! - ours_poll: the same sessions on the stdio adapter's `PollDriver` on both sides
//!   (`ChildProcess::drive_poll` against `stdio_ours_server poll`): no async runtime, poll(2).
//! - ours_blocking: the same sessions on minimal blocking loops (one read, one write per batch,
//!   the core's `NdjsonDecoder`) on both sides (`stdio_ours_server blocking`).
//! - rmcp: rmcp's client over `TokioChildProcess` (current-thread runtime) against rmcp's echo
//!   `ServerHandler` on `rmcp::transport::stdio()` (`stdio_rmcp_server`), `join_all`.
//!
//! Ids `<name>/1` and `<name>/64`: send that many, wait for all, repeat. Ids
//! `<name>_steady/64`: keep 64 outstanding, replacing each as it completes (one element per
//! round trip). Throughput is in round trips per second. After the run, the ratios to the floor
//! are printed from criterion's estimates.
//!
//! Run: `cargo bench --manifest-path bench-rmcp/Cargo.toml --bench stdio`

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{BenchmarkId, Criterion, Throughput};
use futures::StreamExt;
use mcp_sansio::framing::{encode_frame, NdjsonDecoder};
use mcp_sansio::jsonrpc::RawJson;
use mcp_sansio::model::{ClientCapabilities, Implementation, ProtocolVersion};
use mcp_sansio::session::{ClientSetup, Event, Outcome, RequestOptions, Session};
use mcp_sansio::Config;
use mcp_sansio_stdio::{
    ChildProcess, DriveOptions, Driven, Driver, FrameError, PollDriver, StderrMode,
};
use rmcp::model::{ClientRequest, PingRequest};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use tokio::runtime::Runtime;

const IN_FLIGHT: [usize; 2] = [1, 64];
const STEADY_WINDOW: usize = 64;
const FLOOR_BIN: &str = env!("CARGO_BIN_EXE_stdio_floor_echo");
const OURS_BIN: &str = env!("CARGO_BIN_EXE_stdio_ours_server");
const RMCP_BIN: &str = env!("CARGO_BIN_EXE_stdio_rmcp_server");

/// What one group measures.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Call {
    Ping,
    Echo,
}

impl Call {
    fn method(self) -> &'static str {
        match self {
            Call::Ping => "ping",
            Call::Echo => "tools/call",
        }
    }

    fn params(self) -> Option<RawJson> {
        (self == Call::Echo).then(bench_rmcp::echo_params)
    }

    /// The request line the floor echoes: what our client sends for this call.
    fn floor_line(self) -> Vec<u8> {
        let mut line = Vec::new();
        let mut session = handshaken_offline_client();
        let now = Instant::now();
        let options = RequestOptions::default();
        session
            .send_request(now, self.method(), self.params(), options)
            .expect("admitted");
        // The last transmit is the request (`notifications/initialized` comes before it).
        let mut scratch = Vec::new();
        while session.poll_transmit(&mut scratch).is_some() {
            line = std::mem::take(&mut scratch);
        }
        line.push(b'\n');
        line
    }
}

/// A client session past the handshake without a peer (for spelling the floor's line): the
/// initialize result is fed by hand.
fn handshaken_offline_client() -> Session {
    let now = Instant::now();
    let mut session = new_client();
    session.initialize(now).expect("initialize");
    let mut scratch = Vec::new();
    while session.poll_transmit(&mut scratch).is_some() {
        scratch.clear();
    }
    let result = format!(
        r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":"{}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"s","version":"0"}}}}}}"#,
        ProtocolVersion::LATEST_STATEFUL
    );
    session.handle_input(now, Bytes::from(result));
    while session.poll_event().is_some() {}
    session
}

fn new_client() -> Session {
    let setup = ClientSetup {
        info: Implementation::new("bench-stdio-client", "0"),
        capabilities: ClientCapabilities::default(),
        protocol_version: ProtocolVersion::LATEST_STATEFUL,
    };
    Session::client(Config::default(), setup, Instant::now())
}

fn spawn_piped(mut command: Command) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::with_capacity(64 * 1024, child.stdout.take().expect("stdout"));
    (child, stdin, stdout)
}

/// The floor: a child that echoes lines.
struct Floor {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    batch: Vec<u8>,
    read: Vec<u8>,
}

impl Floor {
    fn spawn(line: Vec<u8>) -> Floor {
        let (child, stdin, stdout) = spawn_piped(Command::new(FLOOR_BIN));
        Floor {
            child,
            stdin,
            stdout,
            line,
            batch: Vec::new(),
            read: Vec::with_capacity(4096),
        }
    }

    /// Writes `n` lines in one write, reads `n` lines back.
    fn batch(&mut self, n: usize) {
        self.batch.clear();
        for _ in 0..n {
            self.batch.extend_from_slice(&self.line);
        }
        self.stdin.write_all(&self.batch).expect("write");
        for _ in 0..n {
            self.read_line();
        }
    }

    /// Keeps `window` lines outstanding until `total` came back.
    fn steady(&mut self, total: u64, window: usize) -> Duration {
        let start = Instant::now();
        let mut sent = 0;
        while sent < total && sent < window as u64 {
            self.stdin.write_all(&self.line).expect("write");
            sent += 1;
        }
        for _ in 0..total {
            self.read_line();
            if sent < total {
                self.stdin.write_all(&self.line).expect("write");
                sent += 1;
            }
        }
        start.elapsed()
    }

    fn read_line(&mut self) {
        self.read.clear();
        self.stdout.read_until(b'\n', &mut self.read).expect("read");
        assert_eq!(self.read, self.line, "the floor echo");
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How the client paces its requests.
#[derive(Clone, Copy)]
enum Pace {
    /// Send `n`, wait for all of them, repeat.
    Batch(usize),
    /// Keep `n` outstanding.
    Steady(usize),
}

/// Counts requests and completions and decides when to send; shared by both our clients.
struct Plan {
    call: Call,
    params: Option<RawJson>,
    pace: Pace,
    total: u64,
    sent: u64,
    done: u64,
    checked: bool,
    /// Past the handshake: `initialize` completes before `Initialized`, and is not ours.
    ready: bool,
}

impl Plan {
    fn new(call: Call, pace: Pace, rounds: u64) -> Plan {
        let total = match pace {
            Pace::Batch(n) => rounds * n as u64,
            Pace::Steady(_) => rounds,
        };
        Plan {
            call,
            params: call.params(),
            pace,
            total,
            sent: 0,
            done: 0,
            checked: false,
            ready: false,
        }
    }

    fn finished(&self) -> bool {
        self.done == self.total
    }

    /// Sends what the pace allows now.
    fn send(&mut self, session: &mut Session, now: Instant) {
        let outstanding = self.sent - self.done;
        let window = match self.pace {
            Pace::Batch(_) if outstanding > 0 => return,
            Pace::Batch(n) | Pace::Steady(n) => n as u64,
        };
        let wanted = window
            .min(self.total - self.sent)
            .saturating_sub(outstanding);
        for _ in 0..wanted {
            let options = RequestOptions::default();
            let params = self.params.clone();
            session
                .send_request(now, self.call.method(), params, options)
                .expect("request admitted");
            self.sent += 1;
        }
    }

    /// Takes the session's events; returns whether the handshake finished among them.
    fn take_events(&mut self, session: &mut Session) -> bool {
        let mut initialized = false;
        while let Some(event) = session.poll_event() {
            match event {
                Event::Initialized { .. } => {
                    initialized = true;
                    self.ready = true;
                }
                Event::Completed { outcome, .. } if self.ready => {
                    let Outcome::Result(result) = outcome else {
                        panic!("a request failed: {outcome:?}");
                    };
                    if !self.checked && self.call == Call::Echo {
                        assert!(bench_rmcp::is_echo(&result), "not the echo");
                        self.checked = true;
                    }
                    self.done += 1;
                }
                _ => {}
            }
        }
        initialized
    }
}

/// Our client on the stdio adapter: handshake, then the plan, timed from the handshake's end.
struct AdapterClient {
    session: Session,
    plan: Plan,
    started: Option<Instant>,
    elapsed: Option<Duration>,
}

impl Driven for AdapterClient {
    fn handle_frame(&mut self, now: Instant, frame: Bytes) {
        self.session.handle_input(now, frame);
        if self.plan.take_events(&mut self.session) {
            self.started = Some(Instant::now());
        }
        if self.started.is_none() {
            return;
        }
        if self.plan.finished() {
            let started = self.started.expect("started");
            self.elapsed.get_or_insert_with(|| started.elapsed());
        } else {
            self.plan.send(&mut self.session, now);
        }
    }
    fn handle_frame_error(&mut self, _now: Instant, error: FrameError) {
        panic!("{error}");
    }
    fn handle_eof(&mut self, _now: Instant) {
        panic!("the server ended early");
    }
    fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
    }
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        self.session.poll_transmit(buf).map(|t| t.len)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.session.poll_timeout()
    }
    fn is_closed(&self) -> bool {
        self.elapsed.is_some()
    }
}

/// One criterion sample through the adapter: spawn, handshake (untimed), `rounds` rounds; on
/// the smol driver, or on the poll driver (both sides) when `poll`.
fn adapter_sample(call: Call, pace: Pace, rounds: u64, poll: bool) -> Duration {
    let mut command = Command::new(OURS_BIN);
    if poll {
        command.arg("poll");
    }
    let mut child = ChildProcess::spawn(command, StderrMode::Inherit).expect("spawn");
    let mut session = new_client();
    session.initialize(Instant::now()).expect("initialize");
    let client = AdapterClient {
        session,
        plan: Plan::new(call, pace, rounds),
        started: None,
        elapsed: None,
    };
    let finished = if poll {
        let driver = PollDriver::new(DriveOptions::default()).expect("wake-up socket");
        child.drive_poll(driver, client)
    } else {
        child.drive_blocking(Driver::new(DriveOptions::default()), client)
    }
    .expect("drive");
    child
        .shutdown_blocking(Default::default())
        .expect("shutdown");
    finished.driven.elapsed.expect("the plan finished")
}

/// Our client on a minimal blocking loop over a child's pipes.
struct BlockingClient {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    session: Session,
    lines: NdjsonDecoder,
    chunk: Vec<u8>,
    out: Vec<u8>,
    scratch: Vec<u8>,
}

impl BlockingClient {
    /// Spawns the blocking server and does the handshake.
    fn connect() -> BlockingClient {
        let mut command = Command::new(OURS_BIN);
        command.arg("blocking");
        let (child, stdin, stdout) = spawn_piped(command);
        let mut client = BlockingClient {
            child,
            stdin,
            stdout: stdout.into_inner(),
            session: new_client(),
            lines: NdjsonDecoder::default(),
            chunk: vec![0; 64 * 1024],
            out: Vec::with_capacity(64 * 1024),
            scratch: Vec::with_capacity(4096),
        };
        client
            .session
            .initialize(Instant::now())
            .expect("initialize");
        let mut plan = Plan::new(Call::Ping, Pace::Batch(1), 0);
        let mut initialized = false;
        while !initialized {
            client.flush();
            client.read_some();
            initialized = plan.take_events(&mut client.session);
        }
        client.flush(); // notifications/initialized
        client
    }

    /// Runs a plan to its end.
    fn run(&mut self, plan: &mut Plan) {
        plan.ready = true; // `connect` did the handshake
        plan.send(&mut self.session, Instant::now());
        while !plan.finished() {
            self.flush();
            self.read_some();
            plan.take_events(&mut self.session);
            plan.send(&mut self.session, Instant::now());
        }
    }

    /// Writes everything pending in one write.
    fn flush(&mut self) {
        self.out.clear();
        loop {
            self.scratch.clear();
            if self.session.poll_transmit(&mut self.scratch).is_none() {
                break;
            }
            encode_frame(&mut self.out, &self.scratch);
        }
        if !self.out.is_empty() {
            self.stdin.write_all(&self.out).expect("write");
        }
    }

    /// One read; every complete line goes to the session.
    fn read_some(&mut self) {
        let n = self.stdout.read(&mut self.chunk).expect("read");
        assert!(n > 0, "the server ended early");
        let now = Instant::now();
        self.lines.push(&self.chunk[..n]);
        while let Some(frame) = self.lines.poll_frame() {
            self.session.handle_input(now, frame.expect("a frame"));
        }
    }
}

impl Drop for BlockingClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// rmcp's client over a child process running rmcp's server.
type RmcpClient = rmcp::service::RunningService<rmcp::RoleClient, ()>;

fn rmcp_connect(runtime: &Runtime) -> RmcpClient {
    runtime.block_on(async {
        let command = tokio::process::Command::new(RMCP_BIN);
        let transport = TokioChildProcess::new(command).expect("spawn");
        ().serve(transport).await.expect("client handshake")
    })
}

async fn rmcp_batch(client: &RmcpClient, call: Call, n: usize) -> usize {
    let params = bench_rmcp::rmcp_side::echo_params();
    let calls = (0..n).map(|_| rmcp_one(client, call, &params));
    futures::future::join_all(calls)
        .await
        .into_iter()
        .filter(|ok| *ok)
        .count()
}

async fn rmcp_steady(client: &RmcpClient, call: Call, total: u64, window: usize) -> usize {
    let params = bench_rmcp::rmcp_side::echo_params();
    futures::stream::iter(0..total)
        .map(|_| rmcp_one(client, call, &params))
        .buffer_unordered(window)
        .filter(|ok| std::future::ready(*ok))
        .count()
        .await
}

async fn rmcp_one(
    client: &RmcpClient,
    call: Call,
    params: &rmcp::model::CallToolRequestParams,
) -> bool {
    match call {
        Call::Ping => {
            let ping = ClientRequest::PingRequest(PingRequest::default());
            client.peer().send_request(ping).await.is_ok()
        }
        Call::Echo => client.call_tool(params.clone()).await.is_ok(),
    }
}

fn bench_call(c: &mut Criterion, group_name: &str, call: Call) {
    let mut group = c.benchmark_group(group_name);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let rmcp = rmcp_connect(&runtime);
    let mut floor = Floor::spawn(call.floor_line());
    let mut blocking = BlockingClient::connect();
    for n in IN_FLIGHT {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("floor", n), |b| b.iter(|| floor.batch(n)));
        group.bench_function(BenchmarkId::new("ours_adapter", n), |b| {
            b.iter_custom(|rounds| adapter_sample(call, Pace::Batch(n), rounds, false))
        });
        group.bench_function(BenchmarkId::new("ours_poll", n), |b| {
            b.iter_custom(|rounds| adapter_sample(call, Pace::Batch(n), rounds, true))
        });
        group.bench_function(BenchmarkId::new("ours_blocking", n), |b| {
            b.iter(|| blocking.run(&mut Plan::new(call, Pace::Batch(n), 1)))
        });
        group.bench_function(BenchmarkId::new("rmcp", n), |b| {
            b.iter(|| assert_eq!(runtime.block_on(rmcp_batch(&rmcp, call, n)), n))
        });
    }
    let w = STEADY_WINDOW;
    group.throughput(Throughput::Elements(1));
    group.bench_function(BenchmarkId::new("floor_steady", w), |b| {
        b.iter_custom(|rounds| floor.steady(rounds, w))
    });
    group.bench_function(BenchmarkId::new("ours_adapter_steady", w), |b| {
        b.iter_custom(|rounds| adapter_sample(call, Pace::Steady(w), rounds, false))
    });
    group.bench_function(BenchmarkId::new("ours_poll_steady", w), |b| {
        b.iter_custom(|rounds| adapter_sample(call, Pace::Steady(w), rounds, true))
    });
    group.bench_function(BenchmarkId::new("ours_blocking_steady", w), |b| {
        b.iter_custom(|rounds| {
            let start = Instant::now();
            blocking.run(&mut Plan::new(call, Pace::Steady(w), rounds));
            start.elapsed()
        })
    });
    group.bench_function(BenchmarkId::new("rmcp_steady", w), |b| {
        b.iter_custom(|rounds| {
            let start = Instant::now();
            let ok = runtime.block_on(rmcp_steady(&rmcp, call, rounds, w));
            assert_eq!(ok as u64, rounds);
            start.elapsed()
        })
    });
    group.finish();
    runtime.block_on(async {
        let _ = rmcp.cancel().await;
    });
}

/// Where criterion writes its estimates (its own lookup, minus `cargo metadata`).
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("criterion")
}

/// Mean time per element (ns) of one benchmark, from criterion's latest estimates.
fn ns_per_round_trip(group: &str, name: &str, n: usize) -> Option<f64> {
    let path = criterion_dir()
        .join(group)
        .join(name)
        .join(n.to_string())
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    // The estimate criterion prints: the slope when it sampled linearly, else the mean.
    let per_iter = value["slope"]["point_estimate"]
        .as_f64()
        .or_else(|| value["mean"]["point_estimate"].as_f64())?;
    let elements = if name.ends_with("_steady") { 1 } else { n };
    Some(per_iter / elements as f64)
}

/// Prints each contender's throughput as a fraction of the floor's.
fn print_ratios(group: &str) {
    println!("\n{group}: throughput relative to the floor (round trips/s over the floor's)");
    let cases = [("", 1), ("", 64), ("_steady", STEADY_WINDOW)];
    for (suffix, n) in cases {
        let Some(floor) = ns_per_round_trip(group, &format!("floor{suffix}"), n) else {
            println!("  (no floor estimate for {suffix}/{n})");
            continue;
        };
        let mut line = format!(
            "  {:>9} floor {:>8.2} µs",
            format!("{}{}", n, suffix),
            floor / 1e3
        );
        for name in ["ours_adapter", "ours_poll", "ours_blocking", "rmcp"] {
            if let Some(ns) = ns_per_round_trip(group, &format!("{name}{suffix}"), n) {
                line += &format!(" | {name} {:.2} µs = {:.2}", ns / 1e3, floor / ns);
            }
        }
        println!("{line}");
    }
}

/// The machine's load average (Linux), printed with the ratios: on a shared machine the
/// ratios within one run are what to compare, and the load says how far to trust them.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let load_before = load_average();
    let mut c = Criterion::default().configure_from_args();
    bench_call(&mut c, "stdio_ping", Call::Ping);
    bench_call(&mut c, "stdio_tools_call_echo", Call::Echo);
    c.final_summary();
    println!(
        "\nload average (1, 5, 15 min): {load_before} before, {} after",
        load_average()
    );
    print_ratios("stdio_ping");
    print_ratios("stdio_tools_call_echo");
}
