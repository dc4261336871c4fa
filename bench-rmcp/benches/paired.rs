//! The goal ratios measured interleaved (`bench_rmcp::paired`): ours and the other contender
//! alternate in short slices and each pair gives one ratio, so the machine's drift cancels
//! out of it. The criterion benches (`roundtrip`, `http`) time each case on its own; this one
//! prints only ratios, one line per case:
//!
//! - in memory, CPU time: `ours` / `rmcp_current_thread` for the echo `tools/call` and `ping`
//!   at 1 and 64 in flight (the fixtures of `benches/roundtrip.rs`; issue goal: echo ≥ 20×);
//! - with `--features http`, wall time: `ours` / `floor` over Streamable HTTP on loopback for
//!   ping and echo at 1 and 64 in flight (the fixtures of `benches/http.rs`; goal ≥ 0.7);
//! - with `--features http`, wall time, the servers alone: `ours` / `floor` driven by the same
//!   lean client (`bench_rmcp::http_side::lean`), echo at 1 and 64 in flight (goals ≥ 0.8 at
//!   1 in flight, ≥ 0.9 at 64).
//!
//! Run: `cargo bench --manifest-path bench-rmcp/Cargo.toml [--features http] --bench paired`
//! (`-- --pairs N` for another number of pairs; `-- memory` or `-- http` for one part only;
//! `-- --json PATH` also writes every case's quantiles there, for `scripts/bench-report`).

use std::hint::black_box;
use std::time::Duration;

use bench_rmcp::cpu_time::process_cpu_time;
#[cfg(feature = "http")]
use bench_rmcp::paired::Slice;
use bench_rmcp::paired::{batches_for, interleave, timed, PairedRatios};
use bench_rmcp::{echo_params, is_echo_view, rmcp_side, OursPair};
use tokio::runtime::Builder;

const IN_FLIGHT: [usize; 2] = [1, 64];

/// CPU time per in-memory slice: long enough to dwarf the clock read, short against drift.
const MEMORY_SLICE: Duration = Duration::from_millis(40);

struct Args {
    pairs: usize,
    memory: bool,
    http: bool,
    json: Option<String>,
}

/// Every case's ratios, in the order measured.
#[derive(Default)]
struct Results(Vec<(String, &'static str, PairedRatios)>);

impl Results {
    /// Prints one case's line and keeps it.
    fn report(&mut self, case: String, ratio_name: &'static str, ratios: PairedRatios) {
        println!("  {case:<28} {ratio_name}: {}", ratios.summary());
        self.0.push((case, ratio_name, ratios));
    }

    /// `{"<part>: <case>": {"ratio": .., "median": .., ...}}`.
    fn to_json(&self) -> serde_json::Value {
        let cases = self.0.iter().map(|(case, ratio_name, r)| {
            let figures = serde_json::json!({
                "ratio": ratio_name,
                "median": r.median(),
                "q1": r.quantile(0.25),
                "q3": r.quantile(0.75),
                "min": r.quantile(0.0),
                "max": r.quantile(1.0),
                "pairs": r.pairs(),
            });
            (case.clone(), figures)
        });
        serde_json::Value::Object(cases.collect())
    }
}

/// `--pairs N`, and `memory`/`http` to pick one part; cargo's `--bench` flag is ignored.
fn args() -> Args {
    let mut args = Args {
        pairs: 30,
        memory: true,
        http: true,
        json: None,
    };
    let mut picked = Vec::new();
    let mut given = std::env::args().skip(1);
    while let Some(arg) = given.next() {
        match arg.as_str() {
            "--pairs" => {
                args.pairs = given
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--pairs takes a number");
            }
            "--json" => args.json = Some(given.next().expect("--json takes a path")),
            "memory" | "http" => picked.push(arg),
            _ => {}
        }
    }
    if !picked.is_empty() {
        args.memory = picked.iter().any(|p| p == "memory");
        args.http = picked.iter().any(|p| p == "http");
    }
    args
}

/// In memory: ours (`OursPair`, the `ours` reader) against rmcp on a current-thread runtime,
/// both on process CPU time.
fn memory(pairs: usize, results: &mut Results) {
    println!(
        "in memory, interleaved slices of ~{MEMORY_SLICE:?} CPU each, ours/rmcp_current_thread:"
    );
    let runtime = Builder::new_current_thread().enable_all().build().unwrap();
    let client = runtime.block_on(rmcp_side::connect());
    let ours_params = echo_params();
    let rmcp_params = rmcp_side::echo_params();
    for (call, method) in [("echo", "tools/call"), ("ping", "ping")] {
        for n in IN_FLIGHT {
            let mut pair = OursPair::connected();
            let params = (call == "echo").then_some(&ours_params);
            let mut ours_batch = || {
                let mut ok = 0;
                pair.round_trips(black_box(n), method, params, |r| {
                    ok += usize::from(is_echo_view(r));
                });
                assert!(call != "echo" || ok == n, "ours: echo lost");
            };
            let mut rmcp_batch = || {
                let done = match call {
                    "echo" => runtime.block_on(rmcp_side::echo_calls(&client, n, &rmcp_params)),
                    _ => runtime.block_on(rmcp_side::pings(&client, n)),
                };
                assert_eq!(done, n, "rmcp: calls failed");
            };
            let ours_count = batches_for(MEMORY_SLICE, process_cpu_time, &mut ours_batch);
            let rmcp_count = batches_for(MEMORY_SLICE, process_cpu_time, &mut rmcp_batch);
            let per_batch = n as u64;
            let ratios = interleave(
                pairs,
                || timed(ours_count, per_batch, process_cpu_time, &mut ours_batch),
                || timed(rmcp_count, per_batch, process_cpu_time, &mut rmcp_batch),
            );
            results.report(
                format!("memory: {call}, {n} in flight"),
                "ours/rmcp",
                ratios,
            );
        }
    }
}

/// Over HTTP: ours against the bare hyper floor, wall time (each sample connects and, for
/// ours, initializes a session first, outside its timing, as in `benches/http.rs`).
#[cfg(feature = "http")]
fn http(pairs: usize, results: &mut Results) {
    use bench_rmcp::http_side::{floor, ours, Call};
    /// Wall time per HTTP slice: many exchanges, against a connection set-up per slice.
    const HTTP_SLICE: Duration = Duration::from_millis(150);
    println!("Streamable HTTP, interleaved slices of ~{HTTP_SLICE:?} wall each, ours/floor:");
    let floor_server = floor::spawn_server();
    let ours_server = ours::spawn_server();
    for (call_name, call) in [("ping", Call::Ping), ("echo", Call::Echo)] {
        let body = floor::body(call);
        for n in IN_FLIGHT {
            let floor_sample = |rounds| floor::sample(&floor_server, &body, n, rounds);
            let ours_sample = |rounds| ours::sample(&ours_server, call, n, rounds);
            let rounds_for = |sample: &dyn Fn(u64) -> Duration| {
                let took = sample(20).as_secs_f64() / 20.0;
                ((HTTP_SLICE.as_secs_f64() / took.max(1e-9)) as u64).max(1)
            };
            let (ours_rounds, floor_rounds) = (rounds_for(&ours_sample), rounds_for(&floor_sample));
            let slice = |sample: &dyn Fn(u64) -> Duration, rounds: u64| Slice {
                round_trips: rounds * n as u64,
                time: sample(rounds),
            };
            let ratios = interleave(
                pairs,
                || slice(&ours_sample, ours_rounds),
                || slice(&floor_sample, floor_rounds),
            );
            results.report(
                format!("http: {call_name}, {n} in flight"),
                "ours/floor",
                ratios,
            );
        }
    }
}

/// The servers alone over HTTP: ours against the bare hyper floor, both driven by the lean
/// client (connected and through the handshake once, before the pairs), wall time.
#[cfg(feature = "http")]
fn server_only(pairs: usize, results: &mut Results) {
    use bench_rmcp::http_side::lean::{LeanClient, Target};
    use bench_rmcp::http_side::{floor, ours};
    /// Wall time per slice, as for the pair figures.
    const SLICE: Duration = Duration::from_millis(150);
    println!(
        "Streamable HTTP, servers alone (lean client), slices of ~{SLICE:?} wall, ours/floor:"
    );
    let ours_server = ours::spawn_server();
    let floor_server = floor::spawn_server();
    for n in IN_FLIGHT {
        let mut ours_client = LeanClient::connect(ours_server.url(), Target::Mcp, n).expect("ours");
        let mut floor_client =
            LeanClient::connect(floor_server.url(), Target::Floor, n).expect("floor");
        let rounds_for = |client: &mut LeanClient| {
            let (_, took) = client.sample(20).expect("warm-up");
            let per_round = took.as_secs_f64() / 20.0;
            ((SLICE.as_secs_f64() / per_round.max(1e-9)) as u64).max(1)
        };
        let (ours_rounds, floor_rounds) =
            (rounds_for(&mut ours_client), rounds_for(&mut floor_client));
        let slice = |client: &mut LeanClient, rounds: u64| {
            let (exchanges, time) = client.sample(rounds).expect("lean sample");
            Slice {
                round_trips: exchanges as u64,
                time,
            }
        };
        let ratios = interleave(
            pairs,
            || slice(&mut ours_client, ours_rounds),
            || slice(&mut floor_client, floor_rounds),
        );
        results.report(
            format!("server only: echo, {n} in flight"),
            "ours/floor",
            ratios,
        );
    }
}

#[cfg(not(feature = "http"))]
fn server_only(_pairs: usize, _results: &mut Results) {}

#[cfg(not(feature = "http"))]
fn http(_pairs: usize, _results: &mut Results) {
    println!("Streamable HTTP: skipped (build with --features http)");
}

fn main() {
    let args = args();
    let mut results = Results::default();
    if args.memory {
        memory(args.pairs, &mut results);
    }
    if args.http {
        http(args.pairs, &mut results);
        server_only(args.pairs, &mut results);
    }
    if let Some(path) = args.json {
        let text = serde_json::to_string_pretty(&results.to_json()).expect("json");
        std::fs::write(&path, text).expect("write --json");
    }
}
